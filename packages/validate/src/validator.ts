import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { EnvgenError, describeError, silentLogger, volatileIds } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';
import type { Profile } from '@envgen/repo';
import type { TestResult } from '@envgen/testrun';
import { mapCoverage } from '@envgen/testrun';
import { chooseCheckpoints, firstObserver, orderDigest, pickCheckpoint, positionsOf } from './checkpoints.js';
import { startClock } from './clock.js';
import type { Clock } from './clock.js';
import { planRun } from './plan.js';
import type { PlanContext } from './plan.js';
import { validateReference } from './reference.js';
import { resolveCandidateFiles } from './tree.js';
import type { ChangedFile } from './tree.js';
import type { MutatedFile, SelectedRun, ValidationInput, ValidationOutcome, Validator, ValidatorOptions } from './types.js';
import { candidateLimits, candidateProfile, internalErrorOfBug, stablePassing, verdictOfRun, verdictOfStatus, withFlaky } from './verdict.js';
import { startWarmWorker } from './warm-worker.js';
import type { WarmWorker } from './warm-worker.js';
import type { CollectOutcome, SuiteAnalysis, WarmRun } from './warm-server.js';

/**
 * A resumed run slower than this share of the limit runs again from scratch: the
 * reference's run, which also runs the tests before the checkpoint and starts pytest,
 * might pass the limit where the resumed run did not. One already past a limit does not.
 */
const RESUMED_SHARE_OF_LIMIT = 0.25;
/** Checkpoints of the clean suite each warm server keeps (one process each). */
const CHECKPOINTS = 16;

