/**
 * End to end, what a user waits for: wall seconds per kept instance of inject's whole
 * pipeline (verdict, weakening, the seven checks, the pool) against the naive pipeline on
 * the same seeded candidates (SWE-smith's way: the full suite per candidate in a fresh
 * sandbox, then the bundle's seven checks each as its own cold run of the bundle's script),
 * with the same parallelism, and a third column, the limit: per candidate, the clean-run
 * seconds of the tests exact validation must run (from the first test that runs the changed
 * entity to the end of the suite; the whole suite for a change that runs at import), spread
 * over the same sandboxes. A test's clean-run seconds are the wall time of its whole run
 * protocol (setup, call, teardown and pytest's own per-test work, which any run of it pays),
 * the median of three plain clean runs after one that warms up (see cleanTimes); the limit
 * from reported durations alone (setup + call + teardown) is printed too. Every figure
 * reads as a distance to what is physically possible.
 * So does the floor of the validator's design: its verdicts alone, one candidate at a time
 * with nothing beside them (start-up, checks and pool excluded), over the same limit.
 * Agreement: per candidate, envgen kept it with the same FAIL_TO_PASS as the reference's
 * verdict and the bundle's own cold run, or neither pipeline kept it.
 *
 * envgen runs twice per run: as the first inject of a commit in a fresh home (its warm
 * servers' code cache empty, the bundle script's cold clean run made), then as a later
 * inject of the same commit, such as a growth round's next shard (the code cache the first
 * left, the clean run from the pool). The baseline is cached for both, as `envgen env` left it.
 *
 *   node --conditions=@envgen/source --import tsx bench/e2e.ts [count] [runs] [repo...]
 *
 * With a list of counts (`10,40,100`) it runs only envgen's pipeline, on the first `count`
 * of the same seeded candidates for each count, and prints how the distance to the limit
 * falls as a run grows: what a run costs whatever its size (start-up, the bundle script's
 * cold clean run, the one cold replay) and what each further candidate costs against its
 * own limit (the marginal ratio between consecutive counts).
 *
 * A GitHub `owner/name@sha` repo comes from ENVGEN_GITHUB_URL (e.g. file:///srv/git).
 *
 * Last, it prints what a page fault costs on this machine (first touch, copy-on-write after
 * a fork): the validator's runs are forks that pay a copy for every page they write, the
 * limit's clean run pays none, so the distance to the limit moves with this price from one
 * machine to the next.
 *
 * Bars (issue 9): ≥ 5× faster than naive on toolz and json-patch, ≥ 2.5× on a suite of
 * ≥ 800 tests, within 1.5× of the limit on all three.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkBundle, makeTestParser, makeTestScript, makeTestWeaken } from '@envgen/bundle';
import { resolveConfig } from '@envgen/config';
import type { BundleFiles } from '@envgen/core';
import { cleanRunKey, runInjection } from '@envgen/inject';
import type { PlannedCandidate } from '@envgen/inject';
import { openPool } from '@envgen/pool';
import { openPytestSandbox, runPytest } from '@envgen/testrun';
import type { CleanRun } from '@envgen/pool';
import { createValidator, stablePassing, validateReference } from '@envgen/validate';
import { TEST_CODE_CACHE, injectionTarget, prepareCorpusProject, sampleCandidates } from '../packages/validate/src/test-helpers.js';
import type { CorpusProject } from '../packages/validate/src/test-helpers.js';
import { copyTree } from '../packages/validate/src/tree.js';
import type { ValidationInput } from '../packages/validate/src/types.js';
import { formatTable, mapPool, median, pageFaultMicros } from './stats.js';

const counts = (process.argv[2] ?? '40').split(',').map(Number);
const count = counts[0] ?? 40;
const runs = Number(process.argv[3] ?? 1);
const repos = process.argv.length > 4 ? process.argv.slice(4) : ['debian:toolz', 'debian:python-json-patch'];
const seed = 7;
const concurrency = availableParallelism();

async function planned(project: CorpusProject, inputs: readonly ValidationInput[]): Promise<PlannedCandidate[]> {
  const { readFile } = await import('node:fs/promises');
  return Promise.all(
    inputs.map(async (input) => ({
      kind: 'candidate' as const,
      candidate: input.candidate,
      files: await Promise.all(input.files.map(async (file) => ({ path: file.path, before: await readFile(join(project.worktree.path, file.path), 'utf8'), after: file.after }))),
    })),
  );
}

/** Per candidate (by patch): its FAIL_TO_PASS when kept, else null. */
type Kept = Map<string, string[] | null>;

/**
 * What an inject finds in its home: the warm servers' code cache (pytest's assertion
 * rewrites) and, for a later inject of the commit, the bundle script's clean run in the pool.
 */
interface EnvgenHome {
  codeCache: string;
  cleanRun?: CleanRun;
}

