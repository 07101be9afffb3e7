export { main, EXIT } from './main.js';
export { runEnv, resolveProfile, openSandboxProvider } from './env-command.js';
export type { EnvOptions, EnvReport } from './env-command.js';
export { formatEnvReport, verdict } from './format-env.js';
export { createContext } from './context.js';
export { createProgress } from './progress.js';
export type { Progress, ProgressOptions } from './progress.js';
export type { CommandContext, GlobalOptions } from './context.js';
