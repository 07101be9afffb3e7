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
  /** Only instances in these bands, counted after `minAttempts` attempts. */
  bands?: readonly Band[];
  /** Attempts before an instance leaves `untried` for a band (default 1). */
  minAttempts?: number;
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

/**
 * Identifies a cold run of a bundle script on a clean tree: the same script and parser, run in
 * the same kind of sandbox on the same commit under the same profile, report the same tests.
 */
export interface CleanRunKey {
  /** `owner/name`. */
  repo: string;
  commit: string;
  profileHash: string;
  /** `sha256` of the script, the parser and the kind of sandbox that ran them. */
  scriptHash: string;
}

/** A remembered clean run: each test's outcome as the bundle's parser printed it. */
export interface CleanRun {
  results: Record<string, 'passed' | 'failed' | 'skipped'>;
  seconds: number;
  ranAt: string;
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

/** An instance's difficulty band once it has enough attempts (DESIGN.md "Growth round"). */
export type Band = 'untried' | 'too-hard' | 'frontier' | 'too-easy';

/** Every band, in order of difficulty. */
export const BANDS: readonly Band[] = ['untried', 'too-hard', 'frontier', 'too-easy'];

/** A repo registered for growth rounds. */
export interface RegisteredRepo {
  /** `owner/name`, as in instance ids. */
  repo: string;
  /** What acquires it: `debian:toolz`, `owner/name@sha`, a git URL or a directory. */
  spec: string;
  /** Multiplies the repo's share of a round's sampled budget (default 1). */
  weight: number;
  addedAt: string;
}

/** One arm's plan in a stored round: its candidates and why. */
export interface RoundArmPlan {
  repo: string;
  strategy: string;
  candidates: number;
  floor: number;
  pBest: number;
  value: number;
  reason: string;
}

/** What a round's injection did on one arm. */
export interface RoundArmResult {
  repo: string;
  strategy: string;
  candidates: number;
  /** New instances. */
  kept: number;
  /** Candidates whose instance the pool already held. */
  known: number;
  rejected: number;
}

/** How one repo fared in a round. */
export interface RoundRepoResult {
  repo: string;
  newInstances: number;
  tasksBuilt: number;
  rollouts: number;
  /** Why its jobs failed (after their retries), or null. */
  failed: string | null;
  /** Wall seconds of its injection shards, summed. */
  injectSeconds: number;
}

/** A growth round as stored in the pool: its plan, why, and what it produced. */
export interface GrowthRound {
  roundId: string;
  seed: number;
  status: 'running' | 'done' | 'failed';
  startedAt: string;
  finishedAt: string | null;
  budget: number;
  /** Rollouts per instance. */
  rollouts: number;
  minAttempts: number;
  /** `baseline`, or the agent's model. */
  solver: string;
  plan: RoundArmPlan[];
  arms: RoundArmResult[];
  repos: RoundRepoResult[];
  /** The round's new instances per band after its rollouts. */
  bands: Record<Band, number>;
  newInstances: number;
  /** Instances from earlier rounds that the round's solver ran on again. */
  revisited: number;
  rolloutsRun: number;
  /** Outcomes the writer skipped because they were recorded already (a job delivered twice). */
  duplicateOutcomes: number;
  tokens: number;
  seconds: number;
  secondsPerKept: number | null;
}

/** What {@link Pool.recordAttemptOnce} did. */
export type RecordOnceResult = { status: 'recorded'; stats: InstanceStats } | { status: 'duplicate' } | { status: 'unknown-instance' };

/** How many of an arm's instances have these attempts and solves. */
export interface ArmOutcomeCount {
  repo: string;
  strategy: string;
  attempts: number;
  solved: number;
  instances: number;
}

/** Where an instance stands for the curriculum: before its first attempt, at solve rate 0, strictly between 0 and 1, or at 1. */
export type DifficultyBand = Band;

/** Instances created in one period, of one family, standing in one band now. */
export interface GrowthRow {
  /** `created_at` cut to the period's length: `2025-01-01` (a day), `2025-01-01T10` (an hour), `2025-01-01T10:05` (a minute). */
  period: string;
  family: string;
  band: DifficultyBand;
  count: number;
}

/** Remembered rejections of one repo for one reason. */
export interface RejectionCount {
  repo: string;
  reason: string;
  count: number;
}
