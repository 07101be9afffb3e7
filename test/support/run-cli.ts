// Runs the envgen CLI from sources in a child process (tests that must kill a real run).
// Usage: node --conditions=@envgen/source --import tsx test/support/run-cli.ts <envgen args...>
import { main } from '@envgen/cli';

process.exitCode = await main(process.argv.slice(2));
