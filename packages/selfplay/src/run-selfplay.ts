import { createRng, makeInstanceId, silentLogger } from '@envgen/core';
import type { BundleFiles, Instance, Logger, StrategyFamily } from '@envgen/core';
import type { ModelClient } from '@envgen/agent';
import { checkBundle } from '@envgen/bundle';
import type { CheckResult } from '@envgen/bundle';
import { runInjection } from '@envgen/inject';
import type { PlannedCandidate, RunInjectionOptions } from '@envgen/inject';
import { DEFAULT_INJECTOR_ALPHA, injectorReward } from '@envgen/rewards';
import { makeHigherOrderCandidate } from './higher-order.js';
import { runInjectorRollout } from './injector-rollout.js';
import { INJECTOR_STRATEGIES, injectorStrategyName } from './prompts.js';
import type { InjectorStrategy } from './prompts.js';
import { runRepairRollout } from './repair-rollout.js';
import { INJECTOR_TOOLS } from './tools.js';
import type { RepairRollout } from './repair-rollout.js';
import { episodeFields } from './trajectory.js';
import type { SelfPlayTrajectory } from './trajectory.js';
import type { EpisodeBudget } from './workbench.js';

/** A bundle made by another injector, fed in instead of the LLM's. */
export interface FedBundle {
  /** Where it came from (its directory), for the report. */
  source: string;
  files: BundleFiles;
  /** From an export's metadata.json, when there is one. */
  strategy?: string;
  family?: StrategyFamily;
  /** A higher-order bundle's order and parent, from the same metadata. */
  order?: number;
  parent?: string;
}

/** Options of {@link runSelfPlay}. */
export interface RunSelfPlayOptions extends Pick<RunInjectionOptions, 'repo' | 'worktree' | 'profile' | 'baseline' | 'sandboxProvider' | 'pool'> {
  /** The model of both roles (the solver's, when bundles are fed in). */
  client: ModelClient;
  runId: string;
  /** Injector episodes (ignored with `bundles`: one round per bundle). */
  rounds: number;
  /** Solver rollouts per accepted bundle. */
  group: number;
  seed: number;
  /** The injector reward's α (default 0.8). */
  alpha?: number;
  /** Strategies the seeded mix draws from (default all three). */
  strategies?: readonly InjectorStrategy[];
  /** Bundles of another injector: the solver side runs on them, no LLM injects. */
  bundles?: readonly FedBundle[];
  injectorLimits?: EpisodeBudget;
  solverLimits?: EpisodeBudget;
  /** Solver rollouts at once (default 4). */
  concurrency?: number;
  image?: string;
  /** Called with every trajectory as soon as it is scored (injector ones after their group). */
  writeTrajectory: (trajectory: SelfPlayTrajectory) => Promise<void>;
  onProgress?: (message: string) => void;
  logger?: Logger;
}

/** What one round did. */
export interface SelfPlayRound {
  /** `llm_removal`, ..., or the fed bundle's strategy. */
  strategy: string;
  /** The fed bundle's directory, for fed rounds. */
  source: string | null;
  submitted: boolean;
  checksPassed: boolean;
  /** Names and evidence of the failed checks (or why the bundle made no instance). */
  failed: Array<{ name: string; evidence: string }>;
  instanceId: string | null;
  solverRewards: number[];
  solveRate: number | null;
  injectorReward: number | null;
  higherOrder: { tried: number; kept: string[]; skipped: string[] };
}

/** The whole self-play run. */
export interface SelfPlayReport {
  repo: string;
  commit: string;
  runId: string;
  alpha: number;
  rounds: SelfPlayRound[];
  seconds: number;
}

/** Rollouts at once in a solver group, by default. */
const SOLVER_CONCURRENCY = 4;

/** The failed checks, or a verdict on the tests, as the round reports them. */
function failedChecks(checks: readonly CheckResult[]): Array<{ name: string; evidence: string }> {
  return checks.filter((check) => !check.passed).map((check) => ({ name: check.name, evidence: check.evidence }));
}

/**
 * Self-play on one repo (SSR's loop). Each round: the LLM injector makes a bundle with a
 * seeded strategy (or the next fed bundle is taken); the bundle is checked cold with its own
 * script and parser; a failing bundle scores −1 with its failed checks named. An accepted
 * bundle becomes an instance (FAIL_TO_PASS / PASS_TO_PASS from its own runs, flaky tests
 * left out), `group` repair rollouts run on it, each scored ±1 in a fresh sandbox and
 * recorded in the pool, and the solve rate gives the injector reward. Every failed repair's
 * patch on top of its bug is a higher-order candidate, validated, weakened, checked and
 * stored with its parent and order 2. Trajectories of both roles go to `writeTrajectory`.
 */
