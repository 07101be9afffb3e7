import { describeError } from '@envgen/core';
import { createSandboxProvider } from '@envgen/sandbox';

/**
 * Why tests of the docker backend cannot run here (no engine answers, or no envgen image),
 * or undefined when they can. In CI (or with ENVGEN_REQUIRE_DOCKER=1) a missing engine is
 * an error, not a skip: scripts/test.sh starts one.
 */
export async function dockerSkipReason(what: string): Promise<string | undefined> {
  const required = process.env.CI === 'true' || process.env.ENVGEN_REQUIRE_DOCKER === '1';
  const missing = await createSandboxProvider('docker')
    .ensureAvailable()
    .then(
      () => undefined,
      (error: unknown) => describeError(error),
    );
  if (missing && required) {
    throw new Error(`${what} need a Docker engine with the envgen image (CI=true or ENVGEN_REQUIRE_DOCKER=1): ${missing}. Start one with scripts/start-docker.sh.`);
  }
  if (missing) {
    // eslint-disable-next-line no-console -- say plainly why a whole suite is skipped
    console.warn(`Skipping ${what}: ${missing}. Start an engine with scripts/start-docker.sh to run them.`);
  }
  return missing;
}
