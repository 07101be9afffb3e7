import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const sandboxKind = z.enum(['local', 'docker', 'none']);
const logLevel = z.enum(['debug', 'info', 'warn', 'error', 'silent']);

/** Per-repo profile overrides as users write them (validated in detail by @envgen/repo). */
const profileOverride = z.record(z.string(), z.unknown());

/** Every setting envgen reads, as a config file may hold it (all optional). */
export const settingsSchema = z
  .object({
    home: z.string().min(1).describe('cache and data directory (mirrors, worktrees, baselines, pool)'),
    sandbox: sandboxKind.describe('where untrusted code runs: local (bubblewrap), docker, or none'),
    githubUrl: z.url().describe('base URL that owner/name repos are cloned from'),
    dockerImage: z.string().min(1).describe('image of the docker sandbox'),
    logLevel: logLevel,
    profilesDirs: z.array(z.string()).describe('extra directories of <owner>__<name>.json profile files'),
    profiles: z.record(z.string(), profileOverride).describe('per-repo profile overrides keyed by owner/name'),
  })
  .partial()
  .strict();

export type SettingsInput = z.infer<typeof settingsSchema>;

/** The resolved, typed settings every command works from. */
export interface Settings {
  home: string;
  sandbox: 'local' | 'docker' | 'none';
  githubUrl: string;
  dockerImage: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  profilesDirs: string[];
  profiles: Record<string, Record<string, unknown>>;
  /** The config file that was read, if any. */
  configFile: string | null;
}

/** Defaults, given the process environment (for the home directory). */
export function defaultSettings(env: Record<string, string | undefined>): Omit<Settings, 'configFile'> {
  const cacheRoot = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return {
    home: join(cacheRoot, 'envgen'),
    sandbox: 'local',
    githubUrl: 'https://github.com',
    dockerImage: 'envgen/python:bookworm',
    logLevel: 'info',
    profilesDirs: [],
    profiles: {},
  };
}

/** ENVGEN_* variables and the setting each one sets. The environment is read only here. */
export const ENV_VARIABLES = {
  ENVGEN_HOME: 'home',
  ENVGEN_SANDBOX: 'sandbox',
  ENVGEN_GITHUB_URL: 'githubUrl',
  ENVGEN_DOCKER_IMAGE: 'dockerImage',
  ENVGEN_LOG_LEVEL: 'logLevel',
  ENVGEN_PROFILES_DIRS: 'profilesDirs',
} as const satisfies Record<string, keyof SettingsInput>;