export async function runSelfPlay(options: RunSelfPlayOptions): Promise<SelfPlayReport> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const progress = options.onProgress ?? (() => undefined);
  const alpha = options.alpha ?? DEFAULT_INJECTOR_ALPHA;
  const rng = createRng(`${options.seed}/selfplay`);
  const strategies = options.strategies ?? INJECTOR_STRATEGIES;
  const repoName = `${options.repo.owner}/${options.repo.name}`;
  const flaky = new Set(options.baseline.flaky);
  const rounds: SelfPlayRound[] = [];
  const count = options.bundles === undefined ? options.rounds : options.bundles.length;

  for (let index = 0; index < count; index += 1) {
    const fed = options.bundles?.[index];
    const llmStrategy = fed === undefined ? (strategies[rng.int(strategies.length)] ?? 'direct') : null;
    const strategy = fed === undefined ? injectorStrategyName(llmStrategy ?? 'direct') : (fed.strategy ?? 'external');
    const round: SelfPlayRound = {
      strategy,
      source: fed?.source ?? null,
      submitted: false,
      checksPassed: false,
      failed: [],
      instanceId: null,
      solverRewards: [],
      solveRate: null,
      injectorReward: null,
      higherOrder: { tried: 0, kept: [], skipped: [] },
    };
    rounds.push(round);
    progress(`round ${index + 1} of ${count}: ${fed === undefined ? `injecting (${strategy})` : `bundle ${fed.source}`}`);

    let bundle: BundleFiles | null = fed?.files ?? null;
    let injector: Omit<SelfPlayTrajectory, 'reward' | 'checks' | 'solve_rate' | 'instance_id'> | null = null;
    if (fed === undefined && llmStrategy !== null) {
      const rollout = await runInjectorRollout({
        worktree: options.worktree,
        commit: options.repo.commit,
        profile: options.profile,
        strategy: llmStrategy,
        sandboxProvider: options.sandboxProvider,
        client: options.client,
        logger,
        ...options.injectorLimits,
        ...(options.image === undefined ? {} : { image: options.image }),
      });
      bundle = rollout.bundle;
      injector = {
        run_id: options.runId,
        role: 'injector',
        repo: repoName,
        strategy,
        order: 1,
        parent: null,
        model: options.client.model,
        tools: [...INJECTOR_TOOLS],
        ...episodeFields(rollout.episode, rollout.startedAt, rollout.started),
      };
      if (rollout.episode.end.reason === 'error') {
        // The endpoint failed: not the policy's doing, so no reward is given.
        await options.writeTrajectory({ ...injector, instance_id: null, reward: null, checks: [], solve_rate: null });
        round.failed.push({ name: 'model-error', evidence: rollout.episode.end.detail });
        continue;
      }
    }
    round.submitted = bundle !== null;
    const finishInjector = async (instanceId: string | null, checks: CheckResult[], solveRate: number | null, reward: number | null): Promise<void> => {
      round.injectorReward = reward;
      if (injector !== null) await options.writeTrajectory({ ...injector, instance_id: instanceId, reward, checks, solve_rate: solveRate });
    };
    if (bundle === null) {
      round.failed.push({ name: 'no-submission', evidence: 'the injector ended without a valid submit' });
      await finishInjector(null, [], null, injectorReward({ checksPassed: false, solveRate: null }, { alpha }));
      continue;
    }

    progress(`round ${index + 1}: checking the bundle (seven checks, its own script and parser)`);
    const report = await checkBundle({
      bundle,
      worktree: options.worktree,
      profile: options.profile,
      sandboxProvider: options.sandboxProvider,
      tests: Object.keys(options.baseline.results).length,
      logger,
      ...(options.image === undefined ? {} : { image: options.image }),
    });
    const failToPass = report.brokenTests.filter((id) => !flaky.has(id)).sort();
    const passToPass = report.passingTests.filter((id) => !flaky.has(id)).sort();
    round.failed = failedChecks(report.checks);
    if (report.passed && (failToPass.length === 0 || passToPass.length === 0)) {
      round.failed.push({ name: 'tests', evidence: `${failToPass.length} FAIL_TO_PASS and ${passToPass.length} PASS_TO_PASS test(s) once flaky tests are left out; an instance needs at least one of each` });
    }
    if (round.failed.length > 0) {
      await finishInjector(null, report.checks, null, injectorReward({ checksPassed: false, solveRate: null }, { alpha }));
      continue;
    }
    round.checksPassed = true;

    const instance: Instance = {
      instance_id: makeInstanceId({ ...options.repo, strategy, patch: bundle['bug_inject.diff'] }),
      repo: repoName,
      base_commit: options.repo.commit,
      patch: bundle['bug_inject.diff'],
      FAIL_TO_PASS: failToPass,
      PASS_TO_PASS: passToPass,
      strategy,
      family: fed?.family ?? 'llm',
      seed: options.seed,
      entities: [],
      description: fed === undefined ? `injected by ${options.client.model} (${strategy})` : `fed in from ${fed.source}`,
      ...(fed?.order === undefined || fed.order < 2 ? {} : { order: fed.order }),
      ...(fed?.parent === undefined ? {} : { parent: fed.parent }),
      created_at: new Date().toISOString(),
    };
    const added = options.pool.addInstance(instance, bundle);
    if (added.status === 'id-collision') {
      round.failed.push({ name: 'id-collision', evidence: `another bug already has the id ${instance.instance_id}` });
      await finishInjector(null, report.checks, null, injectorReward({ checksPassed: false, solveRate: null }, { alpha }));
      continue;
    }
    const stored = added.status === 'duplicate-patch' ? (options.pool.getInstance(added.duplicateOf) ?? instance) : (options.pool.getInstance(instance.instance_id) ?? instance);
    round.instanceId = stored.instance_id;

    progress(`round ${index + 1}: ${options.group} repair rollout(s) on ${stored.instance_id}`);
    const repairs = await runGroup(options, stored, options.pool.readBundle(stored.instance_id), logger);
    const scored = repairs.filter((repair) => repair.trajectory.finish.reason !== 'error');
    round.solverRewards = scored.map((repair) => repair.evaluation.reward);
    round.solveRate = scored.length === 0 ? null : scored.filter((repair) => repair.evaluation.reward === 1).length / scored.length;
    await finishInjector(stored.instance_id, report.checks, round.solveRate, round.solveRate === null ? null : injectorReward({ checksPassed: true, solveRate: round.solveRate }, { alpha }));

    const planned: PlannedCandidate[] = [];
    for (const repair of scored) {
      if (repair.evaluation.reward === 1) continue;
      const made = await makeHigherOrderCandidate(stored, repair.patch, options.worktree);
      if (!made.ok) round.higherOrder.skipped.push(made.reason);
      else if (!planned.some((other) => other.candidate.patch === made.planned.candidate.patch)) planned.push(made.planned);
    }
    round.higherOrder.tried = planned.length;
    if (planned.length > 0) {
      progress(`round ${index + 1}: validating ${planned.length} higher-order candidate(s)`);
      const injection = await runInjection({
        repo: options.repo,
        worktree: options.worktree,
        profile: options.profile,
        baseline: options.baseline,
        sandboxProvider: options.sandboxProvider,
        pool: options.pool,
        count: planned.length,
        candidates: planned,
        combine: 0,
        seed: options.seed,
        strategies: [],
        logger,
      });
      round.higherOrder.kept = injection.instanceIds;
      for (const [reason, times] of Object.entries(injection.rejected)) round.higherOrder.skipped.push(`${times}× rejected: ${reason}`);
    }
  }
  return { repo: repoName, commit: options.repo.commit, runId: options.runId, alpha, rounds, seconds: (performance.now() - started) / 1000 };
}

/** `group` repair rollouts on one instance, a few at a time; each recorded in the pool and written as it ends. */
async function runGroup(options: RunSelfPlayOptions, instance: Instance, bundle: BundleFiles, logger: Logger): Promise<RepairRollout[]> {
  const results: RepairRollout[] = [];
  let next = 0;
  const lanes = Math.max(1, Math.min(options.concurrency ?? SOLVER_CONCURRENCY, options.group));
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < options.group) {
        next += 1;
        const repair = await runRepairRollout({
          instance,
          bundle,
          worktree: options.worktree,
          profile: options.profile,
          sandboxProvider: options.sandboxProvider,
          client: options.client,
          runId: options.runId,
          logger,
          ...options.solverLimits,
          ...(options.image === undefined ? {} : { image: options.image }),
        });
        if (repair.trajectory.finish.reason !== 'error') {
          options.pool.recordAttempt(instance.instance_id, { reward: repair.evaluation.reward, solved: repair.evaluation.reward === 1 });
        }
        await options.writeTrajectory(repair.trajectory);
        results.push(repair);
      }
    }),
  );
  return results;
}