/** inject's pipeline on exactly these candidates, in a fresh pool (holding `home.cleanRun` when given). */
async function runEnvgen(project: CorpusProject, candidates: readonly PlannedCandidate[], home: EnvgenHome): Promise<{ seconds: number; kept: number; outcomes: Kept; cleanRun?: CleanRun }> {
  const poolHome = mkdtempSync(join(tmpdir(), 'envgen-e2e-'));
  const pool = openPool(poolHome);
  const target = { ...injectionTarget(project), codeCache: home.codeCache };
  try {
    if (home.cleanRun !== undefined) pool.putCleanRun(cleanRunKey(target), home.cleanRun);
    const started = performance.now();
    const report = await runInjection({
      ...target,
      pool,
      count: candidates.length,
      candidates,
      seed,
      strategies: [],
      combine: 0,
      concurrency,
    });
    const seconds = (performance.now() - started) / 1000;
    const outcomes: Kept = new Map(candidates.map((planned) => [planned.candidate.patch, null]));
    for (const id of report.instanceIds) {
      const instance = pool.getInstance(id);
      if (instance) outcomes.set(instance.patch, [...instance.FAIL_TO_PASS].sort());
    }
    const cleanRun = pool.getCleanRun(cleanRunKey(target));
    return { seconds, kept: report.kept, outcomes, ...(cleanRun === undefined ? {} : { cleanRun }) };
  } finally {
    pool.close();
    rmSync(poolHome, { recursive: true, force: true });
  }
}

/** A code cache of its own, empty, as a first inject in a fresh home finds it. */
function freshCodeCache(): string {
  return mkdtempSync(join(tmpdir(), 'envgen-e2e-code-cache-'));
}

/** The naive pipeline: a fresh full-suite run per candidate, then every check as its own cold run. */
async function runNaive(project: CorpusProject, inputs: readonly ValidationInput[]): Promise<{ seconds: number; kept: number; outcomes: Kept; disagreements: number }> {
  const script = makeTestScript(project.profile);
  const parser = makeTestParser();
  const started = performance.now();
  const flaky = new Set(project.baseline.flaky);
  let disagreements = 0;
  const kept = await mapPool(inputs, concurrency, async (input): Promise<string[] | null> => {
    const verdict = await validateReference({ worktree: project.worktree.path, profile: project.profile, baseline: project.baseline, sandboxProvider: project.provider, ...input });
    if (verdict.kind !== 'instance') return null;
    const { readFile } = await import('node:fs/promises');
    const weaken = await makeTestWeaken({
      readFile: (path) => readFile(join(project.worktree.path, path), 'utf8').catch(() => null),
      failToPass: verdict.failToPass,
      testFiles: project.profile.testFiles,
    });
    if (weaken.unresolved.length > 0) return null;
    const bundle: BundleFiles = {
      'bug_inject.diff': input.candidate.patch,
      'test_weaken.diff': weaken.diff,
      'test_files.txt': weaken.testFiles.map((path) => `${path}\n`).join(''),
      'test_script.sh': script,
      'test_parser.py': parser,
    };
    const checks = await checkBundle({ bundle, worktree: project.worktree.path, profile: project.profile, sandboxProvider: project.provider });
    // The bundle's own cold run must break exactly the reference's FAIL_TO_PASS (flaky tests aside).
    const broken = checks.brokenTests.filter((id) => !flaky.has(id)).sort();
    if (checks.passed && broken.join('\n') !== [...verdict.failToPass].sort().join('\n')) disagreements++;
    return checks.passed ? [...verdict.failToPass].sort() : null;
  });
  const outcomes: Kept = new Map(inputs.map((input, index) => [input.candidate.patch, kept[index] ?? null]));
  return { seconds: (performance.now() - started) / 1000, kept: kept.filter((entry) => entry !== null).length, outcomes, disagreements };
}

/**
 * Candidates on which envgen and the naive pipeline (reference verdict + cold bundle run)
 * agree exactly; each disagreement is printed with both outcomes.
 */
function agreement(envgen: Kept, naive: Kept, names: ReadonlyMap<string, string>): number {
  let same = 0;
  for (const [patch, f2p] of envgen) {
    const theirs = naive.get(patch) ?? null;
    if (JSON.stringify(f2p) === JSON.stringify(theirs)) same++;
    else console.error(`disagreement on ${names.get(patch) ?? '?'}: envgen ${f2p ? `kept, FAIL_TO_PASS ${f2p.join(' ')}` : 'rejected'}; naive ${theirs ? `kept, FAIL_TO_PASS ${theirs.join(' ')}` : 'rejected'}`);
  }
  return same;
}

/** Per test, its clean wall time and reported duration (setup + call + teardown), in seconds. */
type CleanTimes = Map<string, { wall: number; duration: number }>;

