import { existsSync } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EnvgenError, hashValue } from '@envgen/core';
import { matchesAnyGlob } from './glob.js';
import type { ProfileOverride, ProfileOverrideValues } from './profile-overrides.js';
import { RENAMED_PACKAGES_DIR, installedMetadataStep, packageRoots, readPackaging, renamedPackages, renamedPackagesStep, scriptsDir } from './packaging.js';
import type { Packaging } from './packaging.js';
import { filterAddopts, selectingOptionPlugin, joinShellWords, quoteShellWord, readPytestSettings, turnsWarningsIntoErrors } from './pytest-config.js';
import { findDjangoSettings, isDjangoSettings, mayNameDjangoSettings } from './django.js';
import { mayNameTestPaths, readRunner } from './runner-paths.js';
import type { RunnerOptions, RunnerTestPaths } from './runner-paths.js';
import { moduleFile } from './module-file.js';
import { importedNames } from './python-imports.js';
import { findUnittestModules } from './unittest-modules.js';
import { readMarkerEnvironment } from './markers.js';
import { highestMinimums, readDebianMap, readDeclaredDependencies, readDistributionName } from './requirements.js';
import type { DeclaredDependencies } from './requirements.js';
import type { ConfigFile, PytestSettings } from './pytest-config.js';
import type { Profile } from './types.js';

/** Default interpreter: Debian's, which sees the apt-installed test dependencies. */
export const DEFAULT_PYTHON = '/usr/bin/python3';
/** Default wall-clock limit of a whole suite run. */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;
/** Default per-test limit: generous for real tests, finite for a test that hangs. */
export const DEFAULT_TEST_TIMEOUT_MS = 2 * 60 * 1000;

// Never part of the code under test, at any depth: VCS data, caches, virtualenvs, build output, envgen's stand-ins of renamed packages.
const SKIPPED_DIR_NAMES = new Set(['.git', '.hg', '.svn', '.tox', '.nox', '.venv', 'venv', '.eggs', '__pycache__', 'node_modules', '.mypy_cache', '.pytest_cache', '.ruff_cache', 'site-packages', RENAMED_PACKAGES_DIR]);
// Build output, at any depth, unless the directory is a package of that name (pypa/build's src/build).
const BUILD_OUTPUT_DIR_NAMES = new Set(['build', 'dist']);
// Top-level directories of documentation, examples and benchmarks: Python there is neither
// library nor test (toolz's bench/test_*.py are benchmarks; the tutorials' code of tiangolo/typer's
// docs_src, which its tests run as scripts).
const SKIPPED_TOP_DIRS = new Set(['docs', 'doc', 'docs_src', 'documentation', 'examples', 'example', 'bench', 'benchmarks', 'benchmark']);
// Top-level packaging and task files: mutating them cannot break a test.
const TOOLING_FILES = new Set(['setup.py', 'ez_setup.py', 'noxfile.py', 'versioneer.py', 'fabfile.py', 'dodo.py']);
const CONFIG_FILE_NAMES = ['pytest.toml', '.pytest.toml', 'pytest.ini', '.pytest.ini', 'pyproject.toml', 'tox.ini', 'setup.cfg'];
const DEFAULT_PYTHON_FILES = ['test_*.py', '*_test.py'];
// Besides pytest's python_files: fixtures, single-file suites and everything in a tests dir.
const EXTRA_TEST_GLOBS = ['conftest.py', 'tests.py', 'test.py', '**/tests/**/*.py', '**/test/**/*.py'];

/**
 * True for a repo-relative directory whose files are never source or tests. `isPackage` tells
 * whether a directory holds an `__init__.py`: a package named `build` or `dist` is no build output.
 */
export function isSkippedDir(relDir: string, isPackage: (dir: string) => boolean = () => false): boolean {
  const parts = relDir.split('/');
  const skipped = (part: string, index: number): boolean =>
    SKIPPED_DIR_NAMES.has(part) || part.endsWith('.egg-info') || (BUILD_OUTPUT_DIR_NAMES.has(part) && !isPackage(parts.slice(0, index + 1).join('/')));
  return parts.some(skipped) || SKIPPED_TOP_DIRS.has(parts[0] ?? '');
}

/** Whether a file's directory is skipped (see {@link isSkippedDir}), given the tree's files. */
function inSkippedDir(file: string, packageDirs: ReadonlySet<string>): boolean {
  return isSkippedDir(file.slice(0, Math.max(0, file.lastIndexOf('/'))), (dir) => packageDirs.has(dir));
}

/** The directories of `files` that hold an `__init__.py`. */
function packageDirsOf(files: readonly string[]): Set<string> {
  return new Set(files.filter((file) => file === '__init__.py' || file.endsWith('/__init__.py')).map((file) => file.slice(0, Math.max(0, file.lastIndexOf('/')))));
}

/** Files that make a directory a Python project of its own. */
const PROJECT_FILES = new Set(['pyproject.toml', 'setup.py', 'setup.cfg']);
// A project under such a directory is a test's data (a sample project), not one of the repo's.
const TEST_DATA_DIR = /^(?:fixtures?|test_?data|data|resources|samples?|examples?|example_scripts|cases)$/;
/** Directories of tests: a project inside one is a sample the tests build or install, not one of the repo's. */
const TEST_DIR = /^(?:tests?|testing)$/;
/** Test modules by pytest's default names, for telling which project holds a repo's tests. */
const TEST_MODULE = /(?:^|\/)(?:test_[^/]*|[^/]*_test|tests?)\.py$/;

/**
 * The directories of a repo's nested Python projects (not the root, not test data or inside
 * tests), deepest first. A project holds Python code: a directory with a project file alone
 * declares dependencies only (kurtmckee/feedparser's `requirements/docs/pyproject.toml`, a
 * Poetry project with `package-mode = false`).
 */
function nestedProjectDirs(files: readonly string[]): string[] {
  const dirs = new Set<string>();
  const packageDirs = packageDirsOf(files);
  // Every directory with a Python file at or below it.
  const withCode = new Set(files.filter((file) => file.endsWith('.py')).flatMap((file) => file.split('/').slice(0, -1).map((_, index, parts) => parts.slice(0, index + 1).join('/'))));
  for (const file of files) {
    const slash = file.lastIndexOf('/');
    if (slash < 0 || !PROJECT_FILES.has(file.slice(slash + 1))) continue;
    const dir = file.slice(0, slash);
    if (withCode.has(dir) && !isSkippedDir(dir, (each) => packageDirs.has(each)) && !dir.split('/').some((part) => TEST_DATA_DIR.test(part) || TEST_DIR.test(part))) dirs.add(dir);
  }
  return [...dirs].sort((a, b) => b.split('/').length - a.split('/').length || a.localeCompare(b));
}

/**
 * Where a project's code is imported from once installed: its `src/` in a src layout (any
 * Python code there: a package, a module, a namespace package without `__init__.py`), else its directory.
 */
function importRootOf(files: readonly string[], dir: string): string {
  const src = `${dir}/src/`;
  return files.some((file) => file.startsWith(src) && file.endsWith('.py')) ? `${dir}/src` : dir;
}

