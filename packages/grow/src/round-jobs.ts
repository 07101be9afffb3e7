import type { BundleFiles, Instance, Task } from '@envgen/core';
import type { GrowthRound, RoundArmResult } from '@envgen/pool';

/** An instance with its bundle, as it travels from the worker that proved it. */
export interface StoredInstance {
  instance: Instance;
  bundle: BundleFiles;
}

/** An instance and its task, for the solver. */
export interface SolverItem {
  instance: Instance;
  task: Task;
}

/** Which solver a round runs: the BM25 baseline offline, or the agent on an endpoint (its key comes from each worker's OPENAI_API_KEY). */
export type SolverSpec =
  | { kind: 'baseline' }
  | { kind: 'agent'; model: string; baseUrl?: string; toolFormat?: 'auto' | 'native' | 'hermes'; maxTurns?: number; temperature?: number };

/** One scored rollout; `key` is the same whoever runs it, so the writer records it once. */
export interface RolloutOutcome {
  key: string;
  instanceId: string;
  reward: number;
  solved: boolean;
}

/** Inject one shard of a repo's arms. */
export interface InjectJobData {
  kind: 'inject';
  roundId: string;
  /** `owner/name`. */
  repo: string;
  spec: string;
  shard: number;
  seed: number;
  /** Candidates per strategy. */
  quotas: Record<string, number>;
}

export interface InjectResult {
  repo: string;
  shard: number;
  arms: RoundArmResult[];
  /** New and already known instances of the shard's candidates, with their bundles. */
  instances: StoredInstance[];
  seconds: number;
}

/** Build the tasks of the instances its inject shards (its children) proved. */
export interface TasksJobData {
  kind: 'tasks';
  roundId: string;
  repo: string;
  spec: string;
}

export interface TasksResult {
  repo: string;
  arms: RoundArmResult[];
  instances: StoredInstance[];
  tasks: Task[];
  failedTasks: Array<{ instance_id: string; error: string }>;
  /** Why shards failed (after their retries). */
  failedShards: string[];
  injectSeconds: number;
}

/** Run the solver on the new instances (from its tasks child) and on earlier ones worth another look. */
export interface RolloutsJobData {
  kind: 'rollouts';
  roundId: string;
  repo: string;
  spec: string;
  /** Rollouts per instance. */
  rollouts: number;
  solver: SolverSpec;
  revisit: SolverItem[];
}

export interface RolloutsResult extends TasksResult {
  outcomes: RolloutOutcome[];
  tokens: number;
}

/** The round itself: processed last, by the pool's host, which writes every result. */
export interface RoundJobData {
  kind: 'round';
  round: GrowthRound;
}

export type GrowJobData = InjectJobData | TasksJobData | RolloutsJobData;

/**
 * The effects a round's jobs need, given by the process that runs them (the CLI): each
 * works in that process's own home (mirrors, baselines, a scratch pool), so workers on
 * other machines share nothing but the queue.
 */
export interface GrowServices {
  /** Acquires the repo, builds (or reads) its baseline, injects the shard's quotas. */
  inject(job: InjectJobData): Promise<InjectResult>;
  /** Builds tasks for `instances` (adding them to this home's pool first). */
  buildTasks(job: TasksJobData, instances: readonly StoredInstance[]): Promise<{ tasks: Task[]; failed: Array<{ instance_id: string; error: string }> }>;
  /** Runs `job.rollouts` solver episodes on each item, in checkouts built in this home. */
  rollouts(job: RolloutsJobData, items: readonly SolverItem[]): Promise<{ outcomes: RolloutOutcome[]; tokens: number }>;
  /** The task with its environment rebuilt in this home (the same commit, by construction), for the pool's host. */
  localizeTask(spec: string, instance: Instance, task: Task): Promise<Task>;
}

/** The key of the `attempt`-th rollout of an instance in a round. */
export function outcomeKey(roundId: string, instanceId: string, attempt: number): string {
  return `${roundId}/${instanceId}/${attempt}`;
}

function mergeArms(results: readonly { arms: readonly RoundArmResult[] }[]): RoundArmResult[] {
  const merged = new Map<string, RoundArmResult>();
  for (const arm of results.flatMap((result) => result.arms)) {
    const key = `${arm.repo}\u0000${arm.strategy}`;
    const entry = merged.get(key) ?? { repo: arm.repo, strategy: arm.strategy, candidates: 0, kept: 0, known: 0, rejected: 0 };
    entry.candidates += arm.candidates;
    entry.kept += arm.kept;
    entry.known += arm.known;
    entry.rejected += arm.rejected;
    merged.set(key, entry);
  }
  return [...merged.values()].sort((a, b) => (a.strategy < b.strategy ? -1 : 1));
}

/** The inject job: one shard of one repo's plan. */
export function processInject(data: InjectJobData, services: GrowServices): Promise<InjectResult> {
  return services.inject(data);
}

/** The tasks job: gathers its shards' instances (one copy per id) and builds their tasks. */
export async function processTasks(data: TasksJobData, shards: readonly InjectResult[], failedShards: readonly string[], services: GrowServices): Promise<TasksResult> {
  const byId = new Map<string, StoredInstance>();
  for (const item of [...shards].sort((a, b) => a.shard - b.shard).flatMap((shard) => shard.instances)) {
    if (!byId.has(item.instance.instance_id)) byId.set(item.instance.instance_id, item);
  }
  const instances = [...byId.values()].sort((a, b) => (a.instance.instance_id < b.instance.instance_id ? -1 : 1));
  const built = instances.length === 0 ? { tasks: [], failed: [] } : await services.buildTasks(data, instances);
  return {
    repo: data.repo,
    arms: mergeArms(shards),
    instances,
    tasks: built.tasks,
    failedTasks: built.failed,
    failedShards: [...failedShards],
    injectSeconds: shards.reduce((sum, shard) => sum + shard.seconds, 0),
  };
}

/** The rollouts job: the solver on the new instances that got a task, and on the revisited ones. */
export async function processRollouts(data: RolloutsJobData, tasks: TasksResult | undefined, failures: readonly string[], services: GrowServices): Promise<RolloutsResult> {
  const base: TasksResult = tasks ?? { repo: data.repo, arms: [], instances: [], tasks: [], failedTasks: [], failedShards: [...failures], injectSeconds: 0 };
  const instances = new Map(base.instances.map((item) => [item.instance.instance_id, item.instance]));
  const items: SolverItem[] = [];
  for (const task of base.tasks) {
    const instance = instances.get(task.instance_id);
    if (instance !== undefined) items.push({ instance, task });
  }
  const fresh = new Set(items.map((item) => item.instance.instance_id));
  items.push(...data.revisit.filter((item) => !fresh.has(item.instance.instance_id)));
  const run = items.length === 0 || data.rollouts === 0 ? { outcomes: [], tokens: 0 } : await services.rollouts(data, items);
  return { ...base, ...run };
}
