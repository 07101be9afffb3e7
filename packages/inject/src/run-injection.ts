import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { createRng, makeInstanceId, silentLogger, volatileIds } from '@envgen/core';
import type { BundleFiles, Candidate, Instance, Logger, RejectionReason, Verdict } from '@envgen/core';
import { bundleRunLimits, checkBundle, createBundleRunner, makeTestParser, makeTestScript, makeTestWeaken } from '@envgen/bundle';
import type { BundleCheckReport, BundleRun, BundleRunLimits, BundleRunner } from '@envgen/bundle';
import type { Strategy } from '@envgen/mutate';
import type { PatchedFile } from '@envgen/patch';
import { hashPatch } from '@envgen/pool';
import type { CleanRunKey, Pool } from '@envgen/pool';
import { extractEntities } from '@envgen/python';
import { profileHash } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import type { Baseline } from '@envgen/testrun';
import { createValidator, flippedIds, stablePassing, withFlaky } from '@envgen/validate';
import type { ValidationOutcome, Validator } from '@envgen/validate';
import { combineCandidates } from './combine-candidates.js';
import { mutatedFiles } from './failure-outputs.js';
import type { CombinableBug } from './combine-candidates.js';
import { planCandidates } from './plan-candidates.js';
import type { DroppedAttempt, PlannedCandidate } from './plan-candidates.js';
import { createProvenRunner } from './proven-runner.js';
import { selectSites } from './sites.js';
import type { Site, SourceFile } from './sites.js';

/** Everything one injection run works on. */
export interface RunInjectionOptions {
  repo: { owner: string; name: string; commit: string };
  /** Clean checkout of `repo.commit` the baseline was built from; never modified. */
  worktree: string;
  profile: Profile;
  baseline: Baseline;
  sandboxProvider: SandboxProvider;
  pool: Pool;
  /** Candidates to try (each validated, or skipped when the pool already knows its verdict). */
  count: number;
  /**
   * Validate exactly these candidates (the first `count`) instead of planning them from
   * the strategies: benches compare pipelines on one candidate list.
   */
  candidates?: readonly PlannedCandidate[];
  seed: number;
  strategies: readonly Strategy[];
  /**
   * Candidates per strategy name, instead of `count` shared by turns: each strategy plans its
   * own stream, seeded by the run's seed and its name, and gives its first n candidates. A
   * strategy's candidates then do not depend on which other strategies run beside it, so a
   * growth round may split its arms over shards and get the same bugs.
   */
  quotas?: Readonly<Record<string, number>>;
  /** Combinations of this run's bugs to try after the main candidates (default: a tenth of count). */
  combine?: number;
  /** Parallel sandboxes of the validator (default: the cores). */
  concurrency?: number;
  /** The validator's code cache directory (see `ValidatorOptions.codeCache`), e.g. `<home>/code-cache`. */
  codeCache?: string;
  /**
   * Filled with pytest's output (`--tb=short`) of the first `tests` sorted FAIL_TO_PASS
   * tests of each instance this run adds, run with the bug in the validator's warm
   * interpreters: the failure output its task's problem statement shows (see `buildTasks`),
   * which tasks would otherwise run cold. An instance the warm interpreters could not run
   * (checked cold, or the run did not complete) is left out.
   */
  failureOutputs?: { tests: number; into: Map<string, string> };
  logger?: Logger;
  onProgress?: (event: InjectionProgress) => void;
}

export type InjectionProgress =
  | { kind: 'start'; total: number }
  | { kind: 'candidate'; strategy: string; outcome: CandidateOutcome['status'] };

/** What happened to one candidate. */
export type CandidateOutcome =
  | { status: 'kept'; instanceId: string }
  | { status: 'known'; instanceId: string }
  | {
      status: 'rejected';
      reason: RejectionReason;
      detail: string;
      remembered: boolean;
      /** Rejected after the validator proved it: a disagreement, i.e. a bug in envgen. */
      afterVerdict?: boolean;
    };

export interface StrategyTally {
  tried: number;
  kept: number;
  known: number;
  rejected: number;
}