/** The project {@link chooseProject} picked: `dir` is `''` for the repo root. */
export interface ProjectChoice {
  dir: string;
  why: string;
}

/**
 * The first module name two of `modules` (test modules and conftests) would both be imported
 * under by pytest's default import mode (the dotted path from the first directory up without
 * an `__init__.py`), or null. One session cannot collect both (`import file mismatch`).
 */
function clashingModuleName(modules: readonly string[], files: ReadonlySet<string>): string | null {
  const seen = new Map<string, string>();
  for (const file of modules) {
    const parts = file.slice(0, -'.py'.length).split('/');
    let first = parts.length - 1;
    while (first > 0 && files.has([...parts.slice(0, first), '__init__.py'].join('/'))) first -= 1;
    // A conftest.py outside a package is imported apart from the others, by path.
    if (first === parts.length - 1 && parts[first] === 'conftest') continue;
    const name = parts.slice(first).join('.');
    const other = seen.get(name);
    if (other !== undefined && other !== file) return name;
    seen.set(name, file);
  }
  return null;
}

/**
 * The Python project of the repo whose tests envgen runs, as its developers run them. A repo
 * may hold nested projects (directories with their own `pyproject.toml`, `setup.py` or
 * `setup.cfg`, as in a monorepo's `libs/*` or a multi-language repo's `python/`) beside its
 * root's own code. When a pytest config at the root (`rootRunsPytest`) runs their tests
 * together and one session can collect them all, the root. Else the project (the root counted
 * as one, first among equals) holding the most test modules: a nested one is run as its
 * developers run it alone, after installing it. `chosen` (a profile's `project`, `.` for the
 * root) overrides.
 *
 * @throws EnvgenError `config-invalid` when `chosen` holds no file of the repo.
 */
export function chooseProject(files: readonly string[], rootRunsPytest: boolean, chosen?: { dir: string; source: string }): ProjectChoice {
  if (chosen !== undefined) {
    if (chosen.dir === '.') return { dir: '', why: `the repo root, from ${chosen.source}` };
    if (!files.some((file) => file.startsWith(`${chosen.dir}/`))) {
      throw new EnvgenError('config-invalid', `${chosen.source}: "project" names ${chosen.dir}, which holds no file of the repo; name a directory of the repo (\`.\` for the root).`);
    }
    return { dir: chosen.dir, why: `from ${chosen.source}` };
  }
  const dirs = nestedProjectDirs(files);
  if (dirs.length === 0) return { dir: '', why: '' };
  const counts = new Map<string, number>([['', 0]]);
  const modules: string[] = [];
  const packageDirs = packageDirsOf(files);
  for (const file of files) {
    if (inSkippedDir(file, packageDirs)) continue;
    if (file === 'conftest.py' || file.endsWith('/conftest.py')) modules.push(file);
    if (!TEST_MODULE.test(file)) continue;
    const owner = dirs.find((dir) => file.startsWith(`${dir}/`)) ?? '';
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
    modules.push(file);
  }
  const clash = clashingModuleName(modules, new Set(files));
  if (rootRunsPytest && clash === null) return { dir: '', why: '' };
  // The root first among equals.
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || a[0].split('/').length - b[0].split('/').length || a[0].localeCompare(b[0]));
  const [best] = ranked;
  if (best === undefined || best[0] === '') return { dir: '', why: '' };
  const others = ranked.slice(1).filter(([, count]) => count > 0).map(([dir, count]) => `${dir === '' ? 'the root' : dir} (${count})`);
  const together = clash === null ? '' : ` (one session cannot collect them all: two are module ${clash})`;
  return {
    dir: best[0],
    why: `the repo's tests live in nested projects${together}; ${best[0]} holds the most test modules (${best[1]})${others.length > 0 ? `, before ${others.join(', ')}` : ''}: set "project" in the profile to test another`,
  };
}

/** Options of {@link detectProfile} and {@link deriveProfile}. */
export interface DetectProfileOptions {
  /** Debian packages the repo needs (ResolvedRepo.aptPackages); python3-pytest is always added. */
  aptPackages?: string[];
  /** Profile files applied over detection, in order (see `loadProfileOverrides`). */
  overrides?: ProfileOverride[];
  /** The repo's git submodules checked out in the tree: another project's files, neither its sources nor its tests. */
  submodules?: ReadonlyArray<{ path: string; commit: string }>;
  /** The repository's name (`tempora` of `jaraco/tempora`): the package of a layout that names it so (see `renamedPackages`). */
  repoName?: string;
}

/** What {@link deriveProfile} reads: the tree's files and its pytest config files. */
export interface TreeListing {
  /** Repo-relative paths of all regular files (symlinks and `.git` excluded). */
  files: string[];
  configFiles: ConfigFile[];
  /** The project's packaging when its tests need it installed (see `readPackaging`). */
  packaging?: Packaging | null;
  /**
   * What the project declares it needs, as Debian packages (see `readDeclaredDependencies`),
   * or `unmapped` when dh-python's map is not installed; used when the repo names no Debian packages.
   */
  declared?: DeclaredDependencies | 'unmapped' | null;
  /** The text of the top-level `setup.py`, when there is one. */
  setupScript?: string | null;
  /**
   * The Python project inside the repo the tests are run for, when it is not the repo root
   * (see {@link chooseProject}): then every path above (`files`, config files, packaging) is
   * relative to its directory.
   */
  project?: NestedProject;
  /** The config files pytest reads for the project, repo-relative (default `configFiles`). */
  pytestConfigFiles?: ConfigFile[];
  /**
   * Where the repo's other Python projects are imported from once installed (`libs/util/src`),
   * repo-relative: a monorepo's developers install them all beside the one they test.
   */
  workspaceRoots?: string[];
  /**
   * Modules of a unittest suite that pytest's `python_files` leaves out (see
   * `findUnittestModules`), relative like `files`; named in the test selection when no pytest
   * config chooses the tests.
   */
  unittestModules?: string[];
  /**
   * The settings module of a Django app whose developers run its suite with Django's own runner
   * (see `findDjangoSettings`), and the file that names it: pytest-django runs it with them.
   */
  djangoSettings?: { module: string; from: string };
  /**
   * The test paths every pytest command of the project's CI, tox.ini or Makefile names (see
   * `findRunnerTestPaths`): the selection when no pytest config chooses the tests.
   */
  runnerTestPaths?: RunnerTestPaths;
  /**
   * The options the project's CI, tox.ini or Makefile give pytest to leave its benchmarks out
   * of a run of its tests (see `findRunnerOptions`).
   */
  runnerOptions?: RunnerOptions;
  /**
   * The entries of the config's `python_files` that match the project's library modules (see
   * {@link findLibraryEntries}), each with the files it matches that are test modules.
   */
  libraryEntries?: Record<string, string[]>;
  /**
   * Files named like a single-file suite (`test.py`, `tests.py`) that pytest's `python_files`
   * leaves out and that define no test: a developer's scratch script (wireservice/leather's
   * `test.py` draws a chart into `test.svg`), not named to pytest.
   */
  scripts?: string[];
}

