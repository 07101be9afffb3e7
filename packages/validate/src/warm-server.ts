import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import { uniqueTarget } from '@envgen/sandbox';
import type { ExecResult, Sandbox, SandboxProvider } from '@envgen/sandbox';
import { buildPytestArgv, buildPytestEnv, makeOutDir, parseResultsFile, pytestMounts, softDeadlineMs, writeRunFile } from '@envgen/testrun';
import type { PytestCoverage, TestResult, TestRun } from '@envgen/testrun';
import { adoptRewrites, pruneCodeCache, touchRewrites } from './code-cache.js';

/** Host directory of the warm server (the `envgen_warm` package), shipped beside `src/`. */
export const WARM_SUPPORT_DIR = fileURLToPath(new URL('../python', import.meta.url));
// Paths of this process's own inside a sandbox: the `none` backend links them on the host.
const SANDBOX_WARM_DIR = uniqueTarget('/tmp/envgen-validate');
const SANDBOX_CODE_CACHE = uniqueTarget('/tmp/envgen-code-cache');
const SOCKET_NAME = 'warm.sock';
/** The server lives as long as the validator; each run has its own deadline inside. */
const SERVER_LIFETIME_MS = 7 * 24 * 3600_000;
const START_TIMEOUT_MS = 60_000;
/** How long past a run's own deadline the host waits before it gives the server up. */
const ANSWER_GRACE_MS = 30_000;
const LINE_LIMIT = 1 << 20;
const OUTPUT_TAIL_CHARS = 4000;
const COMPLETED_EXIT_CODES: ReadonlySet<number> = new Set([0, 1, 5]);
const INTERRUPTED_EXIT_CODE = 2;
/** pytest's usage error: also what a conftest that fails to import ends the session with. */
const STOPPED_EXIT_CODE = 4;

/** What the analysis run reports besides results (see `envgen_warm` and its `tracing` module). */
export interface SuiteAnalysis {
  /** Modules the suite imported from outside the worktree: safe to import once in the server. */
  modules: string[];
  /** Worktree file → first lines of code objects run outside tests or in shared fixtures. */
  outside: Record<string, number[]>;
  /** Per test, as the baseline's coverage run records it, under the pinned hash seed. */
  coverage: PytestCoverage;
  /** Tests that started processes: what those ran is invisible to the tracer. */
  spawning: string[];
}

/** One run in a forked child. */
export interface WarmRun extends Pick<TestRun, 'status' | 'limitHit' | 'watchdog' | 'seconds' | 'output' | 'collectionErrors'> {
  results: Record<string, TestResult>;
  analysis?: SuiteAnalysis;
  /**
   * With {@link WarmRunOptions.resume}: the checkpoint the run went on from (-1: the one
   * before collection, i: the one at the i-th test asked for in {@link WarmServer.collect}),
   * absent when the whole suite ran from scratch instead.
   */
  checkpoint?: number;
  /**
   * Why a checkpoint declined a resumed run: it then went on from the one before collection,
   * or (`checkpoint` absent) the whole suite ran from scratch.
   */
  declined?: string;
  /** With {@link WarmRunOptions.tbstyle}: pytest's whole output of the run. */
  report?: string;
  /**
   * With `scratch: false` in {@link WarmRunOptions.resume}: nothing ran, since no checkpoint
   * could run the changed files (why: `declined`) and a run from scratch in this server would
   * inherit the files pytest imported when it started unchanged; only a fresh interpreter
   * runs them as they are now.
   */
  fresh?: true;
}