/** The summary `envgen inject` prints. */
export interface InjectionReport {
  repo: string;
  commit: string;
  seed: number;
  /** Where bugs may go; `linesKnown`: strategies pick sites among the lines the clean suite ran (false: the suite displaced the line tracer, so anywhere in a covered entity). */
  sites: { covered: number; skippedUncovered: number; linesKnown: boolean };
  /** Attempts dropped before any test ran, by reason. */
  dropped: Record<string, number>;
  /** Candidates that went to validation (or were answered from the pool). */
  tried: number;
  /** New instances added to the pool by this run. */
  kept: number;
  /** Candidates already in the pool (same id): nothing added twice. */
  known: number;
  rejected: Record<string, number>;
  byStrategy: Record<string, StrategyTally>;
  /** Instances this run added. */
  instanceIds: string[];
  /** Instances this run's candidates turned out to be that the pool already held. */
  knownIds: string[];
  seconds: number;
  /** Wall seconds per kept instance (null when none was kept). */
  secondsPerKept: number | null;
  /**
   * How the validator reached its verdicts: resumed at a checkpoint inside the suite, from
   * the checkpoint before collection, the whole suite from scratch, or the reference way;
   * and, by reason, why a checkpoint could not serve a candidate.
   */
  validation: { resumed: number; collection: number; scratch: number; reference: number; declined: Record<string, number> };
  /**
   * Candidates the validator proved that a later step still rejected (the weakening or the
   * bundle's checks disagreeing with the verdict): each is a bug in envgen, shown with its detail.
   */
  afterVerdict: Array<{ strategy: string; reason: RejectionReason; detail: string }>;
  /** Every candidate this run rejected, in the order they were decided: what it changed and why it is no instance. */
  rejections: Array<{ strategy: string; description: string; reason: RejectionReason; detail: string }>;
  /**
   * The first bundle kept in this run, checked again cold with its own test_script.sh and
   * test_parser.py in fresh sandboxes: proof that the checks answered from the validator's
   * runs agree with the bundle's own. When they disagree, every later bundle is checked cold.
   * A first bundle validated the reference way is not checked twice: its checks, run cold but
   * for the clean run, are compared with its verdict.
   */
  replay: { strategy: string; agreed: boolean; detail: string; seconds: number } | null;
  /**
   * The bundle script's cold run on the clean repo (the evidence of checks 2 and 3): its
   * seconds, whether it came from the pool, where an earlier injection of this commit
   * left it, and the stable tests of the baseline it did not see pass, counted flaky in this
   * run (null when it did not run through).
   */
  cleanRun: { seconds: number; cached: boolean; flaky: string[] } | null;
  /**
   * Tests that changed outcome between two runs of one bug's tree: a cold run of its bundle's
   * script and the verdict disagreed on them, and running both again changed them. Flaky by
   * the baseline's own definition, they count as flaky from then on (in no later FAIL_TO_PASS
   * or PASS_TO_PASS) and their candidate is judged again without them.
   */
  flipped: string[];
  /**
   * Stable tests of the baseline that passed in one of the validator's warm clean runs and
   * not in another, flaky from its start (in no FAIL_TO_PASS or PASS_TO_PASS); empty when no
   * candidate needed the validator.
   */
  warmFlaky: string[];
}

/**
 * The profile's source files with their entities, the lines the baseline saw run (a file
 * with no line of it seen, while the baseline knows lines, has no covered entity either) and
 * those that had run when its first test began.
 */
async function readSourceFiles(worktree: string, paths: readonly string[], baseline: Baseline): Promise<SourceFile[]> {
  const files: SourceFile[] = [];
  for (const path of paths) {
    const source = await readFile(join(worktree, path), 'utf8').catch(() => null);
    if (source === null) continue;
    const lines = baseline.executedLines?.[path];
    // Known for every file once lines are: a file none of whose lines ran at collection has no entry.
    const collection = lines && baseline.collectionLines ? (baseline.collectionLines[path] ?? []) : undefined;
    files.push({
      path,
      source,
      entities: extractEntities(source, path).entities,
      ...(lines ? { executedLines: new Set(lines) } : {}),
      ...(collection ? { collectionLines: new Set(collection) } : {}),
    });
  }
  return files;
}

function tally(report: InjectionReport, strategy: string): StrategyTally {
  const entry = report.byStrategy[strategy] ?? { tried: 0, kept: 0, known: 0, rejected: 0 };
  report.byStrategy[strategy] = entry;
  return entry;
}

/** Runs `limit` tasks at a time over `items`, in order of submission. */
async function forEachConcurrent<T>(items: Iterable<T>, limit: number, task: (item: T) => Promise<void>): Promise<void> {
  const running = new Set<Promise<void>>();
  for (const item of items) {
    const promise = task(item).finally(() => running.delete(promise));
    running.add(promise);
    if (running.size >= limit) await Promise.race(running);
  }
  await Promise.all(running);
}

