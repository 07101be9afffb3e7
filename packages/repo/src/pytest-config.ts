import { parse as parseToml } from 'smol-toml';
import { parseIni, splitShellWords } from './ini.js';

/** The pytest settings envgen cares about, from the one config file pytest itself would use. */
export interface PytestSettings {
  /** Where they came from, e.g. `pyproject.toml [tool.pytest.ini_options]`. */
  source: string;
  testpaths: string[] | null;
  pythonFiles: string[] | null;
  /** Whether `python_functions` or `python_classes` is set: tests named otherwise than `test*` and `Test*`. */
  ownTestNames: boolean;
  addopts: string[];
  pythonpath: string[] | null;
  /** The `filterwarnings` lines (pytest reads an ini value line by line). */
  filterwarnings: string[];
  /**
   * The oldest pytest that reads this config as the project means it, where pytest itself
   * would not say so: a native TOML config (`pytest.toml`, `[tool.pytest]`), which pytest
   * before 9.0 ignores without a word, needs 9.0 or its `minversion`, if newer. Null for an
   * ini-style config, whose `minversion` pytest checks itself.
   */
  requiresPytest: string | null;
}

/** The first pytest that reads native TOML configs (`pytest.toml`, `[tool.pytest]`). */
export const NATIVE_TOML_PYTEST = '9.0';

/** A config file's repo-relative path and text. */
export interface ConfigFile {
  path: string;
  text: string;
}

function wordsOf(value: unknown): string[] | null {
  if (typeof value === 'string') return splitShellWords(value);
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return null;
}

function linesOf(value: unknown): string[] {
  const lines = typeof value === 'string' ? value.split('\n') : Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  return lines.map((line) => line.trim()).filter((line) => line !== '');
}

function settingsFromValues(source: string, get: (key: string) => unknown, native = false): PytestSettings {
  const minversion = get('minversion');
  return {
    source,
    testpaths: wordsOf(get('testpaths')),
    pythonFiles: wordsOf(get('python_files')),
    ownTestNames: get('python_functions') !== undefined || get('python_classes') !== undefined,
    addopts: wordsOf(get('addopts')) ?? [],
    pythonpath: wordsOf(get('pythonpath')),
    filterwarnings: linesOf(get('filterwarnings')),
    requiresPytest: native ? newerVersion(NATIVE_TOML_PYTEST, typeof minversion === 'string' || typeof minversion === 'number' ? String(minversion) : null) : null,
  };
}

/** The release numbers of a version (`9.0.0rc1` → [9, 0, 0]). */
function releaseOf(version: string): number[] {
  return version.split('.').map((part) => Number(/^\d+/.exec(part)?.[0] ?? 0));
}

/** Whether `version` is older than `wanted`, by their release numbers. */
export function olderVersion(version: string, wanted: string): boolean {
  const [a, b] = [releaseOf(version), releaseOf(wanted)];
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const [x, y] = [a[index] ?? 0, b[index] ?? 0];
    if (x !== y) return x < y;
  }
  return false;
}

function newerVersion(base: string, other: string | null): string {
  return other !== null && olderVersion(base, other) ? other : base;
}

function parseTomlFile(file: ConfigFile): Record<string, unknown> | null {
  try {
    return parseToml(file.text) as Record<string, unknown>;
  } catch {
    // pytest fails on such a file too; the test run reports it with pytest's own message.
    return null;
  }
}

