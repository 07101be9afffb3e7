import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { EnvgenError, describeError } from '@envgen/core';
import type { z } from 'zod';
import { ENV_VARIABLES, defaultSettings, settingsSchema } from './settings.js';
import type { Settings, SettingsInput } from './settings.js';

export interface ResolveConfigOptions {
  /** Settings given as command-line flags (highest precedence). */
  flags?: SettingsInput;
  /** Explicit config file (`--config`); else ENVGEN_CONFIG, ./envgen.config.json, ~/.config/envgen/config.json. */
  configFile?: string;
  /** The process environment; only ENVGEN_*, HOME and XDG_* are read. */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

function formatIssues(error: z.ZodError, where: string): string {
  const lines = error.issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `  ${key}: ${issue.message}`;
  });
  return `invalid settings in ${where}:\n${lines.join('\n')}`;
}

function parseInput(value: unknown, where: string): SettingsInput {
  const parsed = settingsSchema.safeParse(value);
  if (!parsed.success) {
    throw new EnvgenError('config-invalid', `${formatIssues(parsed.error, where)}\nFix or remove these keys; \`envgen --help\` lists the settings.`);
  }
  return parsed.data;
}

function readEnvironment(env: Record<string, string | undefined>): SettingsInput {
  const raw: Record<string, unknown> = {};
  for (const [variable, key] of Object.entries(ENV_VARIABLES)) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    raw[key] = key === 'profilesDirs' ? value.split(delimiter).filter(Boolean) : value;
  }
  return parseInput(raw, 'the environment (ENVGEN_* variables)');
}

function findConfigFile(options: ResolveConfigOptions, env: Record<string, string | undefined>, cwd: string): string | null {
  const explicit = options.configFile ?? env.ENVGEN_CONFIG;
  if (explicit) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) {
      throw new EnvgenError('config-invalid', `config file ${path} does not exist; check the --config flag or ENVGEN_CONFIG.`);
    }
    return path;
  }
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  const candidates = [join(cwd, 'envgen.config.json'), join(configHome, 'envgen', 'config.json')];
  return candidates.find((path) => existsSync(path)) ?? null;
}

function readConfigFile(path: string): SettingsInput {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new EnvgenError('config-invalid', `cannot read config file ${path}: ${describeError(error)}. It must be a JSON object of settings.`, { cause: error });
  }
  return parseInput(value, path);
}

/**
 * Resolves settings with precedence flags > ENVGEN_* environment > config file > defaults,
 * validating each layer and naming the bad key and its source on error.
 */
export function resolveConfig(options: ResolveConfigOptions = {}): Settings {
  const env = options.env ?? {};
  const cwd = options.cwd ?? process.cwd();
  const configFile = findConfigFile(options, env, cwd);
  const layers: SettingsInput[] = [
    configFile ? readConfigFile(configFile) : {},
    readEnvironment(env),
    parseInput(stripUndefined(options.flags ?? {}), 'the command-line flags'),
  ];
  const merged: Omit<Settings, 'configFile'> = { ...defaultSettings(env) };
  for (const layer of layers) Object.assign(merged, stripUndefined(layer));
  const home = isAbsolute(merged.home) ? merged.home : resolve(cwd, merged.home);
  return { ...merged, home, configFile };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as Partial<T>;
}
