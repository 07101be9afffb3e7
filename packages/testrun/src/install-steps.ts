import { EnvgenError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import type { PytestSandbox } from './pytest-sandbox.js';
import { outputTail } from './run-pytest.js';

/**
 * Runs the profile's `install` commands (`sh -c`, in order, in the worktree root) inside the
 * sandbox, e.g. to build extensions before the tests. Throws EnvgenError `test-run-failed`
 * with the command's output when one fails or times out.
 */
export async function runInstallSteps(target: PytestSandbox, profile: Profile, options: { logger?: Logger } = {}): Promise<void> {
  const logger = options.logger ?? silentLogger;
  for (const command of profile.install) {
    logger.debug('running install step', { command });
    const exec = await target.sandbox.exec(['sh', '-c', command], { env: profile.env, limits: { timeoutMs: profile.timeoutMs } });
    if (exec.status === 'exited' && exec.exitCode === 0) continue;
    throw new EnvgenError(
      'test-run-failed',
      `Install step \`${command}\` failed (${exec.status}, exit ${exec.exitCode}); fix the profile's install commands or the packages they need.\n${outputTail(exec)}`,
    );
  }
}
