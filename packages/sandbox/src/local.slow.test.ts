import { describeSandboxContract } from './contract.js';

describeSandboxContract('local', { isolated: true });
