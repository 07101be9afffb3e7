import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Verdict } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';
import type { Profile } from '@envgen/repo';
import { mapCoverage } from '@envgen/testrun';
import { startClock } from './clock.js';
import type { Clock } from './clock.js';
import { planRun } from './plan.js';
import type { PlanContext, RunPlan } from './plan.js';
import { validateReference } from './reference.js';
import { resolveCandidateFiles } from './tree.js';
import type { ChangedFile } from './tree.js';
import type { ValidationInput, ValidationOutcome, Validator, ValidatorOptions } from './types.js';
import { candidateLimits, candidateProfile, judgeResults, stablePassing, verdictOfRun, verdictOfStatus } from './verdict.js';
import { startWarmWorker } from './warm-worker.js';
import type { WarmWorker } from './warm-worker.js';
import type { SuiteAnalysis } from './warm-server.js';

/**
 * A covering run slower than this share of the limit falls back to the suite: the
 * reference's suite, which also runs every other test, might pass the limit where the
 * covering run did not.
 */
const COVERING_SHARE_OF_LIMIT = 0.25;

interface Job {
  input: ValidationInput;
  resolve: (outcome: ValidationOutcome) => void;
  reject: (error: unknown) => void;
}

/** What the analysis run of the clean suite in the warm interpreter taught. */
interface WarmFacts {
  plan: PlanContext;
  /** Stable tests whose outcome in the warm interpreter differs from the baseline. */
  unstable: Set<string>;
}

/** True when every run of the profile (the baseline's too) has the same hash seed. */
function hasPinnedHashSeed(profile: Profile): boolean {
  const seed = profile.env['PYTHONHASHSEED'];
  return seed !== undefined && seed !== 'random';
}

async function readSourceEntities(worktree: string, files: readonly string[]): Promise<Map<string, Entity[]>> {
  const entities = new Map<string, Entity[]>();
  for (const file of files) {
    const source = await readFile(join(worktree, file), 'utf8').catch(() => null);
    if (source !== null) entities.set(file, extractEntities(source, file).entities);
  }
  return entities;
}

/**
 * What the traced clean run in the warm interpreter adds to the baseline: the functions
 * that run outside tests, the tests that start processes, the tests that behave
 * differently warm, and, when the profile leaves the hash seed random, the coverage under
 * the warm run's seed (united with the baseline's: a test's path may depend on set order).
 * Under a pinned seed the baseline's coverage run took the same paths, so its coverage
 * already holds what each test ran.
 */
function learnFacts(options: ValidatorOptions, analysis: SuiteAnalysis, results: Record<string, { outcome: string }>, entities: Map<string, Entity[]>): WarmFacts {
  const stable = stablePassing(options.baseline);
  const entitiesOf = (file: string): Entity[] | null => entities.get(file) ?? null;
  const outside = new Set(Object.keys(mapCoverage({ outside: analysis.outside }, entitiesOf)));
  const coverage: Record<string, string[]> = { ...options.baseline.coverage };
  for (const [key, tests] of Object.entries(mapCoverage(analysis.coverage, entitiesOf))) {
    coverage[key] = [...new Set([...(coverage[key] ?? []), ...tests])].sort();
  }
  const unstable = new Set(stable.filter((nodeId) => results[nodeId]?.outcome !== 'passed'));
  return {
    plan: { sourceFiles: new Set(options.profile.sourceFiles), coverage, outside, stable, alwaysRun: new Set(analysis.spawning), cleanEntities: entities },
    unstable,
  };
}

/**
 * The fast validator. Each of `concurrency` workers holds a copy of the clean tree and a
 * warm interpreter in its own sandbox (pytest and the suite's outside modules imported
 * once; one fork per candidate). A candidate whose change lies inside function bodies that
 * only run inside tests runs just the tests that covered them (P2P for the rest comes from
 * the baseline); any other candidate runs the whole suite warm. Results are compared with
 * the baseline exactly as {@link validateReference} does, with the same time limit.
 *
 * Start-up runs the clean suite once in the warm interpreter with a tracer, to learn which
 * functions run at import time, during collection or in shared fixtures (those always get
 * the whole suite) and to check that the warm interpreter reproduces the baseline (tests
 * that do not are validated the reference way).
 */
