import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import type { ExecResult } from '@envgen/sandbox';
import { SANDBOX_SUPPORT_DIR } from './pytest-sandbox.js';
import type { OutDir } from './pytest-sandbox.js';
import type { PytestSandbox } from './pytest-sandbox.js';
import type { CollectionError, TestOutcome, TestResult, TestRun } from './types.js';

/** Per test node id: repo-relative file → first lines of the code objects it executed. */
export type PytestCoverage = Record<string, Record<string, number[]>>;

/** Repo-relative file → the lines that ran in it, sorted. */
export type PytestLines = Record<string, number[]>;

/** A {@link TestRun}, with the coverage map and the lines that ran when they were asked for. */
export interface PytestRun extends TestRun {
  coverage?: PytestCoverage;
  /**
   * With `coverage`: the tests that took the tracer's profile hook (a profiler of their
   * own), whose coverage is only what ran before they took it.
   */
  untraced?: string[];
  /**
   * With `coverage`: top-level module name → the file it was imported from, for the modules
   * the session imported from outside the tree (the standard library aside).
   */
  imported?: Record<string, string>;
  /**
   * With `coverage`: file → first lines of the code objects that ran before the first test
   * (collection: the test modules' imports and what they run), as one test's coverage.
   */
  collection?: Record<string, number[]>;
  /**
   * With `lines`: the lines of those files that ran (files none of whose lines ran are left
   * out), or null when the suite displaced the tracer and the plugin could not tell.
   */
  lines?: PytestLines | null;
  /**
   * With `lines`, where they are known and a test began: those of them that had run when the
   * first test began (collection), whether or not tests ran them again.
   */
  collectionLines?: PytestLines;
  /** The test a stopped run (its limit's SIGTERM) was in, and for how long it had run: it has no result. */
  stoppedIn?: StoppedTest;
}

/** A test a run was stopped in. */
export interface StoppedTest {
  nodeId: string;
  seconds: number;
}

/** Options of {@link runPytest}. */
export interface RunPytestOptions {
  /** Run exactly these node ids instead of the profile's `testArgs`; `[]` runs nothing. */
  nodeIds?: string[];
  /** Record which functions each test executes (slower; see the plugin's tracer). */
  coverage?: boolean;
  /** Record which lines of these repo-relative files run in the session (slower; see the plugin's line recorder). */
  lines?: readonly string[];
  /** Wall-clock limit of the whole run (default: the profile's `timeoutMs`). */
  timeoutMs?: number;
  /**
   * Node id → seconds: each named test's own limit (the profile's `testTimeoutMs` is the
   * others'); a named test that runs past it ends the run (see the plugin).
   */
  testLimits?: Readonly<Record<string, number>>;
  logger?: Logger;
}

const OUTPUT_TAIL_CHARS = 4000;
const OUTCOMES: ReadonlySet<string> = new Set<TestOutcome>(['passed', 'failed', 'error', 'skipped']);
/** pytest exit codes of a session that ran to its end: ok, tests failed, nothing collected. */
const COMPLETED_EXIT_CODES: ReadonlySet<number> = new Set([0, 1, 5]);
const INTERRUPTED_EXIT_CODE = 2;
/** pytest's usage error: also what a conftest that fails to import ends the session with. */
const STOPPED_EXIT_CODE = 4;
/** Exit code of coreutils `timeout` when its deadline passed. */
const SOFT_TIMEOUT_EXIT_CODE = 124;

interface ResultsFile {
  results: Record<string, TestResult>;
  collectionErrors: CollectionError[];
  coverage?: PytestCoverage;
  untraced?: string[];
  imported?: Record<string, string>;
  collection?: Record<string, number[]>;
  lines?: PytestLines;
  collectionLines?: PytestLines;
  stoppedIn?: StoppedTest;
}

/** The argv of one pytest run inside the sandbox. */
export function buildPytestArgv(profile: Profile, workdir: string, nodeIds?: readonly string[]): string[] {
  return [
    profile.python,
    '-m',
    'pytest',
    '-p',
    'envgen_pytest',
    '-p',
    'no:cacheprovider',
    '-q',
    '-rN',
    '--color=no',
    `--rootdir=${workdir}`,
    // One broken test file must not hide the results of all the others.
    '--continue-on-collection-errors',
    ...profile.deselect.map((nodeId) => `--deselect=${nodeId}`),
    ...(nodeIds ? [...splitTestArgs(profile.testArgs).options, ...nodeIds] : profile.testArgs),
  ];
}