/**
 * One injection run: choose covered sites, propose candidates with every strategy (seeded),
 * validate them fast and exactly, weaken the exposing tests, check each bundle's seven
 * consistency checks, and add the proven bugs to the pool. Candidates the pool already
 * holds (same id) or already rejected (same patch, commit and profile) are not validated
 * again, so a rerun with the same seed adds nothing twice and resumes where it stopped.
 */
export async function runInjection(options: RunInjectionOptions): Promise<InjectionReport> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const progress = options.onProgress ?? (() => undefined);
  const { repo, profile } = options;
  const files = await readSourceFiles(options.worktree, profile.sourceFiles, options.baseline);
  const { sites, skippedUncovered } = selectSites(files, options.baseline);
  const report: InjectionReport = {
    repo: `${repo.owner}/${repo.name}`,
    commit: repo.commit,
    seed: options.seed,
    sites: { covered: sites.length, skippedUncovered, linesKnown: options.baseline.executedLines !== null },
    dropped: {},
    tried: 0,
    kept: 0,
    known: 0,
    rejected: {},
    byStrategy: {},
    instanceIds: [],
    knownIds: [],
    seconds: 0,
    secondsPerKept: null,
    validation: { resumed: 0, collection: 0, scratch: 0, reference: 0, declined: {} },
    afterVerdict: [],
    rejections: [],
    replay: null,
    cleanRun: null,
    flipped: [],
    warmFlaky: [],
  };
  const noteValidation = (outcome: ValidationOutcome): void => {
    const key = outcome.mode === 'reference' ? 'reference' : outcome.mode === 'resumed' ? 'resumed' : outcome.resumedFrom === 'collection' ? 'collection' : 'scratch';
    report.validation[key] += 1;
    for (const why of outcome.declined ?? []) report.validation.declined[why] = (report.validation.declined[why] ?? 0) + 1;
  };
  const rejectionScope = { repo: report.repo, commit: repo.commit, profileHash: verdictScope(profile, options.baseline) };
  const script = makeTestScript(profile);
  const parser = makeTestParser();
  // Every cold run of the bundle's script and parser: the suite's limits, its size known.
  const limits = bundleRunLimits(profile.timeoutMs, Object.keys(options.baseline.results).length);

  // The bundle's own script and parser on the clean repo, once (evidence for checks 2 and 3),
  // while candidates are planned and the validator starts.
  const prepared = runCleanBundle(options, script, parser, limits);
  prepared.then(({ clean, cached, flipped }) => {
    if (clean.ok) report.cleanRun = { seconds: clean.seconds, cached, flaky: flipped };
  }, () => undefined);

  const planned = options.candidates
    ? options.candidates.slice(0, options.count)
    : options.quotas
      ? await takeQuotas(files, sites, options.strategies, options.quotas, options.seed, report)
      : await takeCandidates(planCandidates({ files, sites, strategies: options.strategies, seed: options.seed }), options.count, report);
  const combineCount = options.combine ?? Math.floor(options.count / 10);
  progress({ kind: 'start', total: planned.length + combineCount });

  // Started on first need: a rerun whose candidates the pool already knows validates nothing.
  const lazy: { validator: Promise<Validator> | null } = { validator: null };
  const validator = (): Promise<Validator> => {
    lazy.validator ??= startValidator(options, logger, prepared).then((started) => {
      report.warmFlaky = [...started.warmFlaky];
      return started;
    });
    return lazy.validator;
  };
  const keptBugs: CombinableBug[] = [];
  const replay: ReplayState = { claimed: false, cold: false, report };
  const flips: FlipState = { learnt: new Set(), report };
  try {
    const handle = async ({ candidate, files: changed }: PlannedCandidate): Promise<void> => {
      const outcome = await proveCandidate({ ...options, validator, prepared, script, parser, limits, rejectionScope, noteValidation, replay, flips }, candidate, changed);
      const entry = tally(report, candidate.strategy);
      report.tried += 1;
      entry.tried += 1;
      if (outcome.status === 'kept') {
        report.kept += 1;
        entry.kept += 1;
        report.instanceIds.push(outcome.instanceId);
      } else if (outcome.status === 'known') {
        report.known += 1;
        entry.known += 1;
        report.knownIds.push(outcome.instanceId);
      } else {
        entry.rejected += 1;
        report.rejected[outcome.reason] = (report.rejected[outcome.reason] ?? 0) + 1;
        report.rejections.push({ strategy: candidate.strategy, description: candidate.description, reason: outcome.reason, detail: outcome.detail });
        if (outcome.afterVerdict) report.afterVerdict.push({ strategy: candidate.strategy, reason: outcome.reason, detail: outcome.detail });
      }
      if (outcome.status !== 'rejected') keptBugs.push({ instanceId: outcome.instanceId, candidate, files: changed });
      progress({ kind: 'candidate', strategy: candidate.strategy, outcome: outcome.status });
    };
    const concurrency = Math.max(1, options.concurrency ?? 2);
    await forEachConcurrent(planned, concurrency, handle);
    keptBugs.sort((a, b) => (a.instanceId < b.instanceId ? -1 : 1));
    const combined = combineCandidates(keptBugs, createRng(`${options.seed}/combine`), { count: combineCount });
    await forEachConcurrent(combined, concurrency, handle);
  } finally {
    if (lazy.validator !== null) await (await lazy.validator).close();
  }
  // A clean run that could not start at all fails the injection, as it did before any candidate ran.
  await prepared;
  report.instanceIds.sort();
  report.knownIds.sort();
  report.seconds = (performance.now() - started) / 1000;
  report.secondsPerKept = report.kept > 0 ? report.seconds / report.kept : null;
  return report;
}

