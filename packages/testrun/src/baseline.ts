import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { EnvgenError, describeError, hashValue, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { distributionsProviding, profileHash } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import { entityKey, mapCoverage } from './coverage-map.js';
import { assertPytestVersion, environmentFingerprint } from './environment.js';
import { runInstallSteps } from './install-steps.js';
import { openPytestSandbox } from './pytest-sandbox.js';
import { runPytest } from './run-pytest.js';
import type { PytestRun } from './run-pytest.js';
import type { Baseline, CollectionError, ImportedElsewhere, TestResult } from './types.js';

const execFileAsync = promisify(execFile);

/** A step of {@link buildBaseline}, for progress display. */
export interface BaselineProgress {
  step: 'installing' | 'cached' | 'copying' | 'running' | 'mapping' | 'done';
  message: string;
}

/** Options of {@link buildBaseline}. */
export interface BuildBaselineOptions {
  /** Host path of a checkout of `commit`; it is copied, never modified. */
  worktree: string;
  commit: string;
  profile: Profile;
  sandboxProvider: SandboxProvider;
  /** envgen's home directory; baselines are cached under `<home>/baselines/`. */
  home: string;
  /** `use` (default) answers from the cache when it can; `refresh` always rebuilds. */
  cache?: 'use' | 'refresh';
  /**
   * What the project declares newer than is installed where the tests run (`pluggy>=1.2
   * (python3-pluggy 1.0.0 installed)`), named where the suite stops for no cause envgen knows.
   */
  declaredNewer?: string;
  logger?: Logger;
  onProgress?: (progress: BaselineProgress) => void;
}

/** Where the baseline of (`commit`, `hash`) is cached. */
export function baselinePath(home: string, commit: string, hash: string): string {
  return join(home, 'baselines', `${commit}-${hash}.json`);
}

function isBaseline(value: unknown, commit: string, hash: string): value is Baseline {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Baseline>;
  return (
    candidate.commit === commit &&
    candidate.profileHash === hash &&
    typeof candidate.results === 'object' &&
    candidate.results !== null &&
    Array.isArray(candidate.flaky) &&
    Array.isArray(candidate.collectionErrors) &&
    typeof candidate.coverage === 'object' &&
    candidate.coverage !== null &&
    Array.isArray(candidate.functions) &&
    (candidate.executedLines === null || typeof candidate.executedLines === 'object') &&
    Array.isArray(candidate.suiteSeconds)
  );
}

/** The hash of the source files whose lines and functions a baseline of `profile` records. */
function sourcesHash(profile: Profile): string {
  return hashValue(profile.sourceFiles);
}

/**
 * The cached baseline of (`commit`, `profile`), or null when none is cached or the cached one
 * recorded other source files than the profile's (made before envgen took a file it took for a
 * test for source, say). Throws
 * EnvgenError `store-corrupt` when the cache file exists but cannot be read as a baseline.
 */
export async function loadCachedBaseline(home: string, commit: string, profile: Profile): Promise<Baseline | null> {
  const hash = profileHash(profile);
  const path = baselinePath(home, commit, hash);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new EnvgenError('store-corrupt', `Cached baseline ${path} is not valid JSON; delete it or rebuild with cache 'refresh'.`, { cause: error });
  }
  if (!isBaseline(data, commit, hash)) {
    throw new EnvgenError('store-corrupt', `Cached baseline ${path} does not hold a baseline of ${commit}; delete it or rebuild with cache 'refresh'.`);
  }
  return data.sources === sourcesHash(profile) ? data : null;
}

