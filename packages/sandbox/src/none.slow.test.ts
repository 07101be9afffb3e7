import { describeSandboxContract } from './contract.js';

// No isolation by design: only the limits, output and worktree parts of the contract apply.
describeSandboxContract('none', { isolated: false });
