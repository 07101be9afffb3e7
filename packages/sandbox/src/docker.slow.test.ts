import { describeError } from '@envgen/core';
import { describeSandboxContract } from './contract.js';
import { createSandboxProvider } from './provider.js';

const required = process.env.CI === 'true' || process.env.ENVGEN_REQUIRE_DOCKER === '1';
const missing = await createSandboxProvider('docker')
  .ensureAvailable()
  .then(
    () => undefined,
    (error: unknown) => describeError(error),
  );

if (missing && required) {
  throw new Error(
    `Docker sandbox tests need a Docker engine with the envgen image (CI=true or ENVGEN_REQUIRE_DOCKER=1): ${missing}. Start one with scripts/start-docker.sh.`,
  );
}
if (missing) {
  // eslint-disable-next-line no-console -- say plainly why a whole suite is skipped
  console.warn(`Skipping the docker sandbox tests: ${missing}. Start an engine with scripts/start-docker.sh to run them.`);
}

describeSandboxContract('docker', { isolated: true, skipReason: missing });