async function writeAtomically(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, text);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Copies a tree without its `.git` (a worktree's `.git` points back at the mirror; tests
 * get the files, including untracked build outputs of the profile's install steps).
 */
async function copyTree(source: string, destination: string): Promise<void> {
  await mkdir(destination, { recursive: true });
  const entries = (await readdir(source)).filter((name) => name !== '.git');
  if (entries.length === 0) return;
  await execFileAsync('cp', ['-a', '--reflink=auto', ...entries.map((name) => join(source, name)), destination]);
}

/** Node ids whose outcome differs between the runs, or that only one run has. */
export function findFlaky(first: Record<string, TestResult>, second: Record<string, TestResult>): string[] {
  const ids = new Set([...Object.keys(first), ...Object.keys(second)]);
  return [...ids].filter((id) => first[id]?.outcome !== second[id]?.outcome).sort();
}

function mergeCollectionErrors(...lists: CollectionError[][]): CollectionError[] {
  const byId = new Map<string, CollectionError>();
  for (const error of lists.flat()) if (!byId.has(error.nodeid)) byId.set(error.nodeid, error);
  return [...byId.values()];
}

async function readEntities(worktree: string, files: readonly string[], logger: Logger): Promise<Map<string, Entity[]>> {
  const entities = new Map<string, Entity[]>();
  for (const file of files) {
    let source: string;
    try {
      source = await readFile(join(worktree, file), 'utf8');
    } catch (error) {
      logger.warn('source file listed by the profile is unreadable', { file, error: describeError(error) });
      continue;
    }
    entities.set(file, extractEntities(source, file).entities);
  }
  return entities;
}

/** What pytest says when the project's `minversion` is newer than it: the two versions. */
const MINVERSION = /'minversion' requires pytest-(\S+), actual pytest-(\S+?)'/;

/**
 * What Python says when a module the run imports lacks a name: the name, the module and the
 * file it was imported from.
 */
const MISSING_NAME = /ImportError: cannot import name '([^']+)' from '([^']+)' \(([^)\n]+)\)/g;

/** A file of an installed distribution or of Python's standard library, not of the project. */
const INSTALLED_FILE = /\/(?:site|dist)-packages\/|\/lib\/python3(?:\.\d+)?\//;

/**
 * The name the project imports from a library installed on this machine that lacks it (the
 * last such import of the output, the cause of the others): the project needs a newer one.
 */
function missingInstalledName(output: string): { name: string; module: string; file: string } | undefined {
  const last = [...output.matchAll(MISSING_NAME)].filter((match) => INSTALLED_FILE.test(match[3] ?? '')).at(-1);
  return last === undefined ? undefined : { name: last[1] ?? '', module: last[2] ?? '', file: last[3] ?? '' };
}

/** What Python says when an import finds no module: its name. */
const NO_MODULE = /ModuleNotFoundError: No module named '([^']+)'/g;

/** What pytest says when a conftest it loads at start fails to import: the conftest's path. */
const CONFTEST_FAILED = /ImportError while loading conftest '([^']+)'/;

/**
 * The module pytest's start needed and no path held (the last one the output names, the cause
 * of the others), the conftest that imported it, where the output names one, and the distribution
 * the project declares for it that Debian does not package, if any; none where it
 * is one of the project's own modules (then the profile's import path is wrong, not the machine).
 */
function missingModule(output: string, profile: Profile): { module: string; conftest?: string; unpackaged?: string } | undefined {
  const module = [...output.matchAll(NO_MODULE)].at(-1)?.[1];
  if (module === undefined || topLevelModules(profile.sourceFiles).has(module.split('.')[0] ?? '')) return undefined;
  const conftest = CONFTEST_FAILED.exec(output)?.[1];
  // The distributions the project declares that Debian lacks and that provide it (`pytest_relaxed` → pytest-relaxed).
  const unpackaged = distributionsProviding(module, profile.unpackaged ?? []);
  return { module, ...(conftest === undefined ? {} : { conftest }), ...(unpackaged.length === 0 ? {} : { unpackaged: unpackaged.join(', ') }) };
}

/**
 * What to deselect in a clean run past its limit: the tests that ran past the per-test limit and
 * the one it was stopped in, or, stopped between two tests, the longest that ran.
 */
function hangingTests(run: PytestRun, profile: Profile): string {
  const timedOut = Object.keys(run.results).filter((nodeId) => run.results[nodeId]?.timedOut === true);
  const parts = timedOut.length === 0 ? [] : [`${timedOut.join(', ')} (each past the per-test limit, the profile's testTimeoutMs of ${profile.testTimeoutMs} ms)`];
  if (run.stoppedIn !== undefined) parts.push(`${run.stoppedIn.nodeId} (still running after ${run.stoppedIn.seconds.toFixed(1)} s when the run was stopped)`);
  if (parts.length > 0) return `the tests that hang: ${parts.join('; ')}`;
  const ran = Object.entries(run.results);
  if (ran.length === 0) return 'the hanging test (pytest was killed before it wrote results: a test may have taken its SIGTERM handler)';
  // Stopped between two tests, none of them hanging: the suite needs longer than the limit.
  const seconds = (result: TestResult): number => result.wall ?? result.duration;
  const longest = ran
    .sort(([, a], [, b]) => seconds(b) - seconds(a))
    .slice(0, 5)
    .map(([nodeId, result]) => `${nodeId} (${seconds(result).toFixed(1)} s)`);
  return `the slowest tests: the run was stopped between two tests after ${ran.length} had run, none past the per-test limit; the longest were ${longest.join(', ')}`;
}

