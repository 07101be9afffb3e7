import { randomBytes } from 'node:crypto';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { RunningCommand } from './host-exec.js';
import type { ExecOptions, ExecResult, Sandbox, SandboxKind } from './types.js';

/**
 * Sandbox bookkeeping shared by every backend: numbered execs, commands still running at
 * dispose are killed (status `killed`), and exec after dispose is refused.
 */
export function createSandboxHandle(input: {
  kind: SandboxKind;
  workdir: string;
  logger: Logger;
  start(argv: string[], options: ExecOptions, execId: string): Promise<RunningCommand>;
  release(): Promise<void>;
}): Sandbox {
  const running = new Set<RunningCommand>();
  let disposed: Promise<void> | undefined;
  return {
    kind: input.kind,
    workdir: input.workdir,
    async exec(argv, options = {}): Promise<ExecResult> {
      if (disposed) throw new EnvgenError(ERROR_CODES.usage, 'This sandbox was disposed: open a new one to run more commands.');
      if (argv.length === 0) throw new EnvgenError(ERROR_CODES.usage, 'Sandbox exec needs a non-empty argv.');
      const execId = randomBytes(8).toString('hex');
      const command = await input.start(argv, options, execId);
      running.add(command);
      try {
        const result = await command.result;
        input.logger.debug('sandbox exec', {
          argv0: argv[0],
          status: result.status,
          exitCode: result.exitCode,
          ms: result.durationMs,
        });
        return result;
      } finally {
        running.delete(command);
      }
    },
    dispose() {
      disposed ??= (async () => {
        for (const command of running) command.kill();
        await Promise.allSettled([...running].map((command) => command.result));
        await input.release();
      })();
      return disposed;
    },
  };
}
