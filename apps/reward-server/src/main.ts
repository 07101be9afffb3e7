import { parseArgs } from 'node:util';
import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { describeError, isEnvgenError } from '@envgen/core';
import { DEFAULT_REWARD_PORT, SOLVE_LEVELS, closeOnSignals, createServiceLogger, readServeFlags, startRewardServer } from '@envgen/reward-service';
import type { RewardServer } from '@envgen/reward-service';

/** Exit codes: ok, failed, usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Where the binary writes and what it reads; tests pass their own. */
export interface ServerIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Close on SIGINT/SIGTERM (default true). */
  handleSignals?: boolean;
  /** Called once the server listens. */
  onListening?: (server: RewardServer) => void;
}

const defaultIo: ServerIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

const HELP = `Usage: envgen-reward-server [options]

Serves the envgen reward API (the same server as \`envgen serve\`) on the pool under --home.
Logs one JSON line per request on stderr; prints {"url": ...} on stdout once listening;
stops gracefully on SIGINT/SIGTERM.

Options:
  --home <dir>              cache and data directory (env ENVGEN_HOME)
  --config <file>           config file (env ENVGEN_CONFIG)
  --host <addr>             interface to bind (default 127.0.0.1)
  --port <n>                port (default ${DEFAULT_REWARD_PORT}; 0 picks a free one)
  --token <secret>          require Authorization: Bearer <secret> (env ENVGEN_SERVE_TOKEN)
  --solved-by <level>       ${SOLVE_LEVELS.join(', ')} (default entity)
  --solved-threshold <x>    minimum score that counts as solved (default the maximum)
  --log-level <level>       debug, info, warn, error, silent (env ENVGEN_LOG_LEVEL)
  -h, --help                this text

Example:
  $ ENVGEN_SERVE_TOKEN=s3cret envgen-reward-server --host 0.0.0.0 --port 8750
`;

/** Runs the reward server binary on `argv` until it is shut down; returns the exit code, never exits. */
export async function main(argv: string[], io: ServerIo = defaultIo): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        home: { type: 'string' },
        config: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'solved-by': { type: 'string' },
        'solved-threshold': { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    io.stderr(`envgen-reward-server: ${describeError(error)}\n(run with --help for usage)\n`);
    return EXIT.usage;
  }
  if (values['help'] === true) {
    io.stdout(HELP);
    return EXIT.ok;
  }
  const flag = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  try {
    const settings = resolveConfig({
      env: io.env,
      configFile: flag('config'),
      flags: { home: flag('home'), logLevel: flag('log-level') as Settings['logLevel'] | undefined },
    });
    const serve = readServeFlags(
      { host: flag('host'), port: flag('port'), token: flag('token'), solvedBy: flag('solved-by'), solvedThreshold: flag('solved-threshold') },
      io.env,
    );
    const logger = createServiceLogger(io.stderr, settings.logLevel);
    const server = await startRewardServer({ home: settings.home, ...serve, logger });
    if (io.handleSignals ?? true) closeOnSignals(server, { logger });
    io.stdout(`${JSON.stringify({ url: server.url, home: settings.home })}\n`);
    io.onListening?.(server);
    await server.closed;
    logger.flush();
    return EXIT.ok;
  } catch (error) {
    if (isEnvgenError(error)) {
      io.stderr(`envgen-reward-server: ${error.message}\n`);
      return error.code === 'usage' || error.code === 'config-invalid' ? EXIT.usage : EXIT.failed;
    }
    io.stderr(`envgen-reward-server: internal error: ${describeError(error)}\n`);
    return EXIT.failed;
  }
}