/** A Python project in a subdirectory of the repo. */
export interface NestedProject {
  /** Its directory, repo-relative (`libs/core`). */
  dir: string;
  /** Why it was chosen, for provenance. */
  why: string;
}

/** A `setup.py` that builds compiled extensions: setuptools' `Extension(...)`, `ext_modules`, Cython's `cythonize(...)`. */
const DECLARES_EXTENSIONS = /\b(?:Extension|cythonize)\s*\(|\bext_modules\b/;
const EXTENSION_SOURCE = /\.(?:c|cc|cpp|cxx|pyx)$/;

/**
 * The C, C++ and Cython sources of the compiled extensions the project's `setup.py` builds
 * (outside tests and skipped directories), or none when it builds none.
 */
function extensionSources(tree: TreeListing, testGlobs: readonly string[]): string[] {
  const script = tree.setupScript;
  if (script == null || !DECLARES_EXTENSIONS.test(script)) return [];
  const packageDirs = packageDirsOf(tree.files);
  const sources = tree.files.filter(
    (file) => EXTENSION_SOURCE.test(file) && !inSkippedDir(file, packageDirs) && !matchesAnyGlob(file.replace(EXTENSION_SOURCE, '.py'), testGlobs),
  );
  // Those setup.py names, when it names them (else it finds them itself, by a glob or a walk);
  // a Cython source counts as named where setup.py names the C or C++ file it makes.
  const named = sources.filter((source) => namesFile(script, source) || cythonOutput(script, source) !== undefined);
  return named.length > 0 ? named : sources;
}

/** Whether setup.py names `file`, by its path or its name, as a whole word (`_speed.c` is not in `_speed.cpp`). */
function namesFile(script: string, file: string): boolean {
  const name = basenameOf(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w.-])${name}(?![\\w.])`).test(script);
}

/** A C or C++ source setup.py names that the checkout lacks, and the Cython source beside it that makes it. */
interface GeneratedSource {
  pyx: string;
  output: string;
}

/**
 * The extension sources setup.py names as generated C or C++ (`Extension("pkg._speed",
 * ["pkg/_speed.c"])`) that the checkout does not hold, made from the `.pyx` beside them by the
 * project's own make target or release script (aio-libs' yarl and frozenlist): setuptools
 * compiles what it is given and only `cythonize()` would make them.
 */
function generatedSources(tree: TreeListing, sources: readonly string[]): GeneratedSource[] {
  const files = new Set(tree.files);
  return sources.flatMap((pyx) => {
    const output = cythonOutput(tree.setupScript ?? '', pyx);
    return output === undefined || files.has(output) ? [] : [{ pyx, output }];
  });
}

/** The C or C++ file setup.py names that Cython makes from the `.pyx` source `file`, if it names one. */
function cythonOutput(script: string, file: string): string | undefined {
  if (!file.endsWith('.pyx')) return undefined;
  const stem = file.slice(0, -'.pyx'.length);
  return ['.c', '.cpp'].map((ext) => stem + ext).find((output) => namesFile(script, output));
}

/**
 * `setup.py` run as `python3 -c` runs it, after setuptools' pyproject.toml reader has dropped
 * each `[project]` field that this setuptools's own schema rejects (PEP 639's `license =
 * "MIT"` and `license-files`, newer than Debian's setuptools 66), saying which on stderr.
 * `pip install -e .` builds with the newest setuptools, which reads them; building extensions
 * in place needs none of them (envgen writes the installed metadata itself), while the reader
 * that rejects them stops the whole build (zope.interface).
 */
const SETUP_READING_WHAT_IT_CAN = `import runpy, sys
from setuptools.config import pyprojecttoml, _validate_pyproject as schema
load = pyprojecttoml.load_file
def readable(path):
    config = load(path)
    project = config.get("project")
    for key in [key for key in project or {} if key != "name"]:
        probe = {"name": "probe", key: project[key]}
        if key != "version" and not (key == "dynamic" and "version" in project[key]):
            probe["version"] = "0"
        try:
            schema.validate({"project": probe})
        except schema.ValidationError as error:
            del project[key]
            print("envgen: this setuptools cannot read pyproject.toml's project.%s (%s); built without it" % (key, error.summary.splitlines()[0]), file=sys.stderr)
    return config
pyprojecttoml.load_file = readable
sys.argv[0] = "setup.py"
runpy.run_path("setup.py", run_name="__main__")
`;

/**
 * The install step that builds a project's compiled extensions in place, as `pip install -e .`
 * builds them: `setup.py build_ext --inplace`, after Cython has made the generated sources
 * setup.py names and the checkout lacks (see {@link generatedSources}), as the project's make
 * target does. Where the build fails, it is tried once more with the pyproject.toml fields
 * this setuptools cannot read left out ({@link SETUP_READING_WHAT_IT_CAN}). A build that still
 * fails (no compiler, headers missing) says so and lets the tests run: a pure-Python fallback
 * then runs where the project has one, and a test that needs the extension fails to import
 * it, as it would for the user.
 */
function buildExtensionsStep(python: string, sources: readonly string[], generated: readonly GeneratedSource[], dir: string): string {
  const named = sources.slice(0, 3).join(', ') + (sources.length > 3 ? `, ${sources.length - 3} more` : '');
  const cython = generated.map(({ pyx, output }) => {
    const include = pyx.includes('/') ? ` -I ${quoteShellWord(pyx.slice(0, pyx.lastIndexOf('/')))}` : '';
    return `${quoteShellWord(python)} -m cython -3${output.endsWith('.cpp') ? ' --cplus' : ''}${include} -o ${quoteShellWord(output)} ${quoteShellWord(pyx)} && `;
  });
  const build = `${cython.join('')}{ ${quoteShellWord(python)} setup.py build_ext --inplace || ${quoteShellWord(python)} -c ${quoteShellWord(SETUP_READING_WHAT_IT_CAN)} build_ext --inplace; }`;
  return [
    `# envgen: the compiled extensions ${dir === '' ? '' : `${dir}/`}setup.py builds, built in place as \`pip install -e .\` builds them (${named})`,
    `${dir === '' ? build : `(cd ${quoteShellWord(dir)} && ${build})`} || echo 'envgen: building the compiled extensions failed (output above); tests that import them will fail' >&2`,
  ].join('\n');
}

function topLevelEntry(path: string): string {
  return path.split('/')[0] ?? path;
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * What test files match: pytest's `python_files` (or its default), an entry that matches the
 * project's library modules giving the test modules it matches instead (`library`, see
 * {@link findLibraryEntries}), and envgen's conventions, unless an override names them.
 */
function testGlobsOf(settings: PytestSettings | null, override: ProfileOverrideValues, library: Readonly<Record<string, string[]>> = {}): string[] {
  return override.testGlobs ?? [...(settings?.pythonFiles ?? DEFAULT_PYTHON_FILES).flatMap((entry) => library[entry] ?? [entry]), ...EXTRA_TEST_GLOBS];
}

/**
 * What pytest collects from a module besides its doctests, with the default `python_functions`
 * and `python_classes`: `test*` functions and methods, `Test*` classes, TestCase subclasses.
 */
const DEFINES_TESTS = /^[ \t]*(?:async[ \t]+)?def[ \t]+test|^[ \t]*class[ \t]+Test|\bTestCase\b/m;