/** Work for the next idle warm worker. */
interface Job {
  work: (worker: WarmWorker) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What the analysis run of the clean suite in the warm interpreter taught. */
interface WarmFacts {
  plan: PlanContext;
  /** Stable tests whose outcome in the warm interpreter differs from the baseline. */
  unstable: Set<string>;
}

/** Which checkpoints of a worker's collect may be used. */
interface UsableCheckpoints {
  /** The one before collection. */
  collection: boolean;
  /** Per checkpoint asked for: its position in the run order, or null when unusable. */
  positions: (number | null)[];
}

/** The coverage entries of the profile's source files (the entities a candidate may change). */
function sourceCoverage(coverage: Readonly<Record<string, readonly string[]>>, profile: Profile): Record<string, readonly string[]> {
  const sourceFiles = new Set(profile.sourceFiles);
  return Object.fromEntries(Object.entries(coverage).filter(([key]) => sourceFiles.has(key.slice(0, key.indexOf(':')))));
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
function learnFacts(options: Pick<ValidatorOptions, 'baseline' | 'profile'>, analysis: SuiteAnalysis, results: Record<string, { outcome: string }>, entities: Map<string, Entity[]>): WarmFacts {
  const stable = stablePassing(options.baseline);
  const entitiesOf = (file: string): Entity[] | null => entities.get(file) ?? null;
  const outside = new Set(Object.keys(mapCoverage({ outside: analysis.outside }, entitiesOf)));
  const coverage: Record<string, string[]> = { ...options.baseline.coverage };
  for (const [key, tests] of Object.entries(mapCoverage(analysis.coverage, entitiesOf))) {
    coverage[key] = [...new Set([...(coverage[key] ?? []), ...tests])].sort();
  }
  const unstable = new Set(stable.filter((nodeId) => results[nodeId]?.outcome !== 'passed'));
  return {
    // A test the baseline counts flaky may have failed in its coverage run before it reached
    // the code a bug changes: it can observe any change, and a verdict must see whether the bug
    // breaks it (the weakening deletes such a test too, see `flakyFailing`).
    plan: { sourceFiles: new Set(options.profile.sourceFiles), coverage, outside, alwaysRun: new Set([...analysis.spawning, ...(options.baseline.untraced ?? []), ...options.baseline.flaky]), cleanEntities: entities },
    unstable,
  };
}

/**
 * The tests of `ids` that passed in one of `runs` (clean runs of one tree) and ended
 * otherwise in another: they flip between runs of the same tree, what the baseline calls flaky.
 */
function flippedBetween(ids: readonly string[], runs: readonly Readonly<Record<string, { outcome: string }>>[]): string[] {
  return ids.filter((id) => {
    const outcomes = new Set(runs.map((run) => run[id]?.outcome).filter((outcome) => outcome !== undefined));
    return outcomes.has('passed') && outcomes.size > 1;
  });
}

/** Why a worker holds no checkpoint before collection. */
function noCheckpointWhy(outcome: CollectOutcome | null): string {
  if (outcome === null) return 'the clean suite left no checkpoints';
  if (!outcome.ok) return outcome.why.split('\n')[0] ?? 'the clean suite left no checkpoints';
  return outcome.collection === 'ok' ? 'the clean run differed from the baseline' : outcome.collection;
}

/**
 * The fast validator. Each of `concurrency` workers holds a copy of the clean tree and a
 * warm interpreter in its own sandbox (pytest and the suite's outside modules imported
 * once), which keeps checkpoints of one clean run of the suite: before collection and at
 * the start of some tests. A candidate whose change lies inside function bodies that only
 * run inside tests goes on from the last checkpoint before the first test that runs them
 * (every earlier test behaves as on the clean tree), with their code swapped in, through
 * every later test: a test that never runs the changed code but reads what an earlier one
 * left (a cache, a registry) still runs. Any other candidate runs the whole suite from the
 * checkpoint before collection, importing the changed files afresh. Results are compared
 * with the baseline exactly as {@link validateReference} does, with the same time limit.
 *
 * Start-up runs the clean suite in the warm interpreter with a tracer, to learn which
 * functions run at import time or during collection (those always get the whole suite)
 * and to check that the warm interpreter reproduces the baseline (when it does not,
 * candidates are validated the reference way), and once in each worker to leave the
 * checkpoints (used only when that run collected the baseline's tests in its order and
 * every stable test passed). Under a pinned hash seed the first worker's checkpoint run is
 * the traced run (a fixture shared by several tests then counts for the test that sets it
 * up, as in the baseline's coverage); otherwise a separate run records what each test ran
 * under its own seed, and shared fixtures' set-up counts as outside every test.
 */
export async function createValidator(options: ValidatorOptions): Promise<Validator> {
  const logger = options.logger ?? silentLogger;
  const limits = options.limits ?? candidateLimits(options.profile, options.baseline);
  const { timeoutMs } = limits;
  const concurrency = Math.max(1, options.concurrency ?? availableParallelism());
  const entities = await readSourceEntities(options.worktree, options.profile.sourceFiles);
  const profile = candidateProfile(options.profile, limits);
  const workerOptions = {
    worktree: options.worktree,
    profile,
    testLimits: limits.perTestSeconds,
    provider: options.sandboxProvider,
    logger,
    ...(options.codeCache === undefined ? {} : { codeCache: options.codeCache }),
  };
  const order = Object.keys(options.baseline.results);
  // The baseline, with the tests that a clean run in a warm interpreter names otherwise
  // (parameter ids made from the time) counted as flaky: no verdict can rest on them.
  let baseline = options.baseline;
  const renamed = new Set<string>();
  // Tests the validator's caller saw flip (see Validator.noteFlaky).
  const flaky = new Set<string>();
  const noteCleanRun = (results: Readonly<Record<string, unknown>> | null): void => {
    if (results === null) return;
    for (const nodeId of volatileIds(order, Object.keys(results))) renamed.add(nodeId);
    baseline = withFlaky(options.baseline, [...renamed, ...flaky]);
  };
  let stable = stablePassing(baseline);
  /** Counts `nodeIds` flaky from now on: in no verdict, and no longer a warm difference (`unstable`). */
  const countFlaky = (nodeIds: Iterable<string>, unstable: Set<string>): void => {
    for (const nodeId of nodeIds) {
      flaky.add(nodeId);
      unstable.delete(nodeId);
    }
    baseline = withFlaky(options.baseline, [...renamed, ...flaky]);
    stable = stablePassing(baseline);
  };
  const positions = positionsOf(order);
  const digest = orderDigest(order);
  /** The collector ran the baseline's tests in its order, some perhaps under other names. */
  const sameOrder = (ran: readonly string[]): boolean =>
    ran.length === order.length && ran.every((nodeId, index) => nodeId === order[index] || (renamed.has(nodeId) && renamed.has(order[index] ?? '')));
  let checkpointIds: string[] = [];
  const usableMemo = new WeakMap<CollectOutcome, UsableCheckpoints>();
  /**
   * A checkpoint at a test is used only when the collector collected the baseline's tests in
   * its order and every stable test passed in its clean run (their results are taken from it).
   */
  const usableOf = (outcome: CollectOutcome | null): UsableCheckpoints => {
    if (outcome === null || !outcome.ok) return { collection: false, positions: [] };
    let usable = usableMemo.get(outcome);
    if (usable === undefined) {
      const clean = outcome.clean;
      const trusted =
        clean !== null && (outcome.digest === digest || sameOrder(Object.keys(clean))) && stable.every((nodeId) => clean[nodeId]?.outcome === 'passed');
      usable = {
        collection: outcome.collection === 'ok',
        positions: checkpointIds.map((nodeId, index) => (trusted && outcome.checkpoints[index] === 'ok' ? (positions.get(nodeId) ?? null) : null)),
      };
      usableMemo.set(outcome, usable);
    }
    return usable;
  };

  const workers: WarmWorker[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.allSettled(workers.map((worker) => worker.close()));
  };
  let facts: WarmFacts | undefined;
  const pinned = hasPinnedHashSeed(options.profile);
  /**
   * Each worker's preload. With a code cache the first worker preloads alone and the others
   * then read the rewrites it added instead of making them again.
   */
  const preloading = (modules: readonly string[]): Promise<string[]>[] => {
    const [first, ...rest] = workers;
    if (options.codeCache === undefined || first === undefined) return workers.map((worker) => worker.preload(modules));
    const lead = first.preload(modules);
    return [lead, ...rest.map((worker) => lead.then(() => worker.preload(modules), () => worker.preload(modules)))];
  };
  const warnTainted = (tainted: readonly string[][]): void => {
    if (tainted.some((inside) => inside.length > 0)) logger.warn('preloading imported project modules; running without a preload', { modules: tainted.flat().slice(0, 10) });
  };
  const preloadAll = async (modules: readonly string[]): Promise<void> => warnTainted(await Promise.all(preloading(modules)));
  const startWorkers = async (count: number): Promise<void> => {
    const started = await Promise.allSettled(Array.from({ length: count }, () => startWarmWorker(workerOptions)));
    for (const result of started) if (result.status === 'fulfilled') workers.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  };
  // Every warm clean run of the suite: a stable test that passed in one and not in another flips.
  const warmRuns: Readonly<Record<string, { outcome: string }>>[] = [];
  /**
   * Whether a warm clean run ended at a stable test past its own limit: a hang the baseline's
   * runs did not have (a multiprocessing pool under load). Such a run says nothing of how the
   * later tests behave warm and leaves no checkpoint past the hang; in the suite's last test,
   * it alone would count that test as behaving otherwise warm.
   */
  const stoppedAtLimit = (results: Readonly<Record<string, TestResult>> | null): results is Readonly<Record<string, TestResult>> =>
    results !== null && stable.some((nodeId) => results[nodeId]?.timedOut === true);
  /**
   * Runs a warm clean run once more where the first ended at a limit (see {@link stoppedAtLimit});
   * the first stays among the warm runs, so a test that hangs once and passes the second time
   * flips between them and counts as flaky, as one that fails once does.
   */
  const againWhereStopped = async <T>(first: T, results: (run: T) => Readonly<Record<string, TestResult>> | null, again: () => Promise<T>): Promise<T> => {
    const stopped = results(first);
    if (!stoppedAtLimit(stopped)) return first;
    warmRuns.push(stopped);
    logger.warn('a warm clean run stopped at a test past its own limit; running it again', {
      tests: Object.keys(stopped).filter((nodeId) => stopped[nodeId]?.timedOut === true),
    });
    return again();
  };
  /** Each worker's clean run that leaves its checkpoints, once its own preload (`after[i]`) is done. */
  const collectAll = (analyzeFirst: boolean, after: readonly Promise<unknown>[] = []): Promise<CollectOutcome[]> =>
    Promise.all(
      workers.map(async (worker, index) => {
        try {
          await after[index];
          const collect = () => worker.collect({ checkpoints: checkpointIds, timeoutMs, analyze: analyzeFirst && index === 0 });
          return await againWhereStopped(await collect(), (outcome) => (outcome.ok ? outcome.clean : null), collect);
        } catch (error) {
          return { ok: false, why: describeError(error) } satisfies CollectOutcome;
        }
      }),
    );
  let warmFlaky: string[] = [];
  try {
    let collected: CollectOutcome[] | null = null;
    if (pinned) {
      // Under a pinned hash seed the baseline's coverage holds what each test ran, and the
      // first worker's clean run (which leaves its checkpoints) is the analysis run too.
      await startWorkers(concurrency);
      checkpointIds = chooseCheckpoints({ order, coverage: sourceCoverage(options.baseline.coverage, options.profile), alwaysRun: new Set(options.baseline.untraced), count: CHECKPOINTS });
      const preloads = preloading([]);
      collected = await collectAll(true, preloads);
      warnTainted(await Promise.all(preloads));
      for (const outcome of collected) if (outcome.ok) noteCleanRun(outcome.clean);
      const lead = collected[0];
      if (lead?.ok === true && lead.analysis !== undefined && lead.clean !== null) {
        facts = learnFacts({ ...options, baseline }, lead.analysis, lead.clean, entities);
        // Without the checkpoint before collection, candidates run from scratch: import once what they import.
        if (collected.some((outcome) => !outcome.ok || outcome.collection !== 'ok')) await preloadAll(lead.analysis.modules);
      }
    }
    if (facts === undefined) {
      if (workers.length === 0) await startWorkers(1);
      const analyze = () => (workers[0] as WarmWorker).run({ timeoutMs, analyze: pinned ? 'outside' : 'per-test' });
      const [firstRun] = await Promise.all([analyze(), startWorkers(concurrency - workers.length)]);
      const analysisRun = await againWhereStopped(firstRun, (run) => run.results, analyze);
      if (analysisRun.analysis === undefined || analysisRun.status !== 'completed') {
        throw new Error(`the clean suite did not complete in the warm interpreter (${analysisRun.status}): ${analysisRun.output}`);
      }
      noteCleanRun(analysisRun.results);
      warmRuns.push(analysisRun.results);
      facts = learnFacts({ ...options, baseline }, analysisRun.analysis, analysisRun.results, entities);
      await preloadAll(analysisRun.analysis.modules);
      if (collected === null) {
        checkpointIds = chooseCheckpoints({ order, coverage: sourceCoverage(facts.plan.coverage, options.profile), alwaysRun: facts.plan.alwaysRun, count: CHECKPOINTS });
        collected = await collectAll(false);
        for (const outcome of collected) if (outcome.ok) noteCleanRun(outcome.clean);
      }
    }
    for (const outcome of collected ?? []) if (outcome.ok && outcome.clean !== null) warmRuns.push(outcome.clean);
    // A test that times itself may fail in every warm clean run so far, the workers' runs at once
    // under load: before it sends every candidate the reference way, one more run on its own
    // tells such a flip from a test that behaves otherwise warm.
    if ([...facts.unstable].some((nodeId) => warmRuns.every((run) => run[nodeId]?.outcome !== 'passed'))) {
      warmRuns.push((await (workers[0] as WarmWorker).run({ timeoutMs })).results);
    }
    warmFlaky = flippedBetween(stablePassing(baseline), warmRuns);
    countFlaky(warmFlaky, facts.unstable);
    if (flaky.size > 0) logger.warn('tests that passed in one warm clean run and not in another are flaky: in no FAIL_TO_PASS or PASS_TO_PASS', { tests: [...flaky].slice(0, 10) });
    if (renamed.size > 0) logger.warn('tests that clean runs name otherwise (parameter ids made at import, from the time or a random value) are in no FAIL_TO_PASS or PASS_TO_PASS', { tests: [...renamed].slice(0, 10) });
    if (facts.unstable.size > 0) logger.warn('tests behave differently in the warm interpreter; candidates are validated the reference way', { tests: [...facts.unstable].slice(0, 10) });
    for (const outcome of collected ?? []) {
      if (!outcome.ok) logger.warn('the warm server kept no checkpoints of the clean suite; every candidate runs the whole suite from scratch', { why: outcome.why.slice(0, 500) });
      else if (!usableOf(outcome).positions.some((position) => position !== null)) logger.warn('no checkpoint at a test is usable; candidates run the whole suite', { collection: outcome.collection, checkpoints: outcome.checkpoints.slice(0, 3) });
    }
  } catch (error) {
    await closeAll();
    throw new EnvgenError('test-run-failed', `The fast validator could not start: ${describeError(error)}. Check the baseline with \`envgen env\`, or validate with the reference path.`, { cause: error });
  }
  const warm: WarmFacts = facts;
  // pytest imported these project files itself when the warm interpreters started (the project
  // is one of its dependencies): a fork inherits them clean, a fresh pytest imports them changed.
  // A change reaches a fork only as new code swapped into their functions at a checkpoint none
  // of it ran before (the server's own start included); else only a fresh interpreter runs it.
  const startupFiles = new Set(workers.flatMap((worker) => worker.startupFiles()));
  const importedAtStartup = (files: readonly ChangedFile[]): string | null => {
    const early = files.find((file) => startupFiles.has(file.path));
    return early === undefined ? null : `${early.path} is imported by pytest itself when it starts`;
  };

  const reference = async (input: ValidationInput, why: string, clock: Clock, declined?: string[]): Promise<ValidationOutcome> => {
    const verdict = await validateReference({ ...options, baseline, limits, candidate: input.candidate, files: input.files });
    clock.lap('reference');
    return { verdict, mode: 'reference', why, testsRun: order.length, ...(declined === undefined ? {} : { declined }), seconds: clock.total(), phases: clock.phases };
  };

  const runSuite = async (worker: WarmWorker, files: ChangedFile[], why: string, clock: Clock, declined?: string[]): Promise<ValidationOutcome> => {
    const { run, phases } = await worker.runWith(files, { timeoutMs });
    clock.add(phases);
    return {
      verdict: verdictOfRun(baseline, run),
      mode: 'suite',
      why,
      testsRun: Object.keys(run.results).length,
      ...(declined === undefined ? {} : { declined }),
      seconds: clock.total(),
      phases: clock.phases,
    };
  };

  /**
   * With `startup` (a file pytest imported when the warm server started, see
   * {@link importedAtStartup}): a checkpoint runs the changed functions' new code where none
   * of it ran yet, or the candidate goes the reference way; never a run from scratch.
   */
  const runResumed = async (input: ValidationInput, worker: WarmWorker, files: ChangedFile[], why: string, checkpoint: number, clock: Clock, startup: string | null): Promise<ValidationOutcome> => {
    const { run, phases } = await worker.runWith(files, { timeoutMs, resume: { changed: files.map((file) => file.path), checkpoint, ...(startup === null ? {} : { scratch: false as const }) } });
    clock.add(phases);
    if (run.fresh === true) return reference(input, `${why}; ${startup}`, clock, [run.declined ?? 'no checkpoint']);
    const declined = run.declined === undefined ? undefined : run.declined.split('; ');
    if (run.checkpoint === undefined) {
      return {
        verdict: verdictOfRun(baseline, run),
        mode: 'suite',
        why: `${why}; ${run.declined ?? 'no checkpoint'}`,
        testsRun: Object.keys(run.results).length,
        declined: declined ?? ['no checkpoint'],
        seconds: clock.total(),
        phases: clock.phases,
      };
    }
    const verdict = verdictOfRun(baseline, run);
    // A resumed run already past a limit is a timeout: a run from scratch, the same tests and more, would pass it too.
    const timedOut = verdict.kind === 'rejected' && verdict.reason === 'timeout';
    if (!timedOut && run.seconds > (timeoutMs / 1000) * RESUMED_SHARE_OF_LIMIT) {
      if (startup !== null) return reference(input, `${why}; resumed run near the limit; ${startup}`, clock, ['resumed run near the limit']);
      return runSuite(worker, files, `${why}; resumed run near the limit`, clock, ['resumed run near the limit']);
    }
    const at = run.checkpoint >= 0 ? (checkpointIds[run.checkpoint] ?? null) : null;
    return {
      verdict,
      mode: at === null ? 'suite' : 'resumed',
      why: `${why}; ${at === null ? 'from the checkpoint before collection' : `resumed at ${at}`}${run.declined === undefined ? '' : ` (${run.declined})`}`,
      testsRun: at === null ? order.length : order.length - (positions.get(at) ?? 0),
      resumedFrom: at ?? 'collection',
      ...(declined === undefined ? {} : { declined }),
      seconds: clock.total(),
      phases: clock.phases,
    };
  };

  const validateOn = async (worker: WarmWorker, input: ValidationInput): Promise<ValidationOutcome> => {
    const clock = startClock();
    const resolved = await resolveCandidateFiles(options.worktree, input.files);
    clock.lap('resolve');
    if (!resolved.ok) {
      return { verdict: { kind: 'rejected', reason: 'apply-failed', detail: resolved.detail }, mode: 'suite', why: 'bad files', testsRun: 0, seconds: clock.total(), phases: clock.phases };
    }
    const plan = planRun(resolved.files, warm.plan);
    clock.lap('plan');
    // Every run sees every stable test (those before a checkpoint through the clean run).
    if (warm.unstable.size > 0) return reference(input, `${plan.why}; tests behave differently warm`, clock);
    // A file pytest imported itself takes a change only inside the bodies of functions that run in tests.
    const startup = importedAtStartup(resolved.files);
    if (startup !== null && plan.mode !== 'covering') return reference(input, `${plan.why}; ${startup}`, clock, [startup]);
    const usable = usableOf(worker.collected());
    const start = plan.mode === 'covering' ? firstObserver(plan.entities, warm.plan.coverage, warm.plan.alwaysRun, positions) : null;
    const checkpoint = start === null ? -1 : pickCheckpoint(usable.positions, start);
    const resumable = usable.collection || checkpoint >= 0;
    if (startup !== null && !resumable) return reference(input, `${plan.why}; ${startup}`, clock, [noCheckpointWhy(worker.collected())]);
    try {
      return resumable
        ? await runResumed(input, worker, resolved.files, plan.why, checkpoint, clock, startup)
        : await runSuite(worker, resolved.files, plan.why, clock, [noCheckpointWhy(worker.collected())]);
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
      const done: Promise<void> = job
        .work(worker)
        .then(job.resolve, job.reject)
        .finally(() => {
          running.delete(done);
          idle.push(worker);
          pump();
        });
      running.add(done);
    }
  };

  const schedule = <T>(work: (worker: WarmWorker) => Promise<T>): Promise<T> => {
    if (closed) return Promise.reject(new EnvgenError('usage', 'This validator was closed: create a new one to validate more candidates.'));
    return new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      pump();
    });
  };
  const validateWithDetails = async (input: ValidationInput): Promise<ValidationOutcome> => {
    const outcome = await schedule((worker) => validateOn(worker, input));
    return { ...outcome, verdict: internalErrorOfBug(outcome.verdict, input.files.map((file) => file.path)) };
  };

