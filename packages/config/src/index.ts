export { resolveConfig } from './resolve-config.js';
export type { ResolveConfigOptions } from './resolve-config.js';
export { settingsSchema, defaultSettings, ENV_VARIABLES } from './settings.js';
export type { Settings, SettingsInput } from './settings.js';
