import type { FileChanges } from '@envgen/core';

/**
 * The gold localization of one file, as the labeler stores it: which entities and modules
 * the FIX edits or adds. Strings are `path/to/file.py:Class.method`, `path:func`, `path:Class`.
 */
export type GoldFileChanges = FileChanges;

/** One location of a `localization_finish` call, after {@link normalizeLocations}. */
export interface Location {
  /** Repo-relative path, no `./`, no `..`, no empty segments. */
  file: string;
  class_name?: string | null;
  function_name?: string | null;
}

/** The three levels a localization is scored on. */
export interface LocalizationSets {
  files: Set<string>;
  modules: Set<string>;
  entities: Set<string>;
}

/** A localization reward with its per-level F1s. */
export interface LocalizationReward {
  /** `file + module + entity`, 0–3. */
  reward: number;
  file: number;
  module: number;
  entity: number;
  /** False when there was no valid `localization_finish` call (every score is then 0). */
  valid: boolean;
  /** Why the call is invalid; only set when `valid` is false. */
  reason?: string;
}