  /**
   * Runs changed `files` from the checkpoint before collection through `runs` (one warm run
   * or more), or says why no warm interpreter can: a file pytest imports when it starts, or
   * a warm interpreter that failed (then restarted).
   */
  const fromCollection = async (
    worker: WarmWorker,
    files: readonly MutatedFile[],
    runs: (changed: ChangedFile[], resume: { changed: string[]; checkpoint: number; scratch?: false }) => Promise<WarmRun>,
  ): Promise<{ ok: true; run: WarmRun } | { ok: false; reason: string }> => {
    const resolved = await resolveCandidateFiles(options.worktree, files);
    if (!resolved.ok) return { ok: false, reason: resolved.detail };
    const startup = importedAtStartup(resolved.files);
    try {
      const run = await runs(resolved.files, { changed: resolved.files.map((file) => file.path), checkpoint: -1, ...(startup === null ? {} : { scratch: false as const }) });
      if (run.fresh === true) return { ok: false, reason: `${startup}: only a fresh interpreter runs it changed (${run.declined ?? 'no checkpoint'})` };
      return { ok: true, run };
    } catch (error) {
      logger.warn('the warm interpreter failed; restarting it', { error: describeError(error) });
      await worker.reset();
      return { ok: false, reason: `the warm interpreter failed: ${describeError(error)}` };
    }
  };