/** Options of one {@link WarmServer.run}. */
export interface WarmRunOptions {
  /** Wall-clock limit; the child is killed at the same soft deadline `runPytest` uses. */
  timeoutMs: number;
  /**
   * Also record the {@link SuiteAnalysis}: `outside` leaves its `coverage` empty (what each
   * test ran is the baseline's, when it ran under the same hash seed), `per-test` records it.
   */
  analyze?: 'outside' | 'per-test';
  /**
   * Runs the whole suite from the latest checkpoint of {@link WarmServer.collect} at or
   * before `checkpoint` (-1: the one before collection), with the `changed` files (already
   * written to the tree) imported afresh or, at a test's checkpoint, their changed functions'
   * code swapped in; results of the tests before it are the clean run's. When no checkpoint
   * can, the whole suite runs from scratch, or with `scratch: false` nothing runs (see
   * {@link WarmRun.fresh}).
   */
  resume?: { changed: readonly string[]; checkpoint: number; scratch?: false };
  /**
   * Collects and runs only these test paths (the profile's options kept): with `resume`, from
   * the checkpoint before collection (the only one another selection can go on from), else
   * from scratch.
   */
  select?: readonly string[];
  /** Of the tests collected, only these run (the others are deselected). */
  only?: readonly string[];
  /**
   * Test files the server holds no assertion rewrite of (the changed ones) are imported with
   * plain asserts: for a run that asks which tests they collect. A test that reads an
   * assertion's message may then fail where it would pass, so rerun without it when the run
   * ran a test whose outcome counts.
   */
  plain?: boolean;
  /**
   * pytest's failure reports in this traceback style instead of none (`--tb=no`): the run's
   * whole output is then in {@link WarmRun.report}, with Hypothesis's failing examples
   * shrunk as the user's pytest shows them unless `shrink` is false (other runs skip
   * shrinking, see `buildPytestEnv`).
   */
  tbstyle?: 'short';
  /** With {@link WarmRunOptions.tbstyle}: whether Hypothesis shrinks failing examples (default true). */
  shrink?: boolean;
}

/** What {@link WarmServer.preload} did. */
export interface PreloadAnswer {
  /** Modules that failed to import in the server. */
  failed: string[];
  /** Modules found inside the worktree afterwards (must be none), besides those of `startup`. */
  inside: string[];
  /**
   * Worktree files (repo-relative) of modules the server imported when it started, before any
   * request: pytest's own dependencies when the project is one of them and comes first on the
   * path (iniconfig, pluggy, attrs). Every child inherits them unchanged.
   */
  startup: string[];
  /** Test files whose assertion rewrite came from the code cache, and rewrites added to it. */
  cache: { hits: number; added: number };
}

/** Options of {@link WarmServer.collect}. */
export interface CollectOptions {
  /** Node ids of the tests to leave a checkpoint at (besides the one before collection). */
  checkpoints: readonly string[];
  /** Wall-clock limit of the clean run. */
  timeoutMs: number;
  /**
   * Also record the {@link SuiteAnalysis} of the clean run (`outside` mode), where the set-up
   * of a fixture shared by several tests counts for the test that needs it first.
   */
  analyze?: boolean;
}

/** What {@link WarmServer.collect} left. */
export type CollectOutcome =
  | {
      ok: true;
      /** sha256 of the collected node ids joined by newlines (pytest's run order). */
      digest: string | null;
      /** "ok", or why there is no checkpoint before collection. */
      collection: string;
      /** Per test asked for: "ok", or why there is no checkpoint at it. */
      checkpoints: string[];
      /** Results of the collector's clean run (the tests before a checkpoint), when it ran. */
      clean: Record<string, TestResult> | null;
      /** With {@link CollectOptions.analyze}, when the clean run ran. */
      analysis?: SuiteAnalysis;
    }
  | { ok: false; why: string };

