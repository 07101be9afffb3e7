import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { createLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';

/** Flags every command accepts. */
export interface GlobalOptions {
  home?: string;
  config?: string;
  sandbox?: string;
  logLevel?: string;
  json?: boolean;
}

/** What a command handler works with: resolved settings and a logger. */
export interface CommandContext {
  settings: Settings;
  logger: Logger;
}

/** Resolves settings (flags > ENVGEN_* > config file > defaults) and makes the CLI's logger. */
export function createContext(options: GlobalOptions, env: Record<string, string | undefined> = process.env): CommandContext {
  const settings = resolveConfig({
    env,
    configFile: options.config,
    flags: {
      home: options.home,
      sandbox: options.sandbox as Settings['sandbox'] | undefined,
      logLevel: options.logLevel as Settings['logLevel'] | undefined,
    },
  });
  const logger = createLogger({ level: settings.logLevel, format: 'human' });
  return { settings, logger };
}