export async function createValidator(options: ValidatorOptions): Promise<Validator> {
  const logger = options.logger ?? silentLogger;
  const limits = options.limits ?? candidateLimits(options.profile, options.baseline);
  const { timeoutMs } = limits;
  const concurrency = Math.max(1, options.concurrency ?? availableParallelism());
  const entities = await readSourceEntities(options.worktree, options.profile.sourceFiles);
  const profile = candidateProfile(options.profile, limits);
  const workerOptions = { worktree: options.worktree, profile, provider: options.sandboxProvider, logger };

  const workers: WarmWorker[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.allSettled(workers.map((worker) => worker.close()));
  };
  let facts: WarmFacts;
  try {
    const first = await startWarmWorker(workerOptions);
    workers.push(first);
    const [analysisRun, ...others] = await Promise.all([
      first.run({ timeoutMs, analyze: hasPinnedHashSeed(options.profile) ? 'outside' : 'per-test' }),
      ...Array.from({ length: concurrency - 1 }, () => startWarmWorker(workerOptions)),
    ]);
    workers.push(...others);
    if (analysisRun.analysis === undefined || analysisRun.status !== 'completed') {
      throw new Error(`the clean suite did not complete in the warm interpreter (${analysisRun.status}): ${analysisRun.output}`);
    }
    facts = learnFacts(options, analysisRun.analysis, analysisRun.results, entities);
    if (facts.unstable.size > 0) logger.warn('tests behave differently in the warm interpreter; candidates they observe are validated the reference way', { tests: [...facts.unstable].slice(0, 10) });
    const modules = analysisRun.analysis.modules;
    const tainted = await Promise.all(workers.map((worker) => worker.preload(modules)));
    if (tainted.some((inside) => inside.length > 0)) logger.warn('preloading imported project modules; running without a preload', { modules: tainted.flat().slice(0, 10) });
  } catch (error) {
    await closeAll();
    throw new EnvgenError('test-run-failed', `The fast validator could not start: ${describeError(error)}. Check the baseline with \`envgen env\`, or validate with the reference path.`, { cause: error });
  }

  const reference = async (input: ValidationInput, why: string, clock: Clock): Promise<ValidationOutcome> => {
    const verdict = await validateReference({ ...options, limits, candidate: input.candidate, files: input.files });
    clock.lap('reference');
    return { verdict, mode: 'reference', why, testsRun: Object.keys(options.baseline.results).length, seconds: clock.total(), phases: clock.phases };
  };

  const runSuite = async (worker: WarmWorker, files: ChangedFile[], why: string, clock: Clock): Promise<ValidationOutcome> => {
    const { run, phases } = await worker.runWith(files, { timeoutMs });
    clock.add(phases);
    return { verdict: verdictOfRun(options.baseline, run), mode: 'suite', why, testsRun: Object.keys(run.results).length, seconds: clock.total(), phases: clock.phases };
  };

  const runCovering = async (worker: WarmWorker, files: ChangedFile[], plan: Extract<RunPlan, { mode: 'covering' }>, clock: Clock): Promise<ValidationOutcome> => {
    const done = (verdict: Verdict, testsRun: number): ValidationOutcome => ({ verdict, mode: 'covering', why: plan.why, testsRun, seconds: clock.total(), phases: clock.phases });
    if (plan.tests.length === 0) return done(judgeResults(facts.plan.stable, {}, new Set()), 0);
    const { run, treeChanged, phases } = await worker.runWith(files, { timeoutMs, nodeIds: plan.tests });
    clock.add(phases);
    if (run.status === 'timeout') return done(verdictOfStatus(run.status, run.seconds, run.output) as Verdict, plan.tests.length);
    // Whatever the covering tests could not show alone goes to the suite: a crash, a test
    // missing, a run near the limit, or files left in the tree for later tests to see.
    const missing = plan.tests.filter((nodeId) => run.results[nodeId] === undefined);
    const slow = run.seconds > (timeoutMs / 1000) * COVERING_SHARE_OF_LIMIT;
    if (run.status !== 'completed' || missing.length > 0 || slow || treeChanged) {
      const because = run.status !== 'completed' ? run.status : missing.length > 0 ? `${missing.length} tests missing` : slow ? 'near the limit' : 'changed the tree';
      return runSuite(worker, files, `${plan.why}; covering run ${because}`, clock);
    }
    return done(judgeResults(facts.plan.stable, run.results, new Set(plan.tests)), plan.tests.length);
  };

  const validateOn = async (worker: WarmWorker, input: ValidationInput): Promise<ValidationOutcome> => {
    const clock = startClock();
    const resolved = await resolveCandidateFiles(options.worktree, input.files);
    clock.lap('resolve');
    if (!resolved.ok) {
      return { verdict: { kind: 'rejected', reason: 'apply-failed', detail: resolved.detail }, mode: 'covering', why: 'bad files', testsRun: 0, seconds: clock.total(), phases: clock.phases };
    }
    const plan = planRun(resolved.files, facts.plan);
    clock.lap('plan');
    const observed = plan.mode === 'covering' ? plan.tests : facts.plan.stable;
    if (observed.some((nodeId) => facts.unstable.has(nodeId))) return reference(input, `${plan.why}; observed tests behave differently warm`, clock);
    try {
      return plan.mode === 'covering' ? await runCovering(worker, resolved.files, plan, clock) : await runSuite(worker, resolved.files, plan.why, clock);
    } catch (error) {
      logger.warn('the warm interpreter failed; restarting it and validating this candidate the reference way', { error: describeError(error) });
      await worker.reset();
      clock.lap('reset');
      return reference(input, `${plan.why}; warm interpreter failed`, clock);
    }
  };

  const queue: Job[] = [];
  const idle: WarmWorker[] = [...workers];
  const running = new Set<Promise<void>>();
  let closed = false;
  const pump = (): void => {
    while (idle.length > 0 && queue.length > 0) {
      const worker = idle.shift() as WarmWorker;
      const job = queue.shift() as Job;
      const done: Promise<void> = validateOn(worker, job.input)
        .then(job.resolve, job.reject)
        .finally(() => {
          running.delete(done);
          idle.push(worker);
          pump();
        });
      running.add(done);
    }
  };

  const validateWithDetails = (input: ValidationInput): Promise<ValidationOutcome> => {
    if (closed) return Promise.reject(new EnvgenError('usage', 'This validator was closed: create a new one to validate more candidates.'));
    return new Promise((resolve, reject) => {
      queue.push({ input, resolve, reject });
      pump();
    });
  };

  return {
    validateWithDetails,
    validate: async (input) => (await validateWithDetails(input)).verdict,
    async close() {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) job.reject(new EnvgenError('usage', 'The validator was closed before this candidate ran: validate before closing.'));
      await Promise.allSettled([...running]);
      await closeAll();
    },
  };
}