/**
 * The entries of `python_files` (the config's, or pytest's default) that match the project's
 * library modules, each with the files it matches that are test modules (which take its place in
 * the test globs; those envgen's conventions match anyway are left to them). A library module is
 * one of a package, outside test directories, that another module of a package imports (bandit's
 * `bandit/core/test_set.py` and `test_properties.py`, named like tests by pytest's default), or,
 * matched only by a name the config adds, one that defines no test (check-manifest:
 * `python_files = tests.py check_manifest.py` with `--doctest-modules`, for the module's
 * docstrings' examples) or that another such module imports (patsy: `python_files = *.py`, whose
 * modules define their tests beside their code). Such a module is source, which may hold tests, as
 * one whose doctests a suite runs: taken for a test file, it left the tree no code to put bugs in
 * (or, named like a test, code its package runs). pytest still collects the tests of those it is
 * given, and the weakening deselects those a bug breaks. None where the config names tests
 * otherwise than `test*` and `Test*` (`python_functions`).
 */
async function findLibraryEntries(root: string, pythonFiles: readonly string[], settings: PytestSettings | null): Promise<Record<string, string[]>> {
  if (settings?.ownTestNames === true) return {};
  const entries = settings?.pythonFiles ?? DEFAULT_PYTHON_FILES;
  const inTestDir = (file: string): boolean => matchesAnyGlob(file, EXTRA_TEST_GLOBS) || file.split('/').slice(0, -1).some((part) => TEST_DIR.test(part));
  const candidates = pythonFiles.filter((file) => !inTestDir(file) && matchesAnyGlob(file, entries));
  if (candidates.length === 0) return {};
  const library = new Set<string>();
  const read = async (files: readonly string[]): Promise<Map<string, string | null>> => new Map(await Promise.all(files.map(async (file): Promise<[string, string | null]> => [file, await readFile(join(root, file), 'utf8').catch(() => null)])));
  const moduleName = (file: string): string => (basenameOf(file) === '__init__.py' ? basenameOf(file.slice(0, -'/__init__.py'.length)) : basenameOf(file).slice(0, -'.py'.length));
  // The names each set of modules imports, with the modules importing each.
  const importersIn = (texts: ReadonlyMap<string, string | null>): Map<string, Set<string>> => {
    const importers = new Map<string, Set<string>>();
    for (const [file, text] of texts) for (const name of importedNames(text ?? '')) importers.set(name, (importers.get(name) ?? new Set<string>()).add(file));
    return importers;
  };
  // Imported by the library's own modules: those of a package (not a script at the top, a `runtests.py` that imports a single-file suite) no entry matches.
  const files = new Set(pythonFiles);
  const inPackage = (file: string): boolean => file.includes('/') && files.has(`${file.slice(0, file.lastIndexOf('/'))}/__init__.py`);
  const sources = pythonFiles.filter((file) => inPackage(file) && !inTestDir(file) && !matchesAnyGlob(file, entries));
  const importedBySource = importersIn(await read(sources));
  for (const file of candidates) if (inPackage(file) && importedBySource.has(moduleName(file))) library.add(file);
  // Named only by the config: no test defined, or imported by another such module (a file that cannot be read may be a test module: it stays one).
  const unconventional = candidates.filter((file) => !library.has(file) && !matchesAnyGlob(file, DEFAULT_PYTHON_FILES));
  const texts = await read(unconventional);
  const importers = importersIn(texts);
  for (const [file, text] of texts) {
    if (text === null) continue;
    if (!DEFINES_TESTS.test(text) || [...(importers.get(moduleName(file)) ?? [])].some((other) => other !== file)) library.add(file);
  }
  const narrowed: Record<string, string[]> = {};
  for (const entry of entries) {
    const matched = pythonFiles.filter((file) => matchesAnyGlob(file, [entry]));
    if (matched.some((file) => library.has(file))) narrowed[entry] = matched.filter((file) => !library.has(file) && !matchesAnyGlob(file, EXTRA_TEST_GLOBS));
  }
  return narrowed;
}

function collectOverrides(overrides: ProfileOverride[]): { values: ProfileOverrideValues; from: Record<string, string> } {
  const values: ProfileOverrideValues = {};
  const from: Record<string, string> = {};
  for (const override of overrides) {
    for (const [key, value] of Object.entries(override.values)) {
      // Which project to test was settled before detection ({@link chooseProject}).
      if (key === 'project') continue;
      if (key === 'env') {
        for (const name of Object.keys(value as Record<string, string>)) from[`env.${name}`] = override.source;
        values.env = { ...values.env, ...(value as Record<string, string>) };
      } else {
        from[key] = override.source;
        Object.assign(values, { [key]: value });
      }
    }
  }
  return { values, from };
}

/**
 * Derives a profile from a tree listing (pure: no disk). Detection, in order of precedence
 * (lowest first): defaults; the pytest config file pytest would read (`testpaths`,
 * `python_files`, plugin options in `addopts`); the tree itself (src layout → PYTHONPATH=src, and
 * the package directories the packaging config names;
 * test arguments: `testpaths` when configured, none when `addopts` enable doctests so pytest's own
 * discovery runs, else the top-level entries holding test modules); then each override.
 *
 * Test files match `testGlobs`: pytest's `python_files` (default `test_*.py`, `*_test.py`) plus
 * `conftest.py`, single-file suites `tests.py`/`test.py`, and every `.py` under a `tests/` or
 * `test/` directory. Every other `.py` file is source, except top-level packaging files
 * (setup.py, noxfile.py, versioneer.py…). Skipped everywhere: VCS dirs, caches, virtualenvs
 * (`pyvenv.cfg`), build/dist, `*.egg-info`; skipped at the top level: docs/, doc/, docs_src/, documentation/, examples/, example/, bench/, benchmarks/, benchmark/.
 *
 * @throws EnvgenError `no-python-tests` when no test module is found.
 */