/** A long-lived Python in a sandbox that has imported pytest and forks one child per run. */
export interface WarmServer {
  readonly sandbox: Sandbox;
  run(options: WarmRunOptions): Promise<WarmRun>;
  /**
   * Imports modules in the server and compiles the profile's source files and the assertion
   * rewrite of its test files (children use them while the bytes are unchanged); returns the modules that failed and those found inside the worktree
   * afterwards (must be none).
   */
  preload(modules: readonly string[]): Promise<PreloadAnswer>;
  /**
   * Forks a collector that runs the clean suite once and leaves checkpoints: one before
   * collection and one at the start of each test in `checkpoints` (node ids), for
   * {@link WarmRunOptions.resume}. Replaces the checkpoints of an earlier call.
   */
  collect(options: CollectOptions): Promise<CollectOutcome>;
  /** True until the server process ends. */
  alive(): boolean;
  close(): Promise<void>;
}

/** Options of {@link startWarmServer}. */
export interface StartWarmServerOptions {
  provider: SandboxProvider;
  /** Host path of the tree the server's children test (writable by them). */
  worktree: string;
  profile: Profile;
  /** Node id → seconds: each test's own limit in every run and collect (see `runPytest`). */
  testLimits?: Readonly<Record<string, number>>;
  /**
   * Host directory of the code cache: pytest's assertion rewrites of clean test files, made
   * by earlier servers (of this run or earlier ones) and read here instead of rewriting
   * again. Mounted read-only; a server adds to it only through its first request, before
   * any of the project's code has run in its sandbox.
   */
  codeCache?: string;
  logger?: Logger;
}

type Answer = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseAnalysis(text: string): SuiteAnalysis | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(data) || !Array.isArray(data['modules']) || !isRecord(data['outside']) || !isRecord(data['coverage']) || !Array.isArray(data['spawning'])) return null;
  const linesByFile = (value: Record<string, unknown>): Record<string, number[]> =>
    Object.fromEntries(Object.entries(value).map(([file, lines]) => [file, Array.isArray(lines) ? lines.filter((line): line is number => Number.isInteger(line)) : []]));
  const coverage: PytestCoverage = {};
  for (const [nodeId, files] of Object.entries(data['coverage'])) if (isRecord(files)) coverage[nodeId] = linesByFile(files);
  const strings = (value: unknown[]): string[] => value.filter((item): item is string => typeof item === 'string');
  return { modules: strings(data['modules']), outside: linesByFile(data['outside']), coverage, spawning: strings(data['spawning']) };
}

/**
 * The arguments of a warm run: runPytest's argv, minus the interpreter and `-m pytest`, with
 * pytest asked for no failure reports (`--tb=no`, last, so it wins over the project's
 * addopts), as the bundle's own test_script.sh asks. A report changes no outcome, and
 * formatting one (the source of every traceback entry, the repr of each frame's arguments)
 * for every test a mutant breaks was up to a fifth of a small suite's verdicts; the
 * reference path and the baseline keep pytest's reports, and verdicts are compared with
 * theirs (bench/e2e, the agreement tests).
 */
export function warmArgs(profile: Profile, workdir: string, select?: readonly string[], tbstyle = 'no'): string[] {
  return [...buildPytestArgv(profile, workdir, select).slice(3), `--tb=${tbstyle}`];
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  } finally {
    await rm(path, { force: true });
  }
}

/** The sandbox limit the server saw stop a run (its cgroup's counters grew while it ran). */
function limitHitOf(answer: Answer): TestRun['limitHit'] {
  return answer['limit'] === 'memory' || answer['limit'] === 'processes' ? answer['limit'] : undefined;
}

/** A run's status as runPytest tells a fresh one's: a hit limit first, as the sandbox's exec status does. */
function statusOf(answer: Answer, hasResults: boolean): TestRun['status'] {
  if (limitHitOf(answer) !== undefined) return 'interrupted';
  if (answer['status'] === 'timeout') return 'timeout';
  if (answer['status'] !== 'exited' || typeof answer['code'] !== 'number') return 'crashed';
  if (answer['code'] === STOPPED_EXIT_CODE) return 'stopped';
  if (COMPLETED_EXIT_CODES.has(answer['code'])) return hasResults ? 'completed' : 'crashed';
  return answer['code'] === INTERRUPTED_EXIT_CODE ? 'interrupted' : 'crashed';
}

