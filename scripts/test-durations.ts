// Writes test/durations.json, the seconds each test file took, from a vitest JSON report of a
// whole run: `npx vitest run --reporter=json --outputFile=/tmp/vitest.json; node
// --import tsx scripts/test-durations.ts /tmp/vitest.json`. vitest.config.ts starts the longest first.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const [report] = process.argv.slice(2);
if (report === undefined) {
  console.error('usage: node --import tsx scripts/test-durations.ts VITEST_JSON_REPORT');
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
const { testResults } = JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ name: string; startTime: number; endTime: number }> };
const durations = Object.fromEntries(
  testResults
    .map((file) => [relative(root, file.name), Math.round((file.endTime - file.startTime) / 1000)])
    .filter(([, seconds]) => seconds >= 1)
    .sort(([a], [b]) => a.localeCompare(b)),
);
writeFileSync(new URL('../test/durations.json', import.meta.url), `${JSON.stringify(durations, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(durations).length} files of 1 s or more`);
