import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvgenError, describeError } from '@envgen/core';
import type { Profile } from './types.js';

/** The profile settings a profile file may set. */
export type ProfileOverrideValues = Partial<Pick<Profile, 'python' | 'env' | 'aptPackages' | 'install' | 'testArgs' | 'testGlobs' | 'deselect' | 'timeoutMs' | 'testTimeoutMs'>> & {
  /** The directory of the Python project inside the repo to test (`libs/core`), `.` for the root. */
  project?: string;
};

/** Settings from one profile file, applied over detection; `source` ends up in provenance. */
export interface ProfileOverride {
  source: string;
  values: ProfileOverrideValues;
}

/** The `configs/profiles` directory shipped with envgen (same relative place from src/ and dist/). */
export function shippedProfilesDir(): string {
  return fileURLToPath(new URL('../../../configs/profiles/', import.meta.url));
}

const STRING_LIST_KEYS = ['aptPackages', 'install', 'testArgs', 'testGlobs', 'deselect'] as const;
const ALLOWED_KEYS = ['comment', 'python', 'project', 'env', ...STRING_LIST_KEYS, 'timeoutMs', 'testTimeoutMs'];

/**
 * Checks the parsed JSON of a profile file and returns its settings. `comment` (a string) is
 * allowed and ignored.
 *
 * @throws EnvgenError `config-invalid` naming the file and the bad key.
 */
export function validateProfileOverrides(data: unknown, source: string): ProfileOverride {
  const bad = (key: string, expected: string): EnvgenError =>
    new EnvgenError('config-invalid', `${source}: "${key}" must be ${expected}. See configs/profiles/README.md for the format.`);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw bad('(top level)', 'a JSON object');
  const record = data as Record<string, unknown>;
  const values: ProfileOverrideValues = {};
  for (const [key, value] of Object.entries(record)) {
    if (!ALLOWED_KEYS.includes(key)) {
      throw new EnvgenError('config-invalid', `${source}: unknown key "${key}"; allowed keys: ${ALLOWED_KEYS.join(', ')}. See configs/profiles/README.md.`);
    }
    if (key === 'comment') {
      if (typeof value !== 'string') throw bad(key, 'a string');
    } else if (key === 'python') {
      if (typeof value !== 'string' || value === '') throw bad(key, 'a non-empty string (an interpreter path)');
      values.python = value;
    } else if (key === 'project') {
      if (typeof value !== 'string' || value === '' || value.startsWith('/') || value.split('/').includes('..')) throw bad(key, 'a directory inside the repo (`libs/core`, or `.` for the root)');
      values.project = value.replace(/^\.\/+/, '').replace(/\/+$/, '') || '.';
    } else if (key === 'timeoutMs' || key === 'testTimeoutMs') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw bad(key, 'a positive integer (milliseconds)');
      values[key] = value;
    } else if (key === 'env') {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((item) => typeof item === 'string')) {
        throw bad(key, 'an object of string values');
      }
      values.env = value as Record<string, string>;
    } else {
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw bad(key, 'an array of strings');
      values[key as (typeof STRING_LIST_KEYS)[number]] = value as string[];
    }
  }
  return { source, values };
}

/** Options of {@link loadProfileOverrides}. */
export interface LoadProfileOverridesOptions {
  /** Directories searched in order (e.g. the shipped `configs/profiles`, then the user's). */
  profilesDirs: string[];
}

/**
 * Reads `<dir>/<owner>__<name>.json` from every profile directory that has one, in order, so later
 * directories override earlier ones. Missing files are skipped.
 *
 * @throws EnvgenError `config-invalid` for unreadable JSON or a bad key.
 */
export async function loadProfileOverrides(owner: string, name: string, options: LoadProfileOverridesOptions): Promise<ProfileOverride[]> {
  const found: ProfileOverride[] = [];
  for (const dir of options.profilesDirs) {
    const path = join(dir, `${owner}__${name}.json`);
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) continue;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new EnvgenError('config-invalid', `${path} is not valid JSON (${describeError(error)}); fix or delete it.`, { cause: error });
    }
    found.push(validateProfileOverrides(data, `profile file ${path}`));
  }
  return found;
}
