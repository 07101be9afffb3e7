import { posix } from 'node:path';
import { ERROR_CODES, EnvgenError, describeError } from '@envgen/core';
import type { Location } from './types.js';

/** Options for reading a `localization_finish` call. */
export interface NormalizeLocationsOptions {
  /**
   * Absolute path of the checkout the agent worked in. Absolute paths inside it are made
   * repo-relative; without it every absolute path is rejected.
   */
  repoRoot?: string;
}

/** The outcome of reading a `localization_finish` call: its locations, or why it is invalid. */
export type NormalizeLocationsResult =
  | { ok: true; locations: Location[] }
  /**
   * `field`: the path of the value at fault inside the arguments (`locations`,
   * `locations[2]`, `locations[2].file`); absent when the arguments as a whole are.
   */
  | { ok: false; reason: string; field?: string };

type Invalid = { ok: false; reason: string; field?: string };
type Read<T> = { ok: true; value: T } | Invalid;

const SHAPE = 'send {"locations": [{"file": "path/to/file.py", "class_name": "C", "function_name": "f"}]}';

/**
 * Validates and normalizes the arguments of a `localization_finish` call.
 *
 * Accepts the arguments object or the JSON string models send (a JSON-string `locations`
 * too). The call is invalid as a whole — never silently trimmed — when it is missing,
 * not an object, has no non-empty `locations` array, or any entry breaks the schema: not
 * an object, no string `file`, a path that is absolute outside `repoRoot`, leaves the repo
 * through `..`, or names no file, a `class_name`/`function_name` that is neither a string
 * nor null. The reason says which entry and what to send instead, so a runner can return
 * it to the agent.
 *
 * Normalization: paths become repo-relative (`./` and empty segments dropped, inner `..`
 * resolved, trailing `/` dropped); names are trimmed and empty names mean "absent"; a
 * dotted `function_name` without a class (`Class.method`) is split into class and method,
 * and a `function_name` repeating its `class_name` prefix loses it; exact duplicates are
 * dropped, first occurrence kept. Unknown keys are ignored.
 */
export function normalizeLocations(
  raw: unknown,
  options: NormalizeLocationsOptions = {},
): NormalizeLocationsResult {
  const root = readRepoRoot(options.repoRoot);
  if (raw === null || raw === undefined) return invalid('no localization_finish call');
  const args = parseIfString(raw, 'the arguments');
  if (!args.ok) return args;
  if (!isRecord(args.value)) return invalid(`the arguments are not an object; ${SHAPE}`);
  const list = parseIfString(args.value['locations'], 'locations', 'locations');
  if (!list.ok) return list;
  if (!Array.isArray(list.value)) return invalid(`locations is missing or not an array; ${SHAPE}`, 'locations');
  if (list.value.length === 0) return invalid('locations is empty; name at least one file', 'locations');

  const locations: Location[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of list.value.entries()) {
    const location = readLocation(entry, `locations[${index}]`, root);
    if (!location.ok) return location;
    const key = JSON.stringify([location.value.file, location.value.class_name, location.value.function_name]);
    if (seen.has(key)) continue;
    seen.add(key);
    locations.push(location.value);
  }
  return { ok: true, locations };
}

function invalid(reason: string, field?: string): Invalid {
  return field === undefined ? { ok: false, reason } : { ok: false, reason, field };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readRepoRoot(repoRoot: string | undefined): string | undefined {
  if (repoRoot === undefined) return undefined;
  if (!posix.isAbsolute(repoRoot)) {
    throw new EnvgenError(
      ERROR_CODES.internal,
      `repoRoot must be an absolute path, got "${repoRoot}"; pass the checkout's absolute path`,
    );
  }
  return posix.normalize(repoRoot);
}

function parseIfString(value: unknown, what: string, field?: string): Read<unknown> {
  if (typeof value !== 'string') return { ok: true, value };
  try {
    return { ok: true, value: JSON.parse(value) as unknown };
  } catch (error) {
    return invalid(`${what} must be JSON when sent as a string (${describeError(error)}); ${SHAPE}`, field);
  }
}

function readLocation(entry: unknown, where: string, root: string | undefined): Read<Location> {
  if (!isRecord(entry)) return invalid(`${where} is not an object; ${SHAPE}`, where);
  const rawFile = entry['file'];
  if (typeof rawFile !== 'string') return invalid(`${where}.file is missing or not a string`, `${where}.file`);
  const file = normalizePath(rawFile, where, root);
  if (!file.ok) return file;
  const className = readName(entry['class_name'], `${where}.class_name`);
  if (!className.ok) return className;
  const functionName = readName(entry['function_name'], `${where}.function_name`);
  if (!functionName.ok) return functionName;

  let class_name = className.value;
  let function_name = functionName.value;
  if (function_name !== null && class_name === null && function_name.includes('.')) {
    const dot = function_name.indexOf('.');
    class_name = nonEmpty(function_name.slice(0, dot));
    function_name = nonEmpty(function_name.slice(dot + 1));
  } else if (function_name !== null && class_name !== null && function_name.startsWith(`${class_name}.`)) {
    function_name = nonEmpty(function_name.slice(class_name.length + 1));
  }
  return { ok: true, value: { file: file.value, class_name, function_name } };
}

function readName(value: unknown, where: string): Read<string | null> {
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== 'string') return invalid(`${where} must be a string or null`, where);
  return { ok: true, value: nonEmpty(value) };
}

function nonEmpty(text: string): string | null {
  const trimmed = text.trim();
  return trimmed === '' ? null : trimmed;
}

function normalizePath(raw: string, where: string, root: string | undefined): Read<string> {
  const field = `${where}.file`;
  let path = raw.trim();
  if (posix.isAbsolute(path)) {
    if (root === undefined) {
      return invalid(`${where}.file "${raw}" is absolute; give the path relative to the repo root`, field);
    }
    // relative() works on normalized absolute paths; outside the root it starts with `..`.
    path = posix.relative(root, path);
    if (path === '' || path === '..' || path.startsWith('../')) {
      return invalid(`${where}.file "${raw}" is not inside the repo ${root}; give a path to a file in the repo`, field);
    }
  }
  const normalized = posix.normalize(path).replace(/\/+$/, '');
  if (normalized === '..' || normalized.startsWith('../')) {
    return invalid(`${where}.file "${raw}" leaves the repo; give the path relative to the repo root`, field);
  }
  if (normalized === '.' || normalized === '') return invalid(`${where}.file "${raw}" names no file`, field);
  return { ok: true, value: normalized };
}