/**
 * The first `count` candidates of the stream, counting drops. Yields to the event loop after
 * every attempt: tree-sitter's binding frees parsed trees only when the loop turns, so a
 * long synchronous run of parses would grow memory without bound.
 */
async function takeCandidates(stream: Iterable<PlannedCandidate | DroppedAttempt>, count: number, report: InjectionReport): Promise<PlannedCandidate[]> {
  const planned: PlannedCandidate[] = [];
  if (count <= 0) return planned;
  for (const item of stream) {
    await setImmediatePromise();
    if (item.kind === 'dropped') {
      report.dropped[item.reason] = (report.dropped[item.reason] ?? 0) + 1;
      continue;
    }
    planned.push(item);
    if (planned.length >= count) break;
  }
  return planned;
}

/** Each strategy's first `quotas[name]` candidates from its own stream (see {@link RunInjectionOptions.quotas}). */
async function takeQuotas(
  files: readonly SourceFile[],
  sites: readonly Site[],
  strategies: readonly Strategy[],
  quotas: Readonly<Record<string, number>>,
  seed: number,
  report: InjectionReport,
): Promise<PlannedCandidate[]> {
  const planned: PlannedCandidate[] = [];
  for (const strategy of strategies) {
    const quota = quotas[strategy.name] ?? 0;
    if (quota <= 0) continue;
    const ownSeed = createRng(`${seed}/${strategy.name}`).int(2 ** 31);
    planned.push(...(await takeCandidates(planCandidates({ files, sites, strategies: [strategy], seed: ownSeed }), quota, report)));
  }
  return planned;
}

/** The bundle script's cold clean run, and the baseline with the tests it names otherwise or saw flip counted as flaky. */
interface Prepared {
  clean: BundleRun;
  /** The run came from the pool (an earlier injection of this commit made it). */
  cached: boolean;
  /** Stable tests of the baseline this run did not see pass ({@link flippedIds}). */
  flipped: string[];
  baseline: Baseline;
}

/**
 * What besides the commit and the patch decides a verdict: the profile and the packages its
 * python saw when the baseline was made (a rejection remembered, or a clean run kept, before
 * a package was installed says nothing of the suite after).
 */
function verdictScope(profile: Profile, baseline: Baseline): string {
  return baseline.environment === undefined ? profileHash(profile) : createHash('sha256').update(`${profileHash(profile)}\n${baseline.environment}`).digest('hex');
}

/**
 * Where the pool keeps the bundle script's cold clean run of a commit: per repo, commit,
 * profile and packages, script and parser, and kind of sandbox (see {@link runInjection}).
 */
export function cleanRunKey(options: Pick<RunInjectionOptions, 'repo' | 'profile' | 'sandboxProvider' | 'baseline'>): CleanRunKey {
  return {
    repo: `${options.repo.owner}/${options.repo.name}`,
    commit: options.repo.commit,
    profileHash: verdictScope(options.profile, options.baseline),
    scriptHash: createHash('sha256').update(JSON.stringify([makeTestScript(options.profile), makeTestParser(), options.sandboxProvider.kind])).digest('hex'),
  };
}