async function waitForSocket(path: string, exited: () => ExecResult | null): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      await access(path);
      return;
    } catch {
      const ended = exited();
      if (ended !== null) {
        throw new EnvgenError('test-run-failed', `The warm pytest server exited before it was ready (${ended.status}, exit ${ended.exitCode}): ${(ended.stdout + ended.stderr).slice(-OUTPUT_TAIL_CHARS)}. Check that the profile's python can import pytest.`);
      }
      if (Date.now() > deadline) throw new EnvgenError('test-run-failed', `The warm pytest server did not start within ${START_TIMEOUT_MS / 1000} s; the machine may be overloaded.`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * Starts the `envgen_warm` server in a fresh sandbox over `worktree` and connects to it through a
 * Unix socket in the read-write results mount (the sandbox's exec is one-shot, a socket in
 * a shared directory is not). Requests are serialized: one run at a time per server.
 */
export async function startWarmServer(options: StartWarmServerOptions): Promise<WarmServer> {
  const logger = options.logger ?? silentLogger;
  const { profile } = options;
  const out = await makeOutDir('envgen-warm-');
  const { outDir, outTarget } = out;
  const { codeCache } = options;
  let sandbox: Sandbox;
  try {
    if (codeCache !== undefined) await mkdir(codeCache, { recursive: true });
    sandbox = await options.provider.open({
      worktree: options.worktree,
      mounts: [
        ...pytestMounts(out),
        { source: WARM_SUPPORT_DIR, target: SANDBOX_WARM_DIR, readonly: true },
        ...(codeCache === undefined ? [] : [{ source: codeCache, target: SANDBOX_CODE_CACHE, readonly: true }]),
      ],
    });
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
  const limitsFile = options.testLimits === undefined ? undefined : await writeRunFile(out, 'limits.json', options.testLimits);
  const env = buildPytestEnv(profile, '/dev/null', false, limitsFile);
  env['PYTHONPATH'] = `${env['PYTHONPATH'] ?? ''}:${SANDBOX_WARM_DIR}`;
  let ended: ExecResult | null = null;
  const serverDone = sandbox
    .exec(
      // Only a bubblewrap jail gives the server a pid namespace of its own to clean up after each run.
      [profile.python, '-m', 'envgen_warm', `${outTarget}/${SOCKET_NAME}`, ...(sandbox.kind === 'local' ? ['--own-pid-namespace'] : [])],
      { env, limits: { timeoutMs: SERVER_LIFETIME_MS } },
    )
    .then(
      (result) => {
        ended = result;
      },
      (error: unknown) => {
        ended = { status: 'killed', exitCode: null, signal: null, stdout: '', stderr: describeError(error), truncated: false, durationMs: 0 };
      },
    );

  let socket: Socket;
  try {
    await waitForSocket(join(outDir, SOCKET_NAME), () => ended);
    socket = await new Promise<Socket>((resolve, reject) => {
      const client = connect(join(outDir, SOCKET_NAME), () => resolve(client));
      client.once('error', reject);
    });
  } catch (error) {
    await sandbox.dispose();
    await serverDone;
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }

  // One request in flight at a time: answers arrive in order.
  let pending: { resolve: (answer: Answer) => void; reject: (error: Error) => void } | null = null;
  let buffer = '';
  let broken: Error | null = null;
  const fail = (error: Error): void => {
    broken ??= error;
    pending?.reject(error);
    pending = null;
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    if (buffer.length > LINE_LIMIT) {
      fail(new EnvgenError('test-run-failed', 'The warm pytest server sent an oversized answer.'));
      socket.destroy();
      return;
    }
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let answer: unknown;
      try {
        answer = JSON.parse(line);
      } catch {
        answer = null;
      }
      const waiting = pending;
      pending = null;
      if (!isRecord(answer)) waiting?.reject(new EnvgenError('test-run-failed', 'The warm pytest server sent an answer that is not JSON.'));
      else waiting?.resolve(answer);
    }
  });
  socket.on('error', (error) => fail(new EnvgenError('test-run-failed', `The warm pytest server's socket failed: ${error.message}`, { cause: error })));
  socket.on('close', () => fail(new EnvgenError('test-run-failed', 'The warm pytest server stopped.')));

  let queue: Promise<unknown> = Promise.resolve();
  /** Requests sent so far: only the first runs before any of the project's code did. */
  let asked = 0;
  const request = (payload: Record<string, unknown>, answerWithinMs: number): Promise<Answer> => {
    asked += 1;
    const next = queue.then(
      () =>
        new Promise<Answer>((resolve, reject) => {
          if (broken !== null) {
            reject(broken);
            return;
          }
          const timer = setTimeout(() => {
            fail(new EnvgenError('test-run-failed', `The warm pytest server did not answer within ${Math.round(answerWithinMs / 1000)} s.`));
            socket.destroy();
          }, answerWithinMs);
          pending = {
            resolve: (answer) => {
              clearTimeout(timer);
              resolve(answer);
            },
            reject: (error) => {
              clearTimeout(timer);
              reject(error);
            },
          };
          socket.write(`${JSON.stringify(payload)}\n`);
        }),
    );
    queue = next.catch(() => undefined);
    return next;
  };

  let closed = false;
  return {
    sandbox,
    alive: () => ended === null && broken === null,
    async preload(modules) {
      const python = (files: readonly string[]): string[] => files.filter((file) => file.endsWith('.py'));
      // Rewrites made by a server's first request are the clean files' (nothing else ran yet): only those join the cache.
      const adopt = codeCache !== undefined && asked === 0;
      const answer = await request(
        {
          op: 'preload',
          modules,
          rewrite: python(profile.testFiles),
          compile: python(profile.sourceFiles),
          cache: codeCache === undefined ? null : SANDBOX_CODE_CACHE,
          cache_out: adopt ? `${outTarget}/code-cache` : null,
        },
        START_TIMEOUT_MS,
      );
      const names = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
      const hits = names(answer['cache_hits']);
      let added = 0;
      if (codeCache !== undefined) {
        await touchRewrites(codeCache, hits);
        if (adopt) {
          const written = join(outDir, 'code-cache');
          added = await adoptRewrites(written, codeCache, names(answer['cache_written']));
          await rm(written, { recursive: true, force: true });
          if (added > 0) await pruneCodeCache(codeCache);
        }
      }
      return { failed: names(answer['failed']), inside: names(answer['inside']), startup: names(answer['startup']), cache: { hits: hits.length, added } };
    },
    async collect({ checkpoints, timeoutMs, analyze = false }) {
      const id = randomUUID();
      const softMs = softDeadlineMs(timeoutMs);
      const answer = await request(
        {
          op: 'collect',
          args: warmArgs(profile, sandbox.workdir),
          env: { ENVGEN_RESULTS: `${outTarget}/unused-${id}.json` },
          results: `${outTarget}/clean-${id}.json`,
          log: `${outTarget}/collector-${id}.txt`,
          analysis: analyze ? `${outTarget}/analysis-${id}.json` : null,
          timeout: softMs / 1000,
          checkpoints,
        },
        softMs + ANSWER_GRACE_MS,
      );
      const cleanText = await readOptional(join(outDir, `clean-${id}.json`));
      const log = (await readOptional(join(outDir, `collector-${id}.txt`))) ?? '';
      const analysisText = analyze ? await readOptional(join(outDir, `analysis-${id}.json`)) : null;
      const analysis = analysisText === null ? null : parseAnalysis(analysisText);
      if (answer['ok'] !== true) {
        return { ok: false, why: `${typeof answer['why'] === 'string' ? answer['why'] : 'the collector failed'}: ${log.slice(-OUTPUT_TAIL_CHARS)}` };
      }
      const statuses = Array.isArray(answer['checkpoints']) ? answer['checkpoints'].map((status) => (typeof status === 'string' ? status : 'unknown')) : [];
      return {
        ok: true,
        digest: typeof answer['digest'] === 'string' ? answer['digest'] : null,
        collection: typeof answer['collection'] === 'string' ? answer['collection'] : 'unknown',
        checkpoints: checkpoints.map((_, index) => statuses[index] ?? 'unknown'),
        clean: cleanText === null ? null : (parseResultsFile(cleanText)?.results ?? null),
        ...(analysis === null ? {} : { analysis }),
      };
    },
    async run(runOptions) {
      const id = randomUUID();
      const softMs = softDeadlineMs(runOptions.timeoutMs);
      const args = warmArgs(profile, sandbox.workdir, runOptions.select, runOptions.tbstyle);
      const answer = await request(
        {
          op: 'run',
          id,
          args,
          // A run that reports failures shows Hypothesis's shrunk examples, as the user's pytest does.
          env: { ENVGEN_RESULTS: `${outTarget}/results-${id}.json`, ...(runOptions.tbstyle === undefined ? {} : { ENVGEN_NO_SHRINK: runOptions.shrink === false ? '1' : '0' }) },
          ...(runOptions.only === undefined ? {} : { only: runOptions.only }),
          ...(runOptions.plain === true ? { plain: true } : {}),
          ...(runOptions.tbstyle === undefined ? {} : { tbstyle: runOptions.tbstyle }),
          timeout: softMs / 1000,
          log: `${outTarget}/log-${id}.txt`,
          analysis: runOptions.analyze === undefined ? null : `${outTarget}/analysis-${id}.json`,
          per_test: runOptions.analyze === 'per-test',
          ...(runOptions.resume === undefined
            ? {}
            : {
                precollected: {
                  changed: runOptions.resume.changed,
                  checkpoint: runOptions.resume.checkpoint,
                  ...(runOptions.resume.scratch === false ? { scratch: false } : {}),
                  ...(runOptions.select === undefined ? {} : { select: runOptions.select }),
                },
              }),
        },
        softMs + ANSWER_GRACE_MS,
      );
      const resultsText = await readOptional(join(outDir, `results-${id}.json`));
      const parsed = resultsText === null ? null : parseResultsFile(resultsText);
      const log = (await readOptional(join(outDir, `log-${id}.txt`))) ?? '';
      const analysisText = runOptions.analyze !== undefined ? await readOptional(join(outDir, `analysis-${id}.json`)) : null;
      const run: WarmRun = {
        status: statusOf(answer, parsed !== null),
        seconds: typeof answer['seconds'] === 'number' ? answer['seconds'] : 0,
        output: log.slice(-OUTPUT_TAIL_CHARS),
        results: parsed?.results ?? {},
        collectionErrors: parsed?.collectionErrors ?? [],
      };
      const limitHit = limitHitOf(answer);
      if (limitHit !== undefined) run.limitHit = limitHit;
      if (answer['watchdog'] === true) run.watchdog = true;
      const analysis = analysisText === null ? null : parseAnalysis(analysisText);
      if (analysis !== null) run.analysis = analysis;
      if (answer['precollected'] === true && typeof answer['checkpoint'] === 'number') run.checkpoint = answer['checkpoint'];
      if (typeof answer['declined'] === 'string') run.declined = answer['declined'];
      if (answer['fresh'] === true) run.fresh = true;
      if (runOptions.tbstyle !== undefined) run.report = log;
      logger.debug('warm run finished', { status: run.status, tests: Object.keys(run.results).length, seconds: run.seconds });
      return run;
    },
    async close() {
      if (closed) return;
      closed = true;
      socket.end();
      socket.destroy();
      try {
        await sandbox.dispose();
        await serverDone;
      } finally {
        await rm(outDir, { recursive: true, force: true });
      }
    },
  };
}