/** Options of pytest that take their value as the next word. */
const OPTIONS_WITH_VALUE = new Set([
  '-o',
  '--override-ini',
  '-p',
  '-k',
  '-m',
  '-c',
  '-W',
  '--pythonwarnings',
  '--confcutdir',
  '--rootdir',
  '--import-mode',
  '--deselect',
  '--ignore',
  '--ignore-glob',
  '--doctest-glob',
  '--basetemp',
  '--tb',
  '-r',
  '--maxfail',
  '--durations',
]);

/**
 * Splits a profile's test arguments into options (`-o addopts=...`, flags) and test selections
 * (paths, node ids), so a run of chosen node ids keeps the profile's options.
 */
export function splitTestArgs(testArgs: readonly string[]): { options: string[]; selection: string[] } {
  const options: string[] = [];
  const selection: string[] = [];
  for (let index = 0; index < testArgs.length; index++) {
    const word = testArgs[index] as string;
    if (!word.startsWith('-')) {
      selection.push(word);
      continue;
    }
    options.push(word);
    const value = testArgs[index + 1];
    if (OPTIONS_WITH_VALUE.has(word) && value !== undefined) {
      options.push(value);
      index += 1;
    }
  }
  return { options, selection };
}

/**
 * The environment of one pytest run: the profile's, the plugin directory appended to
 * PYTHONPATH, the profile's own import path for the plugin to install the project with (the
 * Python processes the tests start import it wherever they start, as after `pip install -e .`),
 * and no bytecode files (a same-size edit within the same second would
 * otherwise run stale `.pyc` files, and the worktree stays clean). `limitsFile` is the
 * sandbox path of a JSON file of per-test limits, `linesFile` of the files whose lines to
 * record (see {@link writeRunFile}). A run with per-test limits is a candidate's: Hypothesis
 * reports the first failing example it finds there instead of shrinking it (the test fails
 * either way, and shrinking would run it far past a limit derived from a clean pass).
 */
export function buildPytestEnv(profile: Profile, resultsFile: string, coverage: boolean, limitsFile?: string, linesFile?: string): Record<string, string> {
  const pythonPath = [profile.env['PYTHONPATH'], SANDBOX_SUPPORT_DIR].filter((part) => part !== undefined && part !== '');
  return {
    ...profile.env,
    PYTHONPATH: pythonPath.join(':'),
    ENVGEN_IMPORT_PATH: profile.env['PYTHONPATH'] ?? '',
    PYTHONDONTWRITEBYTECODE: '1',
    ENVGEN_RESULTS: resultsFile,
    ENVGEN_TEST_TIMEOUT: String(profile.testTimeoutMs / 1000),
    ...(coverage ? { ENVGEN_COVERAGE: '1' } : {}),
    ...(limitsFile === undefined ? {} : { ENVGEN_TEST_LIMITS: limitsFile, ENVGEN_NO_SHRINK: '1' }),
    ...(linesFile === undefined ? {} : { ENVGEN_LINES: linesFile }),
  };
}

/**
 * Writes per-test limits (node id → seconds), or the files whose lines to record, as `name`
 * into a run's host output directory and returns its path inside the sandbox, for
 * {@link buildPytestEnv}.
 */