/**
 * The bundle's own script and parser on the clean repo, once per commit, profile, script
 * and kind of sandbox: run cold and kept in the pool when every stable test of the baseline
 * passed in it (a run that disagrees with the baseline is made again by the next
 * injection, not kept). Tests this run names otherwise than the baseline did (parameter ids
 * made from the time) can be in no FAIL_TO_PASS or PASS_TO_PASS: no other run would find them;
 * nor can the stable tests it did not see pass: they flip between clean runs (flaky).
 */
async function runCleanBundle(options: RunInjectionOptions, script: string, parser: string, limits: BundleRunLimits): Promise<Prepared> {
  const key = cleanRunKey(options);
  const prepare = (clean: BundleRun, cached: boolean): Prepared => {
    const flipped = clean.ok ? flippedIds(options.baseline, clean.results) : [];
    const renamed = clean.ok ? volatileIds(Object.keys(options.baseline.results), Object.keys(clean.results)) : [];
    return { clean, cached, flipped, baseline: withFlaky(options.baseline, [...renamed, ...flipped]) };
  };
  const known = options.pool.getCleanRun(key);
  if (known !== undefined) return prepare({ ok: true, label: 'clean repo', results: known.results, seconds: known.seconds }, true);
  const runner = await createBundleRunner({
    bundle: { 'bug_inject.diff': '', 'test_weaken.diff': '', 'test_files.txt': '', 'test_script.sh': script, 'test_parser.py': parser },
    worktree: options.worktree,
    python: options.profile.python,
    sandboxProvider: options.sandboxProvider,
    limits,
  });
  try {
    const clean = await runner.run('clean repo', []);
    if (clean.ok && stablePassing(options.baseline).every((nodeId) => clean.results[nodeId] === 'passed')) {
      options.pool.putCleanRun(key, { results: clean.results, seconds: clean.seconds });
    }
    return prepare(clean, false);
  } finally {
    await runner.close();
  }
}

/** The validator, started beside the bundle's clean run; it takes that run's renamed tests in before any verdict. */
async function startValidator(options: RunInjectionOptions, logger: Logger, prepared: Promise<Prepared>): Promise<Validator> {
  const [started, clean] = await Promise.allSettled([
    createValidator({
      worktree: options.worktree,
      profile: options.profile,
      baseline: options.baseline,
      sandboxProvider: options.sandboxProvider,
      logger,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.codeCache === undefined ? {} : { codeCache: options.codeCache }),
    }),
    prepared,
  ]);
  if (started.status === 'rejected') throw started.reason;
  if (clean.status === 'rejected') {
    await started.value.close();
    throw clean.reason;
  }
  started.value.noteFlaky(clean.value.baseline.flaky);
  return started.value;
}

interface ProveContext extends RunInjectionOptions {
  validator: () => Promise<Validator>;
  prepared: Promise<Prepared>;
  script: string;
  parser: string;
  limits: BundleRunLimits;
  rejectionScope: { repo: string; commit: string; profileHash: string };
  noteValidation: (outcome: ValidationOutcome) => void;
  replay: ReplayState;
  flips: FlipState;
}

/** Tests learnt flaky from two runs of one bug's tree (see {@link InjectionReport.flipped}). */
interface FlipState {
  learnt: Set<string>;
  report: InjectionReport;
}

/** The run's one cold replay of a kept bundle (see {@link InjectionReport.replay}). */
interface ReplayState {
  claimed: boolean;
  /** The replay disagreed: every later bundle's checks run cold. */
  cold: boolean;
  report: InjectionReport;
}

/**
 * The bundle's own script and parser in fresh sandboxes, but for the clean tree's run: the
 * cold one this inject made at its start (or an earlier inject of this commit) with the same
 * script and parser.
 */
async function coldRunner(context: ProveContext, prepared: Prepared, bundle: BundleFiles): Promise<BundleRunner> {
  const fresh = await createBundleRunner({
    bundle,
    worktree: context.worktree,
    python: context.profile.python,
    sandboxProvider: context.sandboxProvider,
    limits: context.limits,
  });
  return { run: (label, files) => (files.length === 0 ? Promise.resolve({ ...prepared.clean, label }) : fresh.run(label, files)), close: () => fresh.close() };
}