function assertCompleted(run: PytestRun, label: string, profile: Profile, declaredNewer: string | undefined): void {
  if (run.status === 'completed') return;
  const minversion = MINVERSION.exec(run.output);
  const missing = missingInstalledName(run.output);
  const absent = missingModule(run.output, profile);
  // An option of a plugin the machine lacks (`--benchmark-skip` the profile adopted from the project's runner).
  const unknown = (/error: unrecognized arguments: (.+)/.exec(run.output)?.[1] ?? '').split(/\s+/).filter((word) => profile.testArgs.includes(word));
  const plugins = profile.aptPackages.filter((name) => name.startsWith('python3-pytest-'));
  const limit = run.limitHit === 'memory' ? 'memory limit' : 'limit on processes and threads alive at once';
  const hint =
    run.status === 'timeout'
      ? `raise the profile's timeoutMs (${profile.timeoutMs} ms) or deselect ${hangingTests(run, profile)}`
      : run.limitHit !== undefined
        ? `it hit the sandbox's ${limit}, which every run has: deselect the test that needs more (the profile's deselect; with -v in the project's addopts, the output's last test started)`
        : minversion !== null
          ? `the project asks for pytest ${minversion[1]} or newer (its minversion) and ${profile.python} has pytest ${minversion[2]}: give the profile a python whose pytest is new enough (the config's profiles.<owner/name>.python)`
          : missing !== undefined
            ? `the project imports ${missing.name} from ${missing.module}, and the ${missing.module} installed here (${missing.file}) has no such name: the project needs a newer ${missing.module} than this machine's. Install one the profile's python sees (the config's profiles.<owner/name>.python or aptPackages), or inject at an older commit of the project that works with this one`
            : unknown.length > 0
              ? `pytest does not know ${unknown.join(' ')}, which the profile gives it as the project does: the option of a plugin that is not installed where the tests run. Install the profile's Debian packages there (${plugins.length > 0 ? plugins.join(' ') : profile.aptPackages.join(' ')}), or give testArgs of your own (the config's profiles.<owner/name>.testArgs)`
              : absent !== undefined
                ? `${absent.conftest === undefined ? 'pytest' : `the conftest ${absent.conftest}`} imports ${absent.module} when it starts, and no ${absent.module} is installed where the tests run: ${
                    absent.unpackaged === undefined
                      ? "install it there (the Debian package `envgen env` lists on its `missing` row, where the project declares it and Debian has one), or give the profile a python that has it (the config's profiles.<owner/name>.python)"
                      : `the project declares ${absent.unpackaged}, which Debian does not package: install it there by other means, or give the profile a python that has it (the config's profiles.<owner/name>.python)`
                  }`
                : declaredNewer !== undefined
                  ? // pytest-dev/pytest-cov's plugin on pluggy 1.0 (\`hookimpl(wrapper=True)\`), flask-sqlalchemy's conftest on SQLAlchemy 1.4.
                    `the project declares newer versions than are installed where the tests run, the likeliest cause: ${declaredNewer}. Give the profile a python that has them (the config's profiles.<owner/name>.python), or inject at an older commit of the project that works with these`
                  : 'check the profile (python, env, testArgs, aptPackages) against the output';
  throw new EnvgenError('test-run-failed', `The clean test suite did not complete (${label}: ${run.status}, exit ${run.exitCode}); ${hint}.\n${run.output}`);
}

/**
 * The tree's top-level import names and where each is in the tree: a package whose parent
 * directory is none (`lib/yaml` for `lib/yaml/parser.py`), a module beside no `__init__.py`.
 */
export function topLevelModules(sourceFiles: readonly string[]): Map<string, string> {
  const packages = new Set(sourceFiles.filter((file) => file === '__init__.py' || file.endsWith('/__init__.py')).map((file) => dirname(file)));
  const found = new Map<string, string>();
  for (const file of sourceFiles) {
    const parts = file.split('/');
    const outermost = parts.slice(0, -1).findIndex((_, index) => packages.has(parts.slice(0, index + 1).join('/')));
    const path = outermost >= 0 ? parts.slice(0, outermost + 1).join('/') : file;
    const name = (path.split('/').pop() ?? '').replace(/\.py$/, '');
    if (/^[A-Za-z_]\w*$/.test(name) && name !== '__init__' && !found.has(name)) found.set(name, path);
  }
  return found;
}

/** The tree's top-level modules a run imported from elsewhere (see `Baseline.importedElsewhere`). */
function importedElsewhere(sourceFiles: readonly string[], imported: Readonly<Record<string, string>>): ImportedElsewhere[] {
  return [...topLevelModules(sourceFiles)].flatMap(([module, tree]) => {
    const path = imported[module];
    return path === undefined ? [] : [{ module, tree, imported: path }];
  });
}

/**
 * The clean repo's baseline: the profile's install steps run in `worktree` itself (so every
 * later copy of it has their outputs, cached baseline or not), then the suite runs twice at
 * once, in two sandboxes over two copies of it (coverage and the lines of
 * source files that ran recorded in one of them); tests whose outcome differs are flaky.
 * Coverage is mapped to the function and method entities of the profile's source files.
 * Cached per (commit, profile hash) under `<home>/baselines/`, and made again when the
 * packages the profile's python sees have changed since ({@link environmentFingerprint});
 * throws EnvgenError `test-run-failed` when the clean suite times out or crashes.
 */
export async function buildBaseline(options: BuildBaselineOptions): Promise<Baseline> {
  const { profile, commit } = options;
  const logger = options.logger ?? silentLogger;
  const progress = options.onProgress ?? (() => undefined);
  const hash = profileHash(profile);
  const path = baselinePath(options.home, commit, hash);
  // The worktree itself gets what the install steps leave (installed metadata, built
  // extensions), so every copy of it (the validator's, the bundle runner's) has it too.
  let environment: string;
  const target = await openPytestSandbox(options.sandboxProvider, { worktree: options.worktree });
  try {
    if (profile.install.length > 0) {
      progress({ step: 'installing', message: `running ${profile.install.length} install step(s) in the worktree` });
      await runInstallSteps(target, profile, { logger });
    }
    await assertPytestVersion(target, profile);
    environment = await environmentFingerprint(target, profile);
  } finally {
    await target.close();
  }
  if ((options.cache ?? 'use') === 'use') {
    try {
      const cached = await loadCachedBaseline(options.home, commit, profile);
      if (cached !== null && cached.environment === environment) {
        progress({ step: 'cached', message: `baseline from cache ${path}` });
        return cached;
      }
      if (cached !== null) {
        const why = cached.environment === undefined ? 'the cached baseline does not record the packages the tests could import (an older envgen made it)' : 'packages the tests import or the locales changed since the cached baseline was made (installed, removed or upgraded)';
        logger.info(`${why}; running the clean suite again`, { path });
      }
    } catch (error) {
      logger.warn('ignoring unreadable cached baseline', { path, error: describeError(error) });
    }
  }

  const scratch = await mkdtemp(join(tmpdir(), 'envgen-baseline-'));
  try {
    progress({ step: 'copying', message: 'copying the worktree twice' });
    const plainTree = join(scratch, 'plain');
    const tracedTree = join(scratch, 'traced');
    await Promise.all([copyTree(options.worktree, plainTree), copyTree(options.worktree, tracedTree)]);

    progress({ step: 'running', message: 'running the clean suite twice at once (one with coverage)' });
    const runIn = async (tree: string, coverage: boolean): Promise<PytestRun> => {
      const target = await openPytestSandbox(options.sandboxProvider, { worktree: tree });
      try {
        return await runPytest(target, profile, { coverage, ...(coverage ? { lines: profile.sourceFiles } : {}), logger });
      } finally {
        await target.close();
      }
    };
    const [plain, traced] = await Promise.all([runIn(plainTree, false), runIn(tracedTree, true)]);
    assertCompleted(plain, 'first run', profile, options.declaredNewer);
    assertCompleted(traced, 'coverage run', profile, options.declaredNewer);

    progress({ step: 'mapping', message: 'mapping coverage to functions' });
    const entities = await readEntities(options.worktree, profile.sourceFiles, logger);
    const functions = [
      ...new Set(
        [...entities].flatMap(([file, list]) =>
          list.filter((entity) => entity.kind !== 'class').map((entity) => entityKey(file, entity.qualifiedName)),
        ),
      ),
    ].sort();
    const elsewhere = importedElsewhere(profile.sourceFiles, traced.imported ?? {});
    const baseline: Baseline = {
      commit,
      profileHash: hash,
      results: plain.results,
      flaky: findFlaky(plain.results, traced.results),
      collectionErrors: mergeCollectionErrors(plain.collectionErrors, traced.collectionErrors),
      coverage: mapCoverage(traced.coverage ?? {}, (file) => entities.get(file) ?? null),
      untraced: traced.untraced ?? [],
      ...(elsewhere.length > 0 ? { importedElsewhere: elsewhere } : {}),
      ...(traced.collection === undefined ? {} : { ranAtCollection: Object.keys(mapCoverage({ collection: traced.collection }, (file) => entities.get(file) ?? null)).sort() }),
      functions,
      executedLines: traced.lines ?? null,
      ...(traced.collectionLines === undefined ? {} : { collectionLines: traced.collectionLines }),
      suiteSeconds: [plain.seconds, traced.seconds],
      environment,
      sources: sourcesHash(profile),
      createdAt: new Date().toISOString(),
    };
    await writeAtomically(path, JSON.stringify(baseline));
    logger.debug('baseline built', { path, tests: Object.keys(baseline.results).length, flaky: baseline.flaky.length });
    progress({ step: 'done', message: `baseline cached at ${path}` });
    return baseline;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