export async function writeRunFile(out: OutDir, name: string, limits: Readonly<Record<string, number>> | readonly string[]): Promise<string> {
  await writeFile(join(out.outDir, name), JSON.stringify(limits));
  return `${out.outTarget}/${name}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates the plugin's JSON; returns null when it is not of the expected shape. */
export function parseResultsFile(text: string): ResultsFile | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(data) || !isRecord(data['results']) || !Array.isArray(data['collectionErrors'])) return null;
  const results: Record<string, TestResult> = {};
  for (const [nodeId, entry] of Object.entries(data['results'])) {
    if (!isRecord(entry) || typeof entry['outcome'] !== 'string' || !OUTCOMES.has(entry['outcome'])) return null;
    results[nodeId] = {
      outcome: entry['outcome'] as TestOutcome,
      duration: Number(entry['duration']) || 0,
      ...(typeof entry['wall'] === 'number' ? { wall: entry['wall'] } : {}),
      ...(entry['timedOut'] === true ? { timedOut: true } : {}),
      ...(typeof entry['reason'] === 'string' ? { reason: entry['reason'] } : {}),
    };
  }
  const collectionErrors: CollectionError[] = [];
  for (const entry of data['collectionErrors'] as unknown[]) {
    if (!isRecord(entry)) return null;
    collectionErrors.push({ nodeid: String(entry['nodeid']), message: String(entry['message']) });
  }
  const parsed: ResultsFile = { results, collectionErrors };
  if (isRecord(data['coverage'])) parsed.coverage = data['coverage'] as PytestCoverage;
  if (isRecord(data['lines'])) parsed.lines = data['lines'] as PytestLines;
  if (isRecord(data['collectionLines'])) parsed.collectionLines = data['collectionLines'] as PytestLines;
  if (Array.isArray(data['untraced'])) parsed.untraced = data['untraced'].map(String);
  if (isRecord(data['collection'])) parsed.collection = data['collection'] as Record<string, number[]>;
  const stopped = data['stoppedIn'];
  if (isRecord(stopped) && typeof stopped['nodeid'] === 'string') parsed.stoppedIn = { nodeId: stopped['nodeid'], seconds: Number(stopped['seconds']) || 0 };
  if (isRecord(data['imported'])) parsed.imported = Object.fromEntries(Object.entries(data['imported']).map(([name, path]) => [name, String(path)]));
  return parsed;
}

/** The last few thousand characters of a command's stdout and stderr, for messages. */
export function outputTail(exec: ExecResult): string {
  const text = [exec.stdout.trimEnd(), exec.stderr.trimEnd()].filter((part) => part !== '').join('\n');
  return text.length <= OUTPUT_TAIL_CHARS ? text : text.slice(-OUTPUT_TAIL_CHARS);
}

/**
 * When pytest is sent SIGTERM, ahead of the sandbox's hard kill: the plugin turns SIGTERM
 * into KeyboardInterrupt, so the results of the tests that finished are still written.
 */
export function softDeadlineMs(timeoutMs: number): number {
  const grace = Math.min(10_000, Math.max(1_000, Math.round(timeoutMs / 10)));
  return Math.max(timeoutMs - grace, Math.ceil(timeoutMs / 2));
}

function statusOf(exec: ExecResult, hasResults: boolean, softMs: number): TestRun['status'] {
  if (exec.status === 'exited' && exec.exitCode === SOFT_TIMEOUT_EXIT_CODE && exec.durationMs >= softMs) return 'timeout';
  switch (exec.status) {
    case 'timeout':
      return 'timeout';
    case 'memory':
    case 'processes':
      return 'interrupted';
    case 'killed':
      return 'crashed';
    case 'exited':
      if (exec.exitCode === STOPPED_EXIT_CODE) return 'stopped';
      if (!hasResults || exec.exitCode === null) return 'crashed';
      if (COMPLETED_EXIT_CODES.has(exec.exitCode)) return 'completed';
      return exec.exitCode === INTERRUPTED_EXIT_CODE ? 'interrupted' : 'crashed';
  }
}

/** The test a run killed without results was in, from the plugin's mark (none between two tests). */
async function readRunningTest(path: string): Promise<StoppedTest | undefined> {
  let mark: unknown;
  try {
    mark = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(mark) || typeof mark['nodeid'] !== 'string' || typeof mark['started'] !== 'number') return undefined;
  return { nodeId: mark['nodeid'], seconds: Math.max(0, Date.now() / 1000 - mark['started']) };
}

/**
 * Runs pytest in `target` (opened with {@link openPytestSandbox}) with envgen's plugin and
 * returns per-test results read from the plugin's JSON file, never from pytest's text.
 * Runs the profile's `testArgs`, or exactly `options.nodeIds`. Collection errors are
 * reported as such; a timeout, a limit hit or a pytest that wrote no results is a status,
 * not an exception. On a timeout, the results of the tests that finished are kept.
 */
export async function runPytest(target: PytestSandbox, profile: Profile, options: RunPytestOptions = {}): Promise<PytestRun> {
  const logger = options.logger ?? silentLogger;
  const coverage = options.coverage ?? false;
  if (options.nodeIds !== undefined && options.nodeIds.length === 0) {
    return { results: {}, collectionErrors: [], status: 'completed', exitCode: 0, seconds: 0, output: '', ...(coverage ? { coverage: {} } : {}) };
  }
  const fileName = `results-${randomUUID()}.json`;
  const hostFile = join(target.outDir, fileName);
  const timeoutMs = options.timeoutMs ?? profile.timeoutMs;
  const softMs = softDeadlineMs(timeoutMs);
  const argv = ['timeout', '--signal=TERM', `${softMs / 1000}s`, ...buildPytestArgv(profile, target.sandbox.workdir, options.nodeIds)];
  logger.debug('running pytest', { tests: options.nodeIds?.length ?? 'suite', coverage, timeoutMs });
  const limitsName = `limits-${randomUUID()}.json`;
  const limitsFile = options.testLimits === undefined ? undefined : await writeRunFile(target, limitsName, options.testLimits);
  const linesName = `lines-${randomUUID()}.json`;
  // The test running now, kept by the plugin: what a run killed without results was in.
  const runningName = `running-${randomUUID()}.json`;
  const linesFile = options.lines === undefined ? undefined : await writeRunFile(target, linesName, options.lines);
  const exec = await target.sandbox.exec(argv, {
    // The soft limit again, for the plugin: a test that takes SIGTERM (a server's handler)
    // leaves pytest deaf to it, and the plugin then stops the run between two tests.
    env: { ...buildPytestEnv(profile, `${target.outTarget}/${fileName}`, coverage, limitsFile, linesFile), ENVGEN_RUN_LIMIT: String(softMs / 1000), ENVGEN_RUNNING: `${target.outTarget}/${runningName}` },
    limits: { timeoutMs },
  });
  if (limitsFile !== undefined) await rm(join(target.outDir, limitsName), { force: true });
  if (linesFile !== undefined) await rm(join(target.outDir, linesName), { force: true });
  let parsed: ResultsFile | null = null;
  try {
    parsed = parseResultsFile(await readFile(hostFile, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  } finally {
    await rm(hostFile, { force: true });
  }
  const running = parsed === null ? await readRunningTest(join(target.outDir, runningName)) : undefined;
  await rm(join(target.outDir, runningName), { force: true });
  // A run that ended without results in a test past its own limit: the plugin's watchdog (or
  // anything else) ended a test the alarm could not stop, a timeout as the alarm's would be.
  const ownLimit = running === undefined ? undefined : options.testLimits?.[running.nodeId];
  const watchdog = ownLimit !== undefined && running !== undefined && running.seconds >= ownLimit && exec.status !== 'memory' && exec.status !== 'processes';
  const status = watchdog ? 'timeout' : statusOf(exec, parsed !== null, softMs);
  const run: PytestRun = {
    results: parsed?.results ?? {},
    collectionErrors: parsed?.collectionErrors ?? [],
    status,
    exitCode: exec.exitCode,
    seconds: exec.durationMs / 1000,
    output: outputTail(exec),
  };
  if (exec.status === 'memory' || exec.status === 'processes') run.limitHit = exec.status;
  if (watchdog) run.watchdog = true;
  const stoppedIn = parsed?.stoppedIn ?? running;
  if (stoppedIn !== undefined) run.stoppedIn = stoppedIn;
  if (coverage) {
    run.coverage = parsed?.coverage ?? {};
    run.untraced = parsed?.untraced ?? [];
    run.imported = parsed?.imported ?? {};
    if (parsed?.collection !== undefined) run.collection = parsed.collection;
  }
  if (options.lines !== undefined) {
    run.lines = parsed?.lines ?? null;
    if (run.lines !== null && parsed?.collectionLines !== undefined) run.collectionLines = parsed.collectionLines;
  }
  logger.debug('pytest finished', { status, exitCode: exec.exitCode, tests: Object.keys(run.results).length, seconds: run.seconds });
  return run;
}