/** The tests a cold run of a bug's tree and its verdict disagree on: FAIL_TO_PASS the run did not see fail, and tests it saw fail that the verdict did not (flaky tests aside). */
function disagreeingTests(cold: BundleCheckReport, failToPass: readonly string[], flaky: ReadonlySet<string>): { missed: string[]; extra: string[] } {
  const broken = new Set(cold.brokenTests);
  return {
    missed: failToPass.filter((id) => !broken.has(id)),
    extra: cold.brokenTests.filter((id) => !failToPass.includes(id) && !flaky.has(id)),
  };
}

/** Whether checks run cold pass and break the tests the validator found (flaky tests may differ). */
function coldAgreement(cold: BundleCheckReport, failToPass: readonly string[], flaky: ReadonlySet<string>): { agreed: boolean; detail: string } {
  const { missed, extra } = disagreeingTests(cold, failToPass, flaky);
  const failing = cold.checks.filter((check) => !check.passed).map((check) => `${check.name}: ${check.evidence}`);
  if (failing.length === 0 && missed.length === 0 && extra.length === 0) {
    return { agreed: true, detail: `the bundle's own script breaks the same ${failToPass.length} test(s) and passes all seven checks` };
  }
  const parts = [
    ...failing,
    ...(missed.length > 0 ? [`FAIL_TO_PASS tests the bundle's script does not see fail: ${missed.slice(0, 5).join(', ')}`] : []),
    ...(extra.length > 0 ? [`tests the bundle's script sees fail that the validator did not: ${extra.slice(0, 5).join(', ')}`] : []),
  ];
  return { agreed: false, detail: `cold replay disagrees with the validator: ${parts.join('; ')}` };
}

/** The tests counted flaky in this run so far: the baseline's, the clean run's, the validator's warm clean runs', and those learnt from flips. */
function flakyNow(context: ProveContext, prepared: Prepared): Set<string> {
  return new Set([...prepared.baseline.flaky, ...context.flips.report.warmFlaky, ...context.flips.learnt]);
}

/**
 * Whether a cold run of a bug's tree (`cold`, the checks of its bundle) and its verdict
 * disagree only on tests that flip: both run again (the bundle's script cold, the verdict in
 * the validator), and every test they disagreed on changed its outcome on one side or the
 * other, as a flaky test does between runs of one tree. Returns those tests, or null when
 * they agree or some test kept its outcome on both sides (a real disagreement).
 */
async function flippedTests(context: ProveContext, prepared: Prepared, bundle: BundleFiles, candidate: Candidate, files: PatchedFile[], failToPass: readonly string[], cold: BundleCheckReport): Promise<string[] | null> {
  const { missed, extra } = disagreeingTests(cold, failToPass, flakyNow(context, prepared));
  const tests = [...missed, ...extra];
  if (tests.length === 0) return null;
  const validator = await context.validator();
  const runner = await coldRunner(context, prepared, bundle);
  let again: BundleRun;
  let verdict: Verdict;
  try {
    [again, verdict] = await Promise.all([runner.run('with the bug, again', files), validator.validate({ candidate, files: mutatedFiles(files) })]);
  } finally {
    await runner.close();
  }
  if (!again.ok) return null;
  const brokenCold = new Set(cold.brokenTests);
  const brokenWarm = new Set(failToPass);
  // A verdict that ends otherwise than with failing tests (a timeout, a crash) says nothing of them.
  const brokenWarmAgain = verdict.kind === 'instance' ? new Set(verdict.failToPass) : verdict.reason === 'no-failing-test' ? new Set<string>() : null;
  const flipsCold = (id: string): boolean => !['passed', 'skipped'].includes(again.results[id] ?? 'missing') !== brokenCold.has(id);
  const flipsWarm = (id: string): boolean => brokenWarmAgain !== null && brokenWarmAgain.has(id) !== brokenWarm.has(id);
  return tests.every((id) => flipsCold(id) || flipsWarm(id)) ? tests : null;
}

/**
 * Counts `tests` flaky for the rest of the run (the validator's verdicts, the cold checks'
 * comparisons) and proves the candidate again without them, once.
 */
async function proveWithout(context: ProveContext, tests: readonly string[], candidate: Candidate, files: PatchedFile[]): Promise<CandidateOutcome> {
  (await context.validator()).noteFlaky(tests);
  for (const id of tests) {
    if (context.flips.learnt.has(id)) continue;
    context.flips.learnt.add(id);
    context.flips.report.flipped.push(id);
  }
  return proveCandidate(context, candidate, files, true);
}

