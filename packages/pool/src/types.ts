import type { Instance, Logger, RejectionReason, Task } from '@envgen/core';

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
  /** `true`: only instances with a built task; `false`: only those without one. */
  hasTask?: boolean;
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
  /** Gold labels, problem statement and environment; `null` until the task builder ran. */
  task: Task | null;
}

/** What {@link Pool.addInstance} did. Every case is expected, so it is data. */
export type AddResult =
  | { status: 'added' }
  /** An instance with this id is already in the pool (same repo, commit, strategy and patch). */
  | { status: 'exists' }
  /** Another bug of the same repo, commit and strategy has this id (the id's 32-bit patch hash collided); this one is not stored. */
  | { status: 'id-collision' }
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

/**
 * How the instances of a group spread over difficulty, from their recorded outcomes. An
 * instance is untried before its first attempt, too hard at solve rate 0, on the frontier
 * strictly between 0 and 1, and too easy at 1.
 */
export interface SpreadRow {
  /** The group's value (a repo, strategy or family), or `all` for the whole selection. */
  key: string;
  instances: number;
  untried: number;
  tooHard: number;
  frontier: number;
  tooEasy: number;
  /** Attempts over the group's instances. */
  attempts: number;
  /** Solved attempts over the group's instances. */
  solved: number;
  /** Mean reward over every attempt in the group; `null` before the first attempt. */
  meanReward: number | null;
  /** Mean of the tried instances' solve rates (each instance counts once); `null` when none was tried. */
  meanSolveRate: number | null;
}