  const runSelectedOn = async (worker: WarmWorker, files: readonly MutatedFile[], select: readonly string[], only: readonly string[]): Promise<SelectedRun> => {
    const selected = await fromCollection(worker, files, async (changed, resume) => {
      const runOptions = { timeoutMs, resume, select, only };
      // Usually no `only` test is still collected: plain asserts tell that for a compile of the
      // changed test files instead of pytest's rewrite. When one ran, its outcome counts: again with rewriting.
      let { run } = await worker.runWith(changed, { ...runOptions, plain: true });
      if (Object.keys(run.results).length > 0) ({ run } = await worker.runWith(changed, runOptions));
      logger.debug('selected run', { checkpoint: run.checkpoint, declined: run.declined, seconds: run.seconds });
      return run;
    });
    if (!selected.ok) return selected;
    const { run } = selected;
    const failed = verdictOfStatus(run);
    return failed === null ? { ok: true, results: run.results, uncollected: run.collectionErrors.map((error) => error.nodeid) } : { ok: false, reason: failed.kind === 'rejected' ? `${failed.reason}: ${failed.detail}` : 'the run failed' };
  };

  const failureOutputOn = async (worker: WarmWorker, files: readonly MutatedFile[], nodeIds: readonly string[]): Promise<string | null> => {
    // Tests that behave otherwise warm send every verdict the reference way: their output too.
    if (warm.unstable.size > 0) return null;
    const output = (shrink: boolean) => fromCollection(worker, files, async (changed, resume) => (await worker.runWith(changed, { timeoutMs, resume, select: nodeIds, tbstyle: 'short', shrink })).run);
    const shrunk = await output(true);
    // Hypothesis shrank a failing example past the test's limit (stopped by its alarm, or by the
    // watchdog where a busy machine delayed the alarm): the first failing example it finds instead.
    const timedOut = shrunk.ok && (shrunk.run.status === 'timeout' || nodeIds.some((nodeId) => shrunk.run.results[nodeId]?.timedOut === true));
    const ran = timedOut ? await output(false) : shrunk;
    if (!ran.ok) return null;
    const { run } = ran;
    logger.debug('failure output run', { checkpoint: run.checkpoint, declined: run.declined, seconds: run.seconds });
    // Only the output of the failures the verdict saw: a test that passed or went missing here reruns cold.
    const failed = nodeIds.every((nodeId) => ['failed', 'error'].includes(run.results[nodeId]?.outcome ?? 'missing'));
    return run.status === 'completed' && failed ? (run.report ?? null) : null;
  };

  return {
    validateWithDetails,
    validate: async (input) => (await validateWithDetails(input)).verdict,
    runSelected: (files, select, only) => schedule((worker) => runSelectedOn(worker, files, select, only)),
    failureOutput: (files, nodeIds) => schedule((worker) => failureOutputOn(worker, files, nodeIds)),
    warmFlaky,
    noteFlaky(nodeIds) {
      countFlaky(nodeIds, warm.unstable);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const job of queue.splice(0)) job.reject(new EnvgenError('usage', 'The validator was closed before this candidate ran: validate before closing.'));
      await Promise.allSettled([...running]);
      await closeAll();
    },
  };
}