/** Checks `bundle` cold (see {@link coldRunner}) and compares the tests its bug breaks with the validator's FAIL_TO_PASS. */
async function replayCold(context: ProveContext, prepared: Prepared, bundle: BundleFiles, failToPass: readonly string[]): Promise<{ agreed: boolean; detail: string; seconds: number; cold: BundleCheckReport }> {
  const started = performance.now();
  const runner = await coldRunner(context, prepared, bundle);
  let cold: BundleCheckReport;
  try {
    cold = await checkBundle({ bundle, worktree: context.worktree, profile: context.profile, sandboxProvider: context.sandboxProvider, limits: context.limits, runner });
  } finally {
    await runner.close();
  }
  return { ...coldAgreement(cold, failToPass, flakyNow(context, prepared)), seconds: (performance.now() - started) / 1000, cold };
}

/**
 * Validates, weakens, checks and pools one candidate. A candidate proved again after tests
 * flipped (`again`) learns no more flips: a second disagreement is reported as one.
 */
async function proveCandidate(context: ProveContext, candidate: Candidate, files: PatchedFile[], again = false): Promise<CandidateOutcome> {
  const { repo, pool, profile } = context;
  const instanceId = makeInstanceId({ owner: repo.owner, name: repo.name, commit: repo.commit, strategy: candidate.strategy, patch: candidate.patch });
  if (pool.hasInstance(instanceId)) {
    if (pool.getInstance(instanceId)?.patch === candidate.patch) return { status: 'known', instanceId };
    return { status: 'rejected', reason: 'id-collision', detail: `another bug already has the id ${instanceId} (its 32-bit patch hash collided)`, remembered: false };
  }
  const key = { ...context.rejectionScope, patchHash: hashPatch(candidate.patch) };
  const known = pool.getRejection(key);
  if (known) return { status: 'rejected', reason: known.reason, detail: known.detail, remembered: true };
  const reject = (reason: RejectionReason, detail: string, afterVerdict = false): CandidateOutcome => {
    pool.markRejected(key, reason, detail);
    return { status: 'rejected', reason, detail, remembered: false, ...(afterVerdict ? { afterVerdict } : {}) };
  };

  const validator = await context.validator();
  const outcome = await validator.validateWithDetails({ candidate, files: mutatedFiles(files) });
  // A candidate proved again counts once among the verdicts.
  if (!again) context.noteValidation(outcome);
  const verdict = outcome.verdict;
  if (verdict.kind === 'rejected') return reject(verdict.reason, verdict.detail);
  const prepared = await context.prepared;
  const { clean } = prepared;
  if (!clean.ok) return reject('check-failed', `the bundle's test script does not run on the clean repo: ${clean.reason}`, true);

  const readClean = (path: string) => readFile(join(context.worktree, path), 'utf8').catch(() => null);
  // The tests counted flaky that the bug made fail are deleted too: a cold run of the weakened
  // suite where they do not flake would see the bug through them (check 6). One the weakening
  // cannot find is left, as it is in no FAIL_TO_PASS.
  const flakyFailing = new Set(verdict.flakyFailing);
  const weaken = await makeTestWeaken({ readFile: readClean, failToPass: [...verdict.failToPass, ...flakyFailing], testFiles: profile.testFiles, nodeIds: Object.keys(prepared.baseline.results) });
  const unresolved = weaken.unresolved.filter((nodeId) => !flakyFailing.has(nodeId));
  if (unresolved.length > 0) return reject('unweakenable', `the weakening cannot delete failing tests it finds no definition of in a test file (such as doctests in source files' docstrings): ${unresolved.slice(0, 5).join(', ')}`);
  const bundle: BundleFiles = {
    'bug_inject.diff': candidate.patch,
    'test_weaken.diff': weaken.diff,
    'test_files.txt': weaken.testFiles.map((path) => `${path}\n`).join(''),
    'test_script.sh': context.script,
    'test_parser.py': context.parser,
  };
  // A bug validated the reference way (a file pytest imports when it starts) gets its checks'
  // runs cold but for the clean one, and its bug run from its verdict, already a fresh run of
  // the whole suite with the bug; the first such bundle of a run gets that run cold too and is
  // the run's replay. After a replay that disagreed, every run of every check is cold.
  const reference = outcome.mode === 'reference';
  const replaysHere = reference && !context.replay.claimed;
  const openCold = () => coldRunner(context, prepared, bundle);
  const runner = context.replay.cold
    ? undefined
    : replaysHere
      ? await openCold()
      : createProvenRunner({
          clean,
          bugFiles: files,
          bugVerdict: verdict,
          weakenedFiles: new Set(weaken.testFiles),
          judge: (changed) => validator.validate({ candidate: { ...candidate, patch: `${candidate.patch}${weaken.diff}` }, files: mutatedFiles(changed) }),
          runSelected: (changed, select, only) => validator.runSelected(mutatedFiles(changed), select, only),
          openCold,
          ...(reference ? { coldOnly: true } : {}),
        });
  const started = performance.now();
  let checks: BundleCheckReport;
  try {
    checks = await checkBundle({ bundle, worktree: context.worktree, profile, sandboxProvider: context.sandboxProvider, limits: context.limits, ...(runner === undefined ? {} : { runner }) });
  } finally {
    await runner?.close();
  }
  // Whether tests the bug run made cold (this bundle's checks, or `cold`) disagree with the verdict only by flipping.
  const flipsIn = (cold: BundleCheckReport): Promise<string[] | null> =>
    again ? Promise.resolve(null) : flippedTests(context, prepared, bundle, candidate, files, verdict.failToPass, cold);
  const bugRunCold = context.replay.cold || replaysHere;
  if (!checks.passed) {
    const failing = checks.checks.filter((check) => !check.passed);
    // Only the inverse mutation may rightly reject a proven bug (a file of it that breaks nothing on its own).
    const disagrees = failing.some((check) => check.name !== 'inverse-mutation');
    const flipped = disagrees && bugRunCold ? await flipsIn(checks) : null;
    if (flipped !== null) return proveWithout(context, flipped, candidate, files);
    return reject('check-failed', failing.map((check) => `${check.name}: ${check.evidence}`).join('; '), disagrees);
  }
  if (!context.replay.claimed) {
    context.replay.claimed = true;
    const { cold, ...replayed } = replaysHere
      ? { ...coldAgreement(checks, verdict.failToPass, flakyNow(context, prepared)), seconds: (performance.now() - started) / 1000, cold: checks }
      : await replayCold(context, prepared, bundle, verdict.failToPass);
    const flipped = replayed.agreed ? null : await flipsIn(cold);
    if (flipped !== null) {
      // Not a disagreement of the warm path and the script: the next kept bundle is the replay.
      context.replay.claimed = false;
      return proveWithout(context, flipped, candidate, files);
    }
    context.replay.report.replay = { strategy: candidate.strategy, ...replayed };
    if (!replayed.agreed) {
      context.replay.cold = true;
      return reject('check-failed', replayed.detail, true);
    }
  }
  const checkedCold = context.replay.cold || reference;
  const instance: Instance = {
    instance_id: instanceId,
    repo: `${repo.owner}/${repo.name}`,
    base_commit: repo.commit,
    patch: candidate.patch,
    FAIL_TO_PASS: [...verdict.failToPass].sort(),
    PASS_TO_PASS: [...verdict.passToPass].sort(),
    strategy: candidate.strategy,
    family: candidate.family,
    seed: candidate.seed,
    entities: candidate.entities,
    description: candidate.description,
    ...(candidate.parents ? { parents: candidate.parents } : {}),
    ...(candidate.order === undefined ? {} : { order: candidate.order }),
    ...(candidate.parent === undefined ? {} : { parent: candidate.parent }),
    created_at: new Date().toISOString(),
  };
  const added = pool.addInstance(instance, bundle);
  if (added.status === 'duplicate-patch') return { status: 'known', instanceId: added.duplicateOf };
  if (added.status === 'id-collision') {
    return { status: 'rejected', reason: 'id-collision', detail: `another bug already has the id ${instanceId} (its 32-bit patch hash collided)`, remembered: false };
  }
  const wanted = context.failureOutputs;
  if (added.status === 'added' && wanted !== undefined && !checkedCold) {
    const output = await validator.failureOutput(mutatedFiles(files), instance.FAIL_TO_PASS.slice(0, wanted.tests));
    if (output !== null) wanted.into.set(instanceId, output);
  }
  return { status: added.status === 'added' ? 'kept' : 'known', instanceId };
}
