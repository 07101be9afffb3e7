export { createSandboxProvider } from './provider.js';
export type { SandboxProviderOptions } from './provider.js';
export type { DockerProviderOptions } from './docker.js';
export { DEFAULT_DOCKER_IMAGE } from './docker.js';
export { SANDBOX_WORKDIR, uniqueTarget } from './exec-settings.js';
export { DEFAULT_LIMITS, LIMIT_COUNTERS_ENV } from './types.js';
export type {
  ExecOptions,
  ExecResult,
  ExecStatus,
  Sandbox,
  SandboxKind,
  SandboxLimits,
  SandboxMount,
  SandboxOptions,
  SandboxProvider,
} from './types.js';