export function deriveProfile(tree: TreeListing, options: DetectProfileOptions = {}): Profile {
  const provenance: Record<string, string> = {};
  const { values: override, from: overrideFrom } = collectOverrides(options.overrides ?? []);
  const settings = readPytestSettings(tree.pytestConfigFiles ?? tree.configFiles);
  const project = tree.project;
  /** A path of the project's tree (relative to its directory), repo-relative. */
  const inRepo = (path: string): string => (project === undefined ? path : path === '' || path === '.' ? project.dir : `${project.dir}/${path}`);
  if (project !== undefined) provenance['project'] = `${project.dir}: ${project.why}`;

  const venvDirs = tree.files.filter((file) => basenameOf(file) === 'pyvenv.cfg').map((file) => file.slice(0, -'pyvenv.cfg'.length));
  const packageDirs = packageDirsOf(tree.files);
  const pythonFiles = tree.files
    .filter((file) => file.endsWith('.py'))
    .filter((file) => !inSkippedDir(file, packageDirs) && !venvDirs.some((dir) => dir !== '' && file.startsWith(dir)))
    .sort();

  const patterns = settings?.pythonFiles ?? DEFAULT_PYTHON_FILES;
  const library = tree.libraryEntries ?? {};
  const narrowed = Object.keys(library);
  const testGlobs = testGlobsOf(settings, override, library);
  const butLibrary = narrowed.length > 0 ? `, ${narrowed.join(', ')} but for the library modules it matches (source, though named like tests or holding tests: doctests, or tests defined beside the code, which pytest collects and the weakening deselects)` : '';
  provenance['testGlobs'] = `${settings?.pythonFiles ? `python_files from ${settings.source}` : 'pytest default python_files'}${butLibrary} + envgen conventions`;

  const testFiles = pythonFiles.filter((file) => matchesAnyGlob(file, testGlobs));
  const sourceFiles = pythonFiles.filter((file) => !matchesAnyGlob(file, testGlobs) && !TOOLING_FILES.has(file));
  // A unittest suite's modules named otherwise (peewee's tests/models.py) are named themselves.
  const unittestModules = settings?.pythonFiles === undefined ? (tree.unittestModules ?? []).filter((file) => testFiles.includes(file)) : [];
  const modules = override.testGlobs
    ? testFiles.filter((file) => !['conftest.py', '__init__.py'].includes(basenameOf(file)))
    : [...testFiles.filter((file) => matchesAnyGlob(file, [...patterns, 'tests.py', 'test.py']) && !(tree.scripts ?? []).includes(file)), ...unittestModules];
  // A project whose only tests are its docstrings' examples (jaraco's skeleton: `addopts=--doctest-modules`, no test file).
  const doctestOnly = modules.length === 0 && settings?.addopts.includes('--doctest-modules') === true && sourceFiles.length > 0;
  // Its failing doctests are deselected from a conftest.py at or above each source module.
  const conftestDirs = testFiles.filter((file) => basenameOf(file) === 'conftest.py').map((file) => file.slice(0, -'conftest.py'.length));
  const deselectable = doctestOnly && sourceFiles.every((file) => conftestDirs.some((dir) => file.startsWith(dir)));
  if (deselectable) provenance['doctestsOnly'] = `addopts in ${settings?.source ?? ''} give --doctest-modules and no test module exists: the suite is the docstrings' examples, and a bug's failing ones are deselected from ${conftestDirs.map((dir) => inRepo(`${dir}conftest.py`)).join(', ')}`;
  else if (modules.length === 0) {
    throw new EnvgenError(
      'no-python-tests',
      `No Python test files found${project === undefined ? '' : ` in ${project.dir}`}: looked for ${testGlobs.join(', ')} (skipping VCS, cache, virtualenv and build dirs and top-level docs/examples). ` +
        (doctestOnly
          ? `Its only tests are doctests: addopts in ${settings?.source ?? ''} give --doctest-modules, which runs the examples in the docstrings of its ${sourceFiles.length} source module(s). envgen needs test files: a bundle's test_weaken.diff edits only test files the tree holds (it deselects a failing doctest from a conftest.py at or above its module, or from a test module), and no conftest.py is at or above ${sourceFiles.filter((file) => !conftestDirs.some((dir) => file.startsWith(dir))).length} of those modules, so no bug there could be hidden from the weakened suite. `
          : '') +
        'If the tests live elsewhere, add a profile file configs/profiles/<owner>__<name>.json with "testGlobs" and "testArgs" (see configs/profiles/README.md).',
    );
  }

  // A pinned hash seed: under random seeds set and dict-of-set orders change from run to run,
  // and with them which tests a bug reaches, so no verdict could be reproduced.
  const env: Record<string, string> = { PYTHONHASHSEED: '0' };
  provenance['env.PYTHONHASHSEED'] = 'pinned so test outcomes reproduce';
  // A src layout: Python code under src/ (a package, a module, a namespace package without __init__.py).
  const srcPackage = pythonFiles.find((file) => file.startsWith('src/'));
  // Package directories the packaging config names (lib/, python/), as `pip install -e .` makes them importable.
  const configuredRoots = packageRoots(tree.configFiles, tree.setupScript).filter((dir) => dir !== 'src' && pythonFiles.some((file) => file.startsWith(`${dir}/`) && !matchesAnyGlob(file, testGlobs)));
  const importRoots = [...(srcPackage === undefined ? [] : ['src']), ...configuredRoots];
  // A nested project's own directory stands where the repo root does for a root project (on
  // the path of \`python -m pytest\`), and the repo's other projects are installed beside it.
  const workspace = tree.workspaceRoots ?? [];
  // Packages imported under another name than their directory's: stand-ins of that name, made by an install step.
  const renamed = renamedPackages(pythonFiles, tree.configFiles, tree.setupScript, options.repoName);
  const searchPath = [...importRoots.map(inRepo), ...(renamed.length > 0 ? [inRepo(RENAMED_PACKAGES_DIR)] : []), ...(project === undefined ? [] : [project.dir]), ...workspace];
  if (searchPath.length > 0) {
    env['PYTHONPATH'] = searchPath.join(':');
    const others = workspace.length > 3 ? `${workspace.slice(0, 3).join(', ')} and ${workspace.length - 3} more` : workspace.join(', ');
    provenance['env.PYTHONPATH'] = [
      ...(srcPackage === undefined ? [] : [`src layout (${inRepo(srcPackage)})`]),
      ...(configuredRoots.length > 0 ? [`package directories of the packaging config (${configuredRoots.map(inRepo).join(', ')})`] : []),
      ...(renamed.length > 0 ? [`stand-ins of the packages imported under another name than their directory's (${renamed.map((entry) => `${entry.name}: ${entry.from}`).join('; ')})`] : []),
      ...(project === undefined ? [] : ["the project's directory"]),
      ...(workspace.length > 0 ? [`the repo's other projects as a workspace installs them (${others})`] : []),
    ].join(' + ');
  }

  const djangoPackages = tree.djangoSettings === undefined ? [] : ['python3-django', 'python3-pytest-django'];

  const python = override.python ?? DEFAULT_PYTHON;
  const projectExtensions = extensionSources(tree, testGlobs);
  const extensions = projectExtensions.map(inRepo);
  const generated = generatedSources(tree, projectExtensions);
  // What building them takes: a compiler, Python's headers, setuptools, and Cython for .pyx sources.
  const buildPackages = extensions.length === 0 ? [] : ['gcc', 'g++', 'python3-dev', 'python3-setuptools', ...(extensions.some((file) => file.endsWith('.pyx')) ? ['cython3'] : [])];
  const fromDebian = (options.aptPackages?.length ?? 0) > 0;
  const declared = fromDebian || tree.declared === 'unmapped' ? null : (tree.declared ?? null);
  const aptPackages = [...new Set([...(options.aptPackages ?? []), ...(declared?.packages ?? []), ...buildPackages, ...djangoPackages, 'python3-pytest'])].sort();
  if (fromDebian) provenance['aptPackages'] = 'Debian Build-Depends (build tooling dropped) + python3-pytest';
  else if (declared !== null) {
    const unpackaged = declared.unpackaged.length > 0 ? `; not packaged in Debian: ${declared.unpackaged.join(' ')}` : '';
    provenance['aptPackages'] = `declared dependencies (${declared.sources.join(', ')}) by dh-python's map${unpackaged} + python3-pytest`;
  } else if (tree.declared === 'unmapped') provenance['aptPackages'] = "default (python3-pytest); the declared dependencies are not mapped to Debian packages: dh-python's map is missing (apt-get install dh-python)";
  else provenance['aptPackages'] = 'default (python3-pytest)';
  if (buildPackages.length > 0) provenance['aptPackages'] += ` + what building the compiled extensions takes (${buildPackages.join(' ')})`;
  if (djangoPackages.length > 0) provenance['aptPackages'] += ` + Django and pytest-django, which run a Django runner's suite under pytest`;
  const packages = override.aptPackages ?? aptPackages;
  const requiredVersions = (declared?.minimums ?? []).filter((minimum) => packages.includes(minimum.package));
  // The packages the tests run with: their plugins' options in the project's addopts or runner are given.
  const withPlugins = new Set(packages);

  const testArgs: string[] = [];
  if (settings && settings.addopts.length && !override.testArgs) {
    const isProjectModule = (name: string): boolean => moduleFile(tree.files, importRoots, name) !== undefined;
    const { kept, dropped, ini } = filterAddopts(settings.addopts, isProjectModule, withPlugins);
    if (dropped.length) {
      testArgs.push('-o', `addopts=${joinShellWords(kept)}`, ...ini.flatMap((value) => ['-o', value]));
      provenance['testArgs.addopts'] = `addopts from ${settings.source} without the options envgen's runs leave out (plugins', stopping at a failure): ${dropped.join(' ')}${ini.length > 0 ? ` (given as ${ini.map((value) => `-o ${value}`).join(' ')}, which only warns without the plugin)` : ''}`;
    }
  }
  if (settings && turnsWarningsIntoErrors(settings) && !override.testArgs) {
    // A config key this machine's pytest or plugins do not know (a newer plugin's) only warns
    // at start-up, but a filter that turns warnings into errors makes that warning stop every
    // session before a test runs (INTERNALERROR). Start-up config warnings alone are ignored,
    // as --strict-config is dropped; no warning a test raises is affected.
    testArgs.push('-W', 'ignore::pytest.PytestConfigWarning');
    provenance['testArgs.W'] = `${settings.source} turns warnings into errors: pytest's start-up config warnings (unknown keys of plugins the machine has older or lacks) are ignored`;
  }
  // How the project's runner leaves its benchmarks out of a test run (pint's CI: `pytest
  // $TEST_OPTS`, TEST_OPTS holding `--benchmark-skip`), where their plugin is among the
  // packages and the config's addopts choose no such option themselves.
  const fromRunner = (tree.runnerOptions?.options ?? []).filter((option) => withPlugins.has(selectingOptionPlugin(option) ?? ''));
  if (fromRunner.length > 0 && !override.testArgs && !(settings?.addopts ?? []).some((word) => selectingOptionPlugin(word) !== undefined)) {
    testArgs.push(...fromRunner);
    const from = tree.runnerOptions?.from ?? [];
    provenance['testArgs.runner'] = `${fromRunner.join(' ')}, as the project's runner gives pytest (${from.slice(0, 2).join('; ')}${from.length > 2 ? '; ...' : ''})`;
  }
  const cleanEntry = (entry: string): string => entry.replace(/^\.\//, '').replace(/\/$/, '');
  const existing = (entry: string): boolean => {
    const clean = cleanEntry(entry);
    return tree.files.some((file) => file === clean || file.startsWith(`${clean}/`) || clean === '.');
  };
  // A nested project's testpaths count when its own config holds them (relative to its directory).
  const ownSettings = project === undefined || (tree.pytestConfigFiles ?? []).every((file) => file.path.startsWith(`${project.dir}/`));
  const configured = (ownSettings ? (settings?.testpaths ?? []) : []).filter(existing);
  const doctests = settings?.addopts.some((word) => word === '--doctest-modules' || word.startsWith('--doctest-glob')) === true;
  // pytest collects only python_files from a directory: a suite file named otherwise
  // (tests/test.py) is named itself, as its users run it. Where a directory that is named too
  // holds it, pytest 7 would collect it twice (as an argument, and walking the directory,
  // which takes every path named): such files are matched by their path in python_files
  // instead (a pattern with a slash matches the end of a file's path), unless another file's
  // path ends the same way (pytest would collect that one too, and rewrite its asserts).
  // Where no pytest config chooses the tests, the paths the project's own runner gives pytest
  // (its CI's `cd tests/ && py.test`) are its suite: test files beyond them (a fuzzing module
  // "run separately", benchmarks) are not.
  const runner = project === undefined && configured.length === 0 && !doctests ? tree.runnerTestPaths : undefined;
  const within = (file: string, path: string): boolean => file === path || file.startsWith(`${path}/`);
  const runnerModules = runner === undefined ? [] : modules.filter((file) => runner.paths.some((path) => within(file, path)));
  const suite = runnerModules.length > 0 ? runnerModules : modules;
  const entryOf = (file: string): string => (runnerModules.length > 0 ? (runner?.paths.find((path) => within(file, path)) ?? file) : topLevelEntry(file));
  const extras = suite.filter((file) => !matchesAnyGlob(file, patterns));
  const walked = new Set(suite.filter((file) => matchesAnyGlob(file, patterns)).map(entryOf));
  const byPath = extras.filter((file) => file.includes('/') && walked.has(entryOf(file)) && entryOf(file) !== file && !pythonFiles.some((other) => other.endsWith(`/${file}`)) && !/[*?[\]\s]/.test(file));
  const namedFiles = byPath.length === 0 ? [] : ['-o', `python_files=${[...patterns, ...byPath].join(' ')}`];
  const entries = [...new Set(suite.map((file) => inRepo(matchesAnyGlob(file, patterns) || byPath.includes(file) ? entryOf(file) : file)))].sort();
  if (project !== undefined) {
    // pytest finds the project's config above the paths it is given, and without one stops
    // looking for conftest.py files at the project's directory, as in a run from there.
    if (settings === null) testArgs.push('--confcutdir', project.dir);
    // Run from the repo root, pytest is given the project's test paths.
    testArgs.push(...(configured.length ? configured.map((entry) => inRepo(cleanEntry(entry))) : doctests ? [project.dir] : [...namedFiles, ...entries]));
    provenance['testArgs'] = configured.length ? `testpaths from ${settings?.source ?? ''}, in the project's directory` : `the project's entries holding test files`;
  } else if (configured.length) {
    // pytest applies testpaths itself (globbed, missing entries ignored) when given no paths,
    // the way a user runs it; naming them would also change how it finds rootdir and conftests.
    provenance['testArgs'] = `none: pytest applies testpaths from ${settings?.source ?? ''} itself`;
  } else if (doctests) {
    // Doctests live in source files and docs: only pytest's own discovery from the root finds them all.
    provenance['testArgs'] = `none: addopts in ${settings?.source ?? ''} enable doctests, so pytest discovers from the repo root`;
  } else {
    testArgs.push(...namedFiles, ...entries);
    const named = unittestModules.length > 0 ? ` + the unittest modules python_files leaves out (${unittestModules.length}: ${unittestModules.slice(0, 3).map(inRepo).join(', ')}${unittestModules.length > 3 ? ', ...' : ''})` : '';
    const chosen = runnerModules.length > 0 && runner !== undefined ? `the test paths the project's runner names (${runner.from.slice(0, 2).join('; ')}${runner.from.length > 2 ? '; ...' : ''})` : 'top-level entries holding test files';
    provenance['testArgs'] = settings?.testpaths?.length ? `${chosen} (testpaths ${settings.testpaths.join(' ')} from ${settings.source} not found)${named}` : `${chosen}${named}`;
    const scripts = (tree.scripts ?? []).map(inRepo);
    if (scripts.length > 0) provenance['testArgs'] += `; not named: ${scripts.join(', ')} (no test defined: a script, which pytest's python_files leaves out too)`;
    if (byPath.length > 0) provenance['testArgs'] += `; files named otherwise in a directory named too, matched by their path in python_files so pytest collects each once (${byPath.slice(0, 3).map(inRepo).join(', ')}${byPath.length > 3 ? ', ...' : ''})`;
  }

  if (settings?.requiresPytest && !override.testArgs) provenance['requiresPytest'] = `${settings.source} is a native TOML config, which pytest reads from ${settings.requiresPytest} on (or its minversion)`;

  // A Django app run by Django's own runner: pytest-django runs its TestCases with the
  // settings module its runner names, which pytest alone never configures.
  const django = tree.djangoSettings;
  if (django !== undefined) {
    env['DJANGO_SETTINGS_MODULE'] = django.module;
    provenance['env.DJANGO_SETTINGS_MODULE'] = `a Django app whose tests Django's runner runs with the settings ${inRepo(django.from)} names: pytest-django runs them with the same`;
  }
  const packaging = tree.packaging && tree.packaging.versionFile !== null ? { ...tree.packaging, versionFile: { ...tree.packaging.versionFile, path: inRepo(tree.packaging.versionFile.path) } } : tree.packaging;
  const metadataDir = importRoots[0] === undefined ? inRepo('') : inRepo(importRoots[0]);
  const metadataPrefix = metadataDir === '' ? '' : `${metadataDir}/`;
  const install = [
    ...(extensions.length > 0 ? [buildExtensionsStep(python, extensions, generated, project?.dir ?? '')] : []),
    ...(renamed.length > 0 ? [renamedPackagesStep(renamed, project === undefined ? '' : `${project.dir}/`)] : []),
    ...(packaging ? [installedMetadataStep(packaging, metadataPrefix, { python, importPaths: [...new Set([metadataDir, ...searchPath])] })] : []),
  ];
  const scripts = packaging ? scriptsDir(packaging, metadataPrefix) : null;
  if (scripts !== null) {
    env['ENVGEN_SCRIPTS'] = scripts;
    provenance['env.ENVGEN_SCRIPTS'] = `the console scripts the tests run (${packaging?.scriptsRun.join(', ') ?? ''}), made by the install step, first on PATH as in an environment it is installed in`;
  }
  const installFrom = [
    ...(extensions.length > 0 ? [`compiled extensions of setup.py built in place (${extensions.length} C/C++/Cython source(s)${generated.length > 0 ? `; Cython makes ${generated.map(({ output }) => inRepo(output)).join(', ')}, which setup.py names and the checkout lacks` : ''})`] : []),
    ...(tree.packaging ? [`installed metadata beside the package, version from ${tree.packaging.versionFrom}`] : []),
    ...(renamed.length > 0 ? [`stand-ins in ${inRepo(RENAMED_PACKAGES_DIR)} of ${renamed.map((entry) => entry.name).join(', ')}, as an editable install maps each name to its directory`] : []),
  ];
  if (installFrom.length > 0) provenance['install'] = installFrom.join('; ');
  provenance['python'] = 'default';
  provenance['timeoutMs'] = 'default';
  provenance['testTimeoutMs'] = 'default';

  const profile: Profile = {
    python,
    env: { ...env, ...override.env },
    aptPackages: packages,
    install: override.install ?? install,
    testArgs: override.testArgs ?? testArgs,
    testGlobs,
    sourceFiles: sourceFiles.map(inRepo),
    testFiles: testFiles.map(inRepo),
    deselect: override.deselect ?? [],
    timeoutMs: override.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    testTimeoutMs: override.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS,
    provenance,
    // testArgs of the user's own may give the native config's settings as `-o` overrides.
    ...(settings?.requiresPytest && !override.testArgs ? { requiresPytest: { version: settings.requiresPytest, from: settings.source } } : {}),
    ...(requiredVersions.length > 0 ? { requiredVersions } : {}),
    ...(declared !== null && declared.unpackaged.length > 0 ? { unpackaged: declared.unpackaged } : {}),
  };
  Object.assign(provenance, overrideFrom);
  return profile;
}

async function listFiles(root: string, skipped: ReadonlySet<string>, rel = ''): Promise<string[]> {
  const files: string[] = [];
  const entries = await readdir(join(root, rel), { withFileTypes: true });
  for (const entry of entries) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      const isPackage = (dir: string): boolean => existsSync(join(root, dir, '__init__.py'));
      if (!isSkippedDir(path, isPackage) && !skipped.has(path)) files.push(...(await listFiles(root, skipped, path)));
    } else if (entry.isFile()) {
      files.push(path);
    }
  }
  return files;
}

