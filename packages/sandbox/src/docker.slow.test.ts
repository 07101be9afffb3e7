import { dockerSkipReason } from '../../../test/support/docker.js';
import { describeSandboxContract } from './contract.js';

const missing = await dockerSkipReason('the docker sandbox tests');

describeSandboxContract('docker', { isolated: true, skipReason: missing });