function asTable(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** `pytest.toml` / `.pytest.toml`: its `[pytest]` table, used even when the file holds none. */
function fromPytestToml(file: ConfigFile): PytestSettings | null {
  const data = parseTomlFile(file);
  if (data === null) return null;
  const table = asTable(data['pytest']) ?? {};
  return settingsFromValues(`${file.path} [pytest]`, (key) => table[key], true);
}

function fromIni(file: ConfigFile, section: string, required: boolean): PytestSettings | null {
  const values = parseIni(file.text).get(section);
  if (values === undefined && required) return null;
  return settingsFromValues(`${file.path} [${section}]`, (key) => values?.get(key));
}

function fromPyproject(file: ConfigFile): PytestSettings | null {
  const data = parseTomlFile(file);
  if (data === null) return null;
  const pytest = asTable(asTable(data['tool'])?.['pytest']);
  if (pytest === null) return null;
  // pytest 9's native table: `[tool.pytest]` keys of its own (beside them, ini_options is a usage error).
  if (Object.keys(pytest).some((key) => key !== 'ini_options')) return settingsFromValues(`${file.path} [tool.pytest]`, (key) => pytest[key], true);
  const table = asTable(pytest['ini_options']);
  return table === null ? null : settingsFromValues(`${file.path} [tool.pytest.ini_options]`, (key) => table[key]);
}

/**
 * The pytest settings of a directory's config `files` (all in that directory), choosing the
 * file the way pytest 9 does: `pytest.toml` or `.pytest.toml` (always), `pytest.ini` or
 * `.pytest.ini` (always, even without a `[pytest]` section), then `pyproject.toml` with
 * `[tool.pytest]` (native TOML) or `[tool.pytest.ini_options]`, `tox.ini` with `[pytest]`,
 * `setup.cfg` with `[tool:pytest]`. Null when none applies. A native TOML config says which
 * pytest it needs ({@link PytestSettings.requiresPytest}): older ones skip it.
 */
export function readPytestSettings(files: ConfigFile[]): PytestSettings | null {
  const byName = new Map(files.map((file) => [file.path.slice(file.path.lastIndexOf('/') + 1), file]));
  const readers: Array<[string, (file: ConfigFile) => PytestSettings | null]> = [
    ['pytest.toml', fromPytestToml],
    ['.pytest.toml', fromPytestToml],
    ['pytest.ini', (file) => fromIni(file, 'pytest', false)],
    ['.pytest.ini', (file) => fromIni(file, 'pytest', false)],
    ['pyproject.toml', fromPyproject],
    ['tox.ini', (file) => fromIni(file, 'pytest', true)],
    ['setup.cfg', (file) => fromIni(file, 'tool:pytest', true)],
  ];
  for (const [name, read] of readers) {
    const file = byName.get(name);
    const settings = file ? read(file) : null;
    if (settings) return settings;
  }
  return null;
}

// Options that need a plugin which may not be installed in the sandbox, or that write reports
// nobody reads. The value says whether the option takes the next word as its value, or
// (`optional`) takes it where it is not an option, as argparse does for pytest-cov's `--cov
// [SOURCE]` (portalocker's `--cov portalocker`).
const PLUGIN_OPTIONS: Array<[RegExp, boolean | 'optional']> = [
  [/^--cov(-report|-config|-fail-under|-context)$/, true],
  [/^--cov$/, 'optional'],
  [/^--(no-)?cov(=|-|$)/, false],
  [/^(-n|--numprocesses|--dist|--maxprocesses|--max-worker-restart|--reruns|--reruns-delay|--only-rerun|--timeout|--timeout-method)$/, true],
  [/^-n\S+|^--(numprocesses|dist|maxprocesses|reruns|reruns-delay|only-rerun|timeout|timeout-method)=/, false],
  [/^--(benchmark|mypy|flake8|pylint|black|isort|pycodestyle|html|self-contained-html|instafail|sugar)/, false],
  // A config key of a plugin the machine lacks or has older (asyncio_default_fixture_loop_scope
  // under Debian's pytest-asyncio) makes it a usage error; without it pytest only warns, and no test changes.
  [/^--strict-config$/, false],
  // Options of pytest's cache plugin, which envgen's runs and test_script.sh turn off (`-p
  // no:cacheprovider`), so they are usage errors there (PyCQA/pydocstyle's `--cache-clear`).
  // Those whose run of a fresh checkout, with no cache yet, is the same without them.
  [/^--(cache-clear|lf|last-failed|ff|failed-first)$/, false],
  [/^--(lfnf|last-failed-no-failures)$/, true],
  [/^--(lfnf|last-failed-no-failures)=/, false],
  // Options that stop a run at its first (or Nth) failure (pyeve/cerberus' `--maxfail=2`): a
  // clean run has none, but a bug's run would leave the tests after the stop unrun, and a
  // verdict or the bundle's script would count them as broken. envgen's runs and
  // test_script.sh run every test, as the FAIL_TO_PASS and PASS_TO_PASS a trainer scores need.
  // (The stepwise plugin's also need the cache plugin, which both turn off.) `--pdb` stops
  // there too: the debugger reads the end of the run's empty input and quits the session.
  [/^(-x|--exitfirst|--sw|--stepwise|--sw-skip|--stepwise-skip|--pdb)$/, false],
  [/^--maxfail$/, true],
  [/^--maxfail=/, false],
];

/** pytest's short options that take no value, which a cluster (`-vx`) may join: `-x` among them stops a run. */
const SHORT_FLAGS = new Set(['v', 'q', 's', 'l', 'x']);

/**
 * A cluster of short flags without `-x` (`-vx` → `-v`), or null where the word is no such
 * cluster or holds no `x` (`-rxs` is `-r xs`: `-r` takes the rest as its value).
 */
function withoutExitFirst(word: string): string | null {
  if (!/^-[A-Za-z]{2,}$/.test(word)) return null;
  // The flags run up to the first letter that takes a value: the rest of the word is its value.
  let end = 1;
  while (end < word.length && SHORT_FLAGS.has(word[end] as string)) end += 1;
  const flags = word.slice(1, end);
  if (!flags.includes('x')) return null;
  const rest = flags.replace(/x/g, '') + word.slice(end);
  return rest === '' ? '' : `-${rest}`;
}

/**
 * Plugin options that choose what a run of the tests runs, by the Debian package of their
 * plugin: given where that package is among those the tests run with. pytest-benchmark's
 * `--benchmark-skip` (no benchmark runs) and `--benchmark-disable` (each runs once, untimed),
 * without which every benchmark runs its code for rounds timed to last a second or more.
 */
const SELECTING_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['--benchmark-skip', 'python3-pytest-benchmark'],
  ['--benchmark-disable', 'python3-pytest-benchmark'],
]);

