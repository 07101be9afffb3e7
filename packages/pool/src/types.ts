import type { Instance, Logger, RejectionReason } from '@envgen/core';

/** Options of {@link openPool}. */
export interface OpenPoolOptions {
  logger?: Logger;
  /** How long a writer waits for another process's write lock before failing (ms, default 10 000). */
  busyTimeoutMs?: number;
}

/** Which instances a listing or count covers; absent fields match everything. */
export interface PoolFilter {
  /** `owner/name`. */
  repo?: string;
  strategy?: string;
  family?: Instance['family'];
}

/** A filter with a window, for {@link Pool.listInstances}. Rows come in `instance_id` order. */
export interface ListOptions extends PoolFilter {
  limit?: number;
  offset?: number;
}

/** The outcomes recorded for one instance. */
export interface InstanceStats {
  attempts: number;
  solved: number;
  /** Mean reward over all attempts; `null` before the first attempt. */
  meanReward: number | null;
  /** `solved / attempts`; `null` before the first attempt. */
  solveRate: number | null;
}

/** One listed instance with its outcomes. */
export interface PoolEntry {
  instance: Instance;
  stats: InstanceStats;
}

/** What {@link Pool.addInstance} did. Every case is expected, so it is data. */
export type AddResult =
  | { status: 'added' }
  /** An instance with this id is already in the pool (same repo, commit, strategy and patch). */
  | { status: 'exists' }
  /** Another instance of the same repo and commit has the identical patch (another strategy made the same bug). */
  | { status: 'duplicate-patch'; duplicateOf: string };

/** One scored attempt at an instance. */
export interface AttemptOutcome {
  reward: number;
  solved: boolean;
}

/**
 * Identifies a rejected candidate: the same patch on the same code, validated the same way,
 * always gets the same verdict, so a resumed run skips it.
 */
export interface RejectionKey {
  /** `owner/name`. */
  repo: string;
  commit: string;
  /** Hash of everything besides the patch that decides a verdict (the profile, check thresholds). */
  profileHash: string;
  /** `sha256` of the candidate's patch (see {@link hashPatch}). */
  patchHash: string;
}

/** A remembered rejection. */
export interface Rejection {
  reason: RejectionReason;
  detail: string;
  rejectedAt: string;
}

/** A count per value of a grouping column. */
export interface GroupCount {
  key: string;
  count: number;
}