/**
 * Each test's clean-run times on a warm machine: the suite run plainly (no coverage) in a
 * copy of the worktree, once to warm the byte-code and the page cache, then `runs` times,
 * the median of each test. The baseline's own run is no measure of what is possible: it was
 * made once, cold (no byte-code yet), beside its coverage run, under whatever else ran then
 * (a json-patch baseline built right after another project's bench read its limit 3× too high).
 */
async function cleanTimes(project: CorpusProject, runs = 3): Promise<CleanTimes> {
  const scratch = mkdtempSync(join(tmpdir(), 'envgen-e2e-limit-'));
  const samples = new Map<string, { wall: number[]; duration: number[] }>();
  try {
    await copyTree(project.worktree.path, scratch);
    const target = await openPytestSandbox(project.provider, { worktree: scratch });
    try {
      for (let run = 0; run <= runs; run++) {
        const result = await runPytest(target, project.profile);
        if (run === 0) continue;
        for (const [id, test] of Object.entries(result.results)) {
          const sample = samples.get(id) ?? { wall: [], duration: [] };
          sample.wall.push(test.wall ?? test.duration ?? 0);
          sample.duration.push(test.duration ?? 0);
          samples.set(id, sample);
        }
      }
    } finally {
      await target.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return new Map([...samples].map(([id, sample]) => [id, { wall: median(sample.wall), duration: median(sample.duration) }]));
}

/**
 * Seconds of clean test time exact validation cannot skip, over all candidates, spread over
 * the sandboxes: each test's warm clean wall time, or with `durationsOnly` its reported
 * setup + call + teardown.
 */
function limitSeconds(project: CorpusProject, times: CleanTimes, inputs: readonly ValidationInput[], durationsOnly = false): number {
  const order = Object.keys(project.baseline.results);
  const stable = new Set(stablePassing(project.baseline));
  const durations = order.map((id) => {
    const time = times.get(id);
    return (durationsOnly ? time?.duration : time?.wall) ?? 0;
  });
  const tail: number[] = new Array<number>(order.length + 1).fill(0);
  for (let index = order.length - 1; index >= 0; index--) tail[index] = (tail[index + 1] ?? 0) + (durations[index] ?? 0);
  const positions = new Map(order.map((id, index) => [id, index]));
  let total = 0;
  for (const input of inputs) {
    let first = order.length;
    for (const key of input.candidate.entities) {
      for (const id of project.baseline.coverage[key] ?? []) {
        const position = positions.get(id);
        if (position !== undefined && stable.has(id)) first = Math.min(first, position);
      }
    }
    total += tail[first === order.length ? 0 : first] ?? 0;
  }
  return total / concurrency;
}

/**
 * The floor of the validator's design on these candidates, in seconds: the validator alone
 * (its start-up excluded), one candidate at a time in one sandbox, with nothing beside it.
 * Over the unspread limit it shows what each verdict pays beyond its tests (the fork, the
 * child's start and end, collecting afresh for a change made at import, the tests' pace in
 * a fresh fork), before the checks, the pool and the fixed costs of a run add theirs.
 */
async function verdictsAlone(project: CorpusProject, inputs: readonly ValidationInput[]): Promise<number> {
  const validator = await createValidator({ worktree: project.worktree.path, profile: project.profile, baseline: project.baseline, sandboxProvider: project.provider, concurrency: 1, codeCache: TEST_CODE_CACHE });
  try {
    let seconds = 0;
    for (const input of inputs) seconds += (await validator.validateWithDetails(input)).seconds;
    return seconds;
  } finally {
    await validator.close();
  }
}

/** envgen's pipeline on growing prefixes of the same candidates (each a first inject): seconds and limit at each count. */
async function scaleRows(project: CorpusProject): Promise<string[][]> {
  const inputs = await sampleCandidates(project, Math.max(...counts), seed);
  const candidates = await planned(project, inputs);
  const times = await cleanTimes(project);
  const rows: string[][] = [];
  let previous: { seconds: number; limit: number } | null = null;
  for (const size of counts) {
    const seconds: number[] = [];
    let kept = 0;
    for (let run = 0; run < runs; run++) {
      const codeCache = freshCodeCache();
      try {
        const fast = await runEnvgen(project, candidates.slice(0, size), { codeCache });
        seconds.push(fast.seconds);
        kept = fast.kept;
      } finally {
        rmSync(codeCache, { recursive: true, force: true });
      }
    }
    const current = { seconds: median(seconds), limit: limitSeconds(project, times, inputs.slice(0, size)) };
    const marginal = previous === null ? '' : `${((current.seconds - previous.seconds) / (current.limit - previous.limit)).toFixed(1)}×`;
    rows.push([project.name, String(Math.min(size, inputs.length)), String(kept), current.seconds.toFixed(2), current.limit.toFixed(2), `${(current.seconds / current.limit).toFixed(1)}×`, marginal]);
    previous = current;
  }
  return rows;
}

/**
 * The end-to-end row of one project: envgen and the naive pipeline on the same candidates.
 * envgen twice per run: as the first inject of the commit in a fresh home (empty code cache,
 * the bundle script's clean run made), then as a later one (the code cache the first left,
 * the clean run from the pool), as a growth round's next shard finds them.
 */
async function compareRow(project: CorpusProject): Promise<string[]> {
  const inputs = await sampleCandidates(project, count, seed);
  const candidates = await planned(project, inputs);
  const times = await cleanTimes(project);
  const firstSeconds: number[] = [];
  const laterSeconds: number[] = [];
  const naiveSeconds: number[] = [];
  const aloneSeconds: number[] = [];
  let kept = { envgen: 0, naive: 0 };
  let agreeing = 0;
  let coldDisagreements = 0;
  const names = new Map(inputs.map((input) => [input.candidate.patch, `${input.candidate.strategy} ${input.candidate.entities.join(',')}`]));
  const load = loadavg()[0] ?? 0;
  for (let run = 0; run < runs; run++) {
    const codeCache = freshCodeCache();
    try {
      const first = await runEnvgen(project, candidates, { codeCache });
      const later = await runEnvgen(project, candidates, { codeCache, ...(first.cleanRun === undefined ? {} : { cleanRun: first.cleanRun }) });
      const naive = await runNaive(project, inputs);
      firstSeconds.push(first.seconds);
      laterSeconds.push(later.seconds);
      naiveSeconds.push(naive.seconds);
      kept = { envgen: first.kept, naive: naive.kept };
      agreeing = Math.min(agreement(first.outcomes, naive.outcomes, names), agreement(later.outcomes, naive.outcomes, names));
      coldDisagreements = naive.disagreements;
    } finally {
      rmSync(codeCache, { recursive: true, force: true });
    }
    aloneSeconds.push(await verdictsAlone(project, inputs));
  }
  const perKept = (seconds: number): number => seconds / Math.max(1, kept.envgen);
  const first = perKept(median(firstSeconds));
  const later = perKept(median(laterSeconds));
  const naive = median(naiveSeconds) / Math.max(1, kept.naive);
  const limit = perKept(limitSeconds(project, times, inputs));
  const durationLimit = perKept(limitSeconds(project, times, inputs, true));
  const envgen = (seconds: number): string => `${seconds.toFixed(2)} (${(naive / seconds).toFixed(1)}×, ${(seconds / limit).toFixed(1)}× limit)`;
  console.error(`${project.name}: done`);
  return [
    project.name,
    String(Object.keys(project.baseline.results).length),
    String(inputs.length),
    `${kept.envgen}/${kept.naive}`,
    `${agreeing}/${inputs.length}${coldDisagreements > 0 ? ` (${coldDisagreements} cold runs differ)` : ''}`,
    naive.toFixed(2),
    limit.toFixed(2),
    envgen(first),
    envgen(later),
    `${durationLimit.toFixed(2)} (${(later / durationLimit).toFixed(1)}×)`,
    `${(median(aloneSeconds) / (limitSeconds(project, times, inputs) * concurrency)).toFixed(1)}×`,
    load.toFixed(1),
  ];
}

const faults = pageFaultMicros();
const rows: string[][] = [];
for (const spec of repos) {
  const project = await prepareCorpusProject(spec, undefined, resolveConfig({ env: process.env, cwd: process.cwd() }).githubUrl);
  try {
    rows.push(...(counts.length > 1 ? await scaleRows(project) : [await compareRow(project)]));
  } finally {
    await project.worktree.remove();
  }
}
if (counts.length > 1) {
  console.log(`\nenvgen's whole pipeline as a run grows (wall seconds, median of ${runs} run(s), ${concurrency} sandboxes, seed ${seed}; marginal: the added seconds over the added limit since the previous count):`);
  console.log(formatTable(['project', 'candidates', 'kept', 'envgen s', 'limit s', 'envgen / limit', 'marginal'], rows));
} else {
  console.log(`\nwall seconds per kept instance, end to end (median of ${runs} run(s), ${concurrency} sandboxes each way, seed ${seed}):`);
  console.log('(envgen: s/kept (speed-up over naive, distance to the limit); first inject: a fresh home; later inject: the code cache and clean run the first left)');
  console.log(formatTable(['project', 'tests', 'candidates', 'kept envgen/naive', 'agreement', 'naive', 'limit', 'envgen, first inject', 'envgen, later inject', 'limit from durations (later)', 'verdicts alone / limit', 'load'], rows));
}
console.log(`\nthis machine's page faults (before the runs): ${faults.firstTouch.toFixed(1)} µs per page first touched, ${faults.copyOnWrite.toFixed(1)} µs per page copied on write after a fork`);