/** What two places declare, together. */
function mergeDeclared(a: DeclaredDependencies | null, b: DeclaredDependencies | null): DeclaredDependencies | null {
  if (a === null || b === null) return a ?? b;
  const packages = [...new Set([...a.packages, ...b.packages])].sort();
  const minimums = highestMinimums([...(a.minimums ?? []), ...(b.minimums ?? [])]);
  return { packages, unpackaged: [...new Set([...a.unpackaged, ...b.unpackaged])].sort(), sources: [...a.sources, ...b.sources], ...(minimums.length > 0 ? { minimums } : {}) };
}

/**
 * Detects how to run the tests of the checkout at `worktreePath` (see {@link deriveProfile} for
 * the rules), then applies `options.overrides`. Provenance records where each setting came from.
 *
 * @throws EnvgenError `no-python-tests` when the tree has no Python test module.
 */
export async function detectProfile(worktreePath: string, options: DetectProfileOptions = {}): Promise<Profile> {
  const submodules = options.submodules ?? [];
  const files = await listFiles(worktreePath, new Set(submodules.map((submodule) => submodule.path)));
  const readConfigs = async (dir: string): Promise<ConfigFile[]> => {
    const configs: ConfigFile[] = [];
    for (const name of CONFIG_FILE_NAMES) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const info = await lstat(join(worktreePath, path)).catch(() => null);
      if (info?.isFile()) configs.push({ path, text: await readFile(join(worktreePath, path), 'utf8') });
    }
    return configs;
  };
  const rootConfigs = await readConfigs('');
  const nested = nestedProjectDirs(files);
  const chosen = [...(options.overrides ?? [])].reverse().find((override) => override.values.project !== undefined);
  const choice = chooseProject(files, readPytestSettings(rootConfigs) !== null, chosen === undefined ? undefined : { dir: chosen.values.project ?? '.', source: chosen.source });
  const prefix = choice.dir === '' ? '' : `${choice.dir}/`;
  const root = join(worktreePath, choice.dir);
  const projectFiles = files.filter((file) => file.startsWith(prefix)).map((file) => file.slice(prefix.length));
  const projectConfigs = choice.dir === '' ? rootConfigs : await readConfigs(choice.dir);
  const configFiles = projectConfigs.map((file) => ({ ...file, path: file.path.slice(prefix.length) }));
  // pytest reads the first config file it finds from the project's directory up to the root.
  let pytestConfigFiles: ConfigFile[] | undefined;
  if (choice.dir !== '') {
    const ancestors = [...choice.dir.split('/').map((_, index, parts) => parts.slice(0, parts.length - index).join('/')), ''];
    for (const dir of ancestors) {
      const configs = dir === choice.dir ? projectConfigs : dir === '' ? rootConfigs : await readConfigs(dir);
      if (readPytestSettings(configs) !== null) {
        pytestConfigFiles = configs;
        break;
      }
    }
  }
  // A packaging script's own metadata reads (ez_setup.py's pkg_resources) are the build's, not the tests'.
  const pythonFiles = projectFiles.filter((file) => file.endsWith('.py') && !TOOLING_FILES.has(file));
  const pytestSettings = readPytestSettings(pytestConfigFiles ?? configFiles);
  const libraryEntries = await findLibraryEntries(root, pythonFiles, pytestSettings);
  const testGlobs = testGlobsOf(pytestSettings, collectOverrides(options.overrides ?? []).values, libraryEntries);
  const testFiles = pythonFiles.filter((file) => matchesAnyGlob(file, testGlobs));
  const packaging = await readPackaging(root, projectFiles, pythonFiles, testFiles);
  // Single-file suites python_files leaves out, named to pytest only where they define tests.
  const patterns = pytestSettings?.pythonFiles ?? DEFAULT_PYTHON_FILES;
  const scripts: string[] = [];
  for (const file of testFiles.filter((path) => ['test.py', 'tests.py'].includes(basenameOf(path)) && !matchesAnyGlob(path, patterns))) {
    const text = await readFile(join(root, file), 'utf8').catch(() => null);
    if (text !== null && !DEFINES_TESTS.test(text)) scripts.push(file);
  }
  // A unittest suite's modules pytest's python_files leaves out: only where the config sets none.
  const collected = (file: string): boolean => matchesAnyGlob(file, [...DEFAULT_PYTHON_FILES, 'tests.py', 'test.py']);
  let unittestModules: string[] = [];
  if (pytestSettings?.pythonFiles === undefined && testFiles.some((file) => !collected(file))) {
    const sources = new Map<string, string>();
    for (const file of testFiles) sources.set(file, await readFile(join(root, file), 'utf8').catch(() => ''));
    unittestModules = findUnittestModules(sources, collected);
  }
  // How the developers run their suite: the test paths their CI names, the settings module a Django app's runner names.
  const runnerTexts = new Map<string, string>();
  for (const file of projectFiles.filter((path) => mayNameDjangoSettings(path) || mayNameTestPaths(path))) runnerTexts.set(file, await readFile(join(root, file), 'utf8').catch(() => ''));
  const readBy = (picks: (file: string) => boolean): Map<string, string> => new Map([...runnerTexts].filter(([file]) => picks(file)));
  const { testPaths: runnerTestPaths, options: runnerOptions } = readRunner(readBy(mayNameTestPaths), projectFiles);
  let djangoSettings: TreeListing['djangoSettings'];
  for (const named of findDjangoSettings(readBy(mayNameDjangoSettings), configFiles.map((file) => file.text), projectFiles, ['src'])) {
    if (isDjangoSettings(await readFile(join(root, named.file), 'utf8').catch(() => ''))) {
      djangoSettings = { module: named.module, from: named.from };
      break;
    }
  }
  let declared: TreeListing['declared'] = null;
  if (!options.aptPackages?.length) {
    const debianMap = await readDebianMap();
    // The repo's other projects are on the tests' path (workspaceRoots below), not Debian's to give.
    const siblings = await Promise.all([...nested, ''].filter((dir) => dir !== choice.dir).map((dir) => readDistributionName(join(worktreePath, dir))));
    const provided = siblings.filter((name): name is string => name !== null);
    const environment = await readMarkerEnvironment(collectOverrides(options.overrides ?? []).values.python ?? DEFAULT_PYTHON);
    declared = await readDeclaredDependencies(root, projectFiles, debianMap, provided, environment);
    if (choice.dir !== '') {
      // A monorepo's root declares what every project's tests need (dev requirements, tox deps).
      const fromRoot = await readDeclaredDependencies(worktreePath, files.filter((file) => !nested.some((dir) => file.startsWith(`${dir}/`))), debianMap, provided, environment);
      declared = mergeDeclared(declared === null ? null : { ...declared, sources: declared.sources.map((source) => `${choice.dir}/${source}`) }, fromRoot);
    }
    if (declared !== null && debianMap.size === 0) declared = 'unmapped';
  }
  const setupScript = projectFiles.includes('setup.py') ? await readFile(join(root, 'setup.py'), 'utf8').catch(() => null) : null;
  const workspaceRoots = nested
    .filter((dir) => dir !== choice.dir)
    .map((dir) => importRootOf(files, dir))
    .sort();
  const tree: TreeListing = {
    files: projectFiles,
    configFiles,
    packaging,
    declared,
    setupScript,
    ...(workspaceRoots.length > 0 ? { workspaceRoots } : {}),
    ...(unittestModules.length > 0 ? { unittestModules } : {}),
    ...(djangoSettings === undefined ? {} : { djangoSettings }),
    ...(runnerTestPaths === null ? {} : { runnerTestPaths }),
    ...(runnerOptions === null ? {} : { runnerOptions }),
    ...(Object.keys(libraryEntries).length > 0 ? { libraryEntries } : {}),
    ...(scripts.length > 0 ? { scripts } : {}),
  };
  if (choice.dir !== '') {
    if (pytestConfigFiles !== undefined) tree.pytestConfigFiles = pytestConfigFiles;
    tree.project = { dir: choice.dir, why: choice.why };
  }
  const profile = deriveProfile(tree, options);
  return submodules.length > 0 ? { ...profile, submodules: submodules.map(({ path, commit }) => ({ path, commit })) } : profile;
}

/**
 * A stable hash of the settings that can change test results (interpreter, env, packages,
 * install steps, test arguments, deselected tests, timeout, the submodules checked out); file
 * lists and provenance excluded.
 */
export function profileHash(profile: Profile): string {
  const { python, env, aptPackages, install, testArgs, deselect, timeoutMs, testTimeoutMs, submodules = [] } = profile;
  // Submodules only where there are some: the hashes of every other profile stay as they were.
  const tree = submodules.length > 0 ? { submodules: submodules.map(({ path, commit }) => `${path}@${commit}`).sort() } : {};
  return hashValue({ python, env, aptPackages: [...aptPackages].sort(), install, testArgs, deselect: [...deselect].sort(), timeoutMs, testTimeoutMs, ...tree });
}