/** The Debian package of the plugin that reads a test-selecting option (see {@link SELECTING_OPTIONS}), if it is one. */
export function selectingOptionPlugin(option: string): string | undefined {
  return SELECTING_OPTIONS.get(option);
}

/**
 * Options of plugins that also read an ini key: a usage error without the plugin, while the
 * key given as `-o key=value` on the command line only warns then, and does the same with it.
 */
const PLUGIN_INI_OPTIONS: ReadonlyMap<string, string> = new Map([['--asyncio-mode', 'asyncio_mode']]);

/** pytest's own plugins, which `-p NAME` can always load. */
const BUILTIN_PLUGINS: ReadonlySet<string> = new Set([
  'pytester', 'doctest', 'faulthandler', 'junitxml', 'warnings', 'logging', 'capture', 'tmpdir', 'monkeypatch',
  'recwarn', 'legacypath', 'python_path', 'unraisableexception', 'threadexception', 'stepwise', 'setuponly',
  'setupplan', 'skipping', 'nose', 'pastebin', 'unittest', 'debugging', 'helpconfig', 'terminal', 'cacheprovider',
  'fixtures', 'main', 'python', 'runner', 'mark', 'assertion', 'reports', 'freeze_support',
]);

/**
 * Splits `addopts` into what is kept and what is dropped: plugin options (coverage, xdist,
 * reruns, timeouts, linters, HTML reports), options that stop a run at a failure (`-x`,
 * `--maxfail`), and `-p <plugin>` loads of third-party plugins,
 * which fail or slow runs when the plugin is absent; options a plugin also reads as an ini key
 * (`--asyncio-mode=auto`) come back as that key's value (`ini`: `asyncio_mode=auto`) for `-o`. `-p no:<plugin>`, pytest's own plugins
 * and plugins that are modules of the project (`isProjectModule`, e.g. `tests.plugin`) are
 * kept: the suite needs them to run as it does under plain pytest, and so are the options that
 * choose what runs (`--benchmark-skip`) where their plugin's Debian package is in `plugins`.
 */
export function filterAddopts(addopts: string[], isProjectModule: (name: string) => boolean = () => false, plugins: ReadonlySet<string> = new Set()): { kept: string[]; dropped: string[]; ini: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  const ini: string[] = [];
  const loadable = (name: string): boolean => name.startsWith('no:') || BUILTIN_PLUGINS.has(name) || isProjectModule(name);
  for (let i = 0; i < addopts.length; i += 1) {
    const word = addopts[i] ?? '';
    const plugin = word === '-p' ? (addopts[i + 1] ?? '') : /^-p\S/.test(word) ? word.slice(2) : null;
    if (plugin !== null) {
      const words = word === '-p' ? [word, plugin] : [word];
      (loadable(plugin) ? kept : dropped).push(...words);
      i += words.length - 1;
      continue;
    }
    const [name = '', joined] = word.split(/=(.*)/s);
    const key = PLUGIN_INI_OPTIONS.get(name);
    if (key !== undefined) {
      const value = joined ?? addopts[(i += 1)] ?? '';
      dropped.push(`${name}=${value}`);
      ini.push(`${key}=${value}`);
      continue;
    }
    const cluster = withoutExitFirst(word);
    if (cluster !== null) {
      if (cluster !== '') kept.push(cluster);
      dropped.push('-x');
      continue;
    }
    const match = plugins.has(SELECTING_OPTIONS.get(word) ?? '') ? undefined : PLUGIN_OPTIONS.find(([pattern]) => pattern.test(word));
    if (match === undefined) {
      kept.push(word);
      continue;
    }
    dropped.push(word);
    const next = addopts[i + 1];
    if (next !== undefined && (match[1] === true || (match[1] === 'optional' && !next.startsWith('-')))) dropped.push(addopts[(i += 1)] ?? '');
  }
  return { kept, dropped, ini };
}

/**
 * The settings turn warnings into errors: a `filterwarnings` line or a `-W` of addopts whose
 * action is `error` (`error`, `error::DeprecationWarning`, `-Werror`).
 */
export function turnsWarningsIntoErrors(settings: Pick<PytestSettings, 'filterwarnings' | 'addopts'>): boolean {
  const isError = (filter: string): boolean => filter.split(':')[0]?.trim() === 'error';
  const fromAddopts = settings.addopts.flatMap((word, index) => {
    if (word === '-W' || word === '--pythonwarnings') return [settings.addopts[index + 1] ?? ''];
    // pytest reads `-W=error` as `-W error`.
    const joined = /^(?:-W=?|--pythonwarnings=)(.+)$/.exec(word);
    return joined === null ? [] : [joined[1] ?? ''];
  });
  return [...settings.filterwarnings, ...fromAddopts].some(isError);
}

/** One word as a POSIX shell (and `shlex`) reads it back: bare when it is plainly safe, else single-quoted. */
export function quoteShellWord(word: string): string {
  return /^[A-Za-z0-9_./:=,+@%-]+$/.test(word) ? word : `'${word.replace(/'/g, `'"'"'`)}'`;
}

/** Quotes words for pytest's `addopts` (which it splits with `shlex`). */
export function joinShellWords(words: string[]): string {
  return words.map(quoteShellWord).join(' ');
}
