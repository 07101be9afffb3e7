import { posix } from 'node:path';
import { globToRegExp } from './glob.js';
import { parseIni, splitShellWords } from './ini.js';

/** Files where a project's developers say how they run their tests: CI workflows, tox, a Makefile, stestr's config. */
const RUNNER_FILE = /^(?:\.github\/workflows\/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.travis\.yml|azure-pipelines\.yml|tox\.ini|Makefile|\.stestr\.conf)$/;

/** unittest discover's options that take a value (`-s tests`, `--pattern=*_test.py`). */
const DISCOVER_VALUE_OPTIONS = new Set(['-s', '--start-directory', '-p', '--pattern', '-t', '--top-level-directory', '-k']);

/** Tools that run the command after their own words (`uv run pytest tests`). */
const RUN_WRAPPERS = new Set(['uv', 'poetry', 'pdm', 'hatch', 'pipenv', 'rye']);

/**
 * pytest's options (and its common plugins') whose value is the next word: that word is no
 * test path (`--cov jmespath`, `-k "not slow"`). pytest-cov's `--cov` takes one when the next
 * word is no option, as argparse reads its optional value.
 */
const VALUE_OPTIONS = new Set([
  '-k', '-m', '-p', '-c', '-o', '-W', '-r', '-n', '--numprocesses', '--maxprocesses', '--dist', '--tx',
  '--cov', '--cov-report', '--cov-config', '--cov-fail-under', '--cov-context',
  '--junitxml', '--junit-xml', '--junit-prefix', '--rootdir', '--confcutdir', '--basetemp', '--ignore', '--ignore-glob', '--deselect',
  '--durations', '--durations-min', '--maxfail', '--tb', '--import-mode', '--log-level', '--log-file', '--log-cli-level', '--log-format',
  '--capture', '--color', '--timeout', '--timeout-method', '--reruns', '--reruns-delay', '--html', '--hypothesis-seed', '--hypothesis-profile',
  '--benchmark-json', '--benchmark-save', '--benchmark-compare', '--randomly-seed', '--random-order-seed', '--ds', '--dc', '--override-ini',
  '--config-file', '--report-log', '--pythonwarnings', '--asyncio-mode', '--doctest-glob', '--mypy-ini-file', '--count',
]);

/** The test paths a project's own runner names, and where. */
export interface RunnerTestPaths {
  /** Tree paths (files or directories, relative like the listing), sorted. */
  paths: string[];
  /** The commands that name them, as `file: command`. */
  from: string[];
}

/** Whether a path is one of the files {@link findRunnerTestPaths} reads. */
export function mayNameTestPaths(file: string): boolean {
  return RUNNER_FILE.test(file);
}

/** A runner file's lines, a line ending in `\` joined with the next. */
function logicalLines(text: string): string[] {
  return text.replace(/\\\r?\n\s*/g, ' ').split(/\r?\n/);
}

/** Modules that run unittest's discovery (`python -m unittest discover`, testtools' and subunit's runners). */
const DISCOVER_MODULES = new Set(['unittest', 'testtools.run', 'subunit.run']);

/** unittest's discovery: the words pytest would be given for its start directory, and the pattern of the module names it loads. */
interface Discovery {
  args: string[];
  pattern: string;
}

/**
 * What `python -m unittest discover` runs (testtools' and subunit's `… -m testtools.run
 * discover` too): the directory it starts from, as the one word pytest would be given for the
 * same tests (`discover -s tests -p 'test_*.py'` → `tests`, `discover tests` → `tests`,
 * `discover` alone → none: the current directory), and its pattern (`-p`, `test*.py` by
 * default); null when the command runs no discovery (`python -m unittest tests.test_a` names modules).
 */
function discoverArgs(words: readonly string[]): Discovery | null {
  const command = programWords(words);
  if (!PYTHON_PROGRAM.test(posix.basename(command[0] ?? ''))) return null;
  const at = command.findIndex((word, index) => DISCOVER_MODULES.has(word) && command[index - 1] === '-m' && command[index + 1] === 'discover');
  if (at < 0) return null;
  const rest = command.slice(at + 2);
  let start: string | undefined;
  let pattern = 'test*.py';
  for (let index = 0; index < rest.length; index += 1) {
    const word = rest[index] ?? '';
    const [option = '', value] = word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    if (option === '-s' || option === '--start-directory') start ??= value ?? rest[index + 1];
    else if (option === '-p' || option === '--pattern') pattern = value ?? rest[index + 1] ?? pattern;
    else if (!word.startsWith('-')) {
      // The first positional argument is the start directory, the second the pattern.
      if (start === undefined) start = word;
      else pattern = word;
      continue;
    }
    if (value === undefined && DISCOVER_VALUE_OPTIONS.has(option)) index += 1;
  }
  return { args: start === undefined ? [] : [start], pattern };
}

/** A Python that runs a module (`python -m …`, `{envpython}`, `$(PYTHON)`, `coverage run -m …`, `python3.11 -bb -m …`). */
const PYTHON_PROGRAM = /python[\d.]*$|^\{envpython\}$|^\$[{(]?\w*PYTHON\w*[})]?$|^coverage$/;

/** A shell command's words from its program on: without the variables set before it (`PYTHONPATH=.`) or a tool that runs it (`uv run`). */
function programWords(words: readonly string[]): readonly string[] {
  const command = words.findIndex((word) => !/^[A-Za-z_]\w*=/.test(word));
  if (command < 0) return [];
  const rest = words.slice(command);
  return RUN_WRAPPERS.has(rest[0] ?? '') && rest[1] === 'run' ? rest.slice(2) : rest;
}

/** The words after `pytest` of one shell command, or null when the command runs no pytest. */
function pytestArgs(words: readonly string[]): string[] | null {
  const rest = programWords(words);
  if (rest.length === 0) return null;
  const program = posix.basename(rest[0] ?? '');
  if (program === 'pytest' || program === 'py.test') return rest.slice(1);
  if (PYTHON_PROGRAM.test(program)) {
    const at = rest.findIndex((word, index) => word === 'pytest' && rest[index - 1] === '-m');
    return at < 0 ? null : rest.slice(at + 1);
  }
  return null;
}

/**
 * The paths among a pytest command's words, relative to `base` (where the command runs): null
 * when the command leaves pytest to find the tests itself (no path: the base directory, which
 * the caller counts as such) or its words cannot be read as paths (`--pyargs`, a shell
 * expansion, a path outside the tree).
 */
function namedPaths(args: readonly string[], base: string, exists: (path: string) => boolean): string[] | null {
  const paths: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index] ?? '';
    if (word === '--pyargs') return null;
    if (word.startsWith('-')) {
      if (!word.includes('=') && VALUE_OPTIONS.has(word) && !(word === '--cov' && (args[index + 1] ?? '-').startsWith('-'))) index += 1;
      continue;
    }
    if (/[$`{}*?]/.test(word)) return null;
    const path = posix.normalize(posix.join(base, word.split('::')[0] ?? '')).replace(/\/$/, '');
    if (path.startsWith('..')) return null;
    if (exists(path)) paths.push(path);
  }
  return paths.length === 0 ? [base] : paths;
}

/** One test command of a runner file, its variables expanded. */
interface RunnerCommand {
  /** The runner file. */
  file: string;
  /** The command as it reads once expanded. */
  command: string;
  /** Where it runs, relative like the tree's files (`.` for the root). */
  base: string;
  /** Its words after `pytest`; for another runner, the words pytest would be given for its tests. */
  args: string[];
  /** Whether pytest runs it (else unittest's discovery or stestr, whose options are no pytest's). */
  pytest: boolean;
  /** For unittest's discovery (stestr's too), the pattern of the module names it loads. */
  pattern?: string;
}

/** The most readings of one command whose variables have several values in its file. */
const MAX_READINGS = 8;

/**
 * The variables a runner file defines once or more, by name, with each value they get: a
 * workflow's `env:` keys (`TEST_OPTS: "-rfsxEX --benchmark-skip"`), a Makefile's `PYTEST_ARGS
 * := -x`, tox's `setenv` lines, a shell's `export NAME=value`; quotes around a value dropped.
 */
function fileVariables(lines: readonly string[]): Map<string, string[]> {
  const variables = new Map<string, string[]>();
  for (const line of lines) {
    // A YAML key, a Makefile's or tox's `NAME = value` (`:=`, `?=`), a shell's assignment of one word (not a command's prefix: `PYTHONPATH=. pytest`).
    const match = /^\s*(?:-\s+)?([A-Za-z_]\w*):\s+(.*?)\s*$/.exec(line) ?? /^\s*([A-Za-z_]\w*)(?:\s+=|\s*:=|\s*\?=)\s*(.*?)\s*$/.exec(line) ?? /^\s*(?:export\s+)?([A-Za-z_]\w*)=("[^"]*"|'[^']*'|[^\s"']*)\s*$/.exec(line);
    if (match === null) continue;
    const [, name = '', raw = ''] = match;
    const value = /^(["'])(.*)\1$/.exec(raw)?.[2] ?? raw;
    const values = variables.get(name) ?? [];
    if (!values.includes(value)) values.push(value);
    variables.set(name, values);
  }
  return variables;
}

/**
 * A command's readings with the file's variables put in (`$NAME`, `${NAME}`, `$(NAME)`,
 * `${{ env.NAME }}`), one per value where a variable has several (one job's `TEST_OPTS` and
 * another's); a variable the file does not define is left as written.
 */
function expandVariables(command: string, variables: ReadonlyMap<string, string[]>): string[] {
  const reference = /\$\{\{\s*env\.(\w+)\s*\}\}|\$\{(\w+)\}|\$\((\w+)\)|\$([A-Za-z_]\w*)/;
  const readings: string[] = [];
  const expand = (text: string, from: number): void => {
    if (readings.length >= MAX_READINGS) return;
    const rest = text.slice(from);
    const match = reference.exec(rest);
    const values = match === null ? undefined : variables.get(match[1] ?? match[2] ?? match[3] ?? match[4] ?? '');
    if (match === null) {
      readings.push(text);
      return;
    }
    const at = from + match.index;
    if (values === undefined) {
      expand(text, at + match[0].length);
      return;
    }
    for (const value of values) expand(`${text.slice(0, at)}${value}${text.slice(at + match[0].length)}`, at + value.length);
  };
  expand(command, 0);
  return readings;
}

/**
 * The test commands of the runner files (`texts`: path → text), sorted by file: a CI
 * workflow's `run:` lines, tox's `commands`, a Makefile's recipes, each in the directory a `cd`
 * before it changes into, that run pytest or unittest's discovery; and stestr's `test_path`
 * (OpenStack's projects and others whose tox runs `stestr run`, as unittest discovers them).
 */
function* testCommands(texts: ReadonlyMap<string, string>, exists: (path: string) => boolean): Generator<RunnerCommand> {
  for (const [file, text] of [...texts].sort(([a], [b]) => a.localeCompare(b))) {
    if (file === '.stestr.conf') {
      const path = parseIni(text).get('DEFAULT')?.get('test_path');
      if (path !== undefined) yield { file, command: `test_path=${path}`, base: '.', args: [path], pytest: false, pattern: 'test*.py' };
      continue;
    }
    const lines = logicalLines(text);
    const variables = fileVariables(lines);
    for (const line of lines) {
      if (/^\s*#/.test(line)) continue;
      // A YAML list item or `run:` key, tox's `commands =`, a Makefile recipe's tab.
      const body = line.replace(/^\s*(?:-\s+)?(?:(?:run|script|commands(?:_pre|_post)?)\s*[:=]\s*[|>]?[-+]?)?\s*/, '');
      for (const reading of expandVariables(body, variables)) {
        let base = '.';
        for (const command of reading.split(/&&|\|\||;|\|/)) {
          // tox: `{posargs:tests}` is `tests` when no arguments are given, `{posargs}` nothing; `{toxinidir}/tests` is `tests`.
          const words = splitShellWords(command.trim().replace(/\{posargs(?::([^}]*))?\}/g, '$1').replace(/\{toxinidir\}\/?/g, ''));
          if (words[0] === 'cd' && words.length === 2) {
            base = posix.normalize(posix.join(base, words[1] ?? '.')).replace(/\/$/, '');
            if (base.startsWith('..') || !exists(base)) break;
            continue;
          }
          const args = pytestArgs(words);
          if (args !== null) yield { file, command: command.trim(), base, args, pytest: true };
          const discovered = args === null ? discoverArgs(words) : null;
          if (discovered !== null) yield { file, command: command.trim(), base, args: discovered.args, pytest: false, pattern: discovered.pattern };
        }
      }
    }
  }
}

/** A predicate for the tree's paths (files and the directories holding them). */
function inTree(files: readonly string[]): (path: string) => boolean {
  return (path) => path === '.' || files.some((file) => file === path || file.startsWith(`${path}/`));
}

/**
 * The test paths the project's developers give their runner, where every test command of its
 * CI workflows, tox.ini and Makefile names some (`cd tests/ && py.test`, `pytest tests/unit`,
 * `{envpython} -m pytest {posargs:tests}`, `python -m unittest discover -s tests`, stestr's
 * `test_path=./tests`; pytest's alone where it has any): what they run, when the tree holds
 * test files beyond them (a fuzzing module "run separately", benchmarks, a library module
 * named like a test). Null when no command runs tests, or one runs them over the whole tree (no path from the root: pytest
 * finds the tests itself, as envgen does), or names what is not a path of the tree. `texts`
 * holds the files {@link mayNameTestPaths} picks (path → text); `files` every file of the tree.
 */
export function findRunnerTestPaths(texts: ReadonlyMap<string, string>, files: readonly string[]): RunnerTestPaths | null {
  return testPathsOf([...testCommands(texts, inTree(files))], files);
}

/**
 * The top-level entries of the tree that hold the modules unittest's discovery from the root
 * loads: those named by `pattern` in the root or in a package below it (each directory on the
 * way holding an `__init__.py`, as unittest's discovery enters no other).
 */
function discoveredEntries(files: readonly string[], pattern: string): string[] {
  const name = globToRegExp(pattern);
  const packages = new Set(files.filter((file) => file.endsWith('/__init__.py')).map((file) => file.slice(0, -'/__init__.py'.length)));
  const entries = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    if (!name.test(parts.at(-1) ?? '')) continue;
    if (parts.slice(0, -1).every((_, index) => packages.has(parts.slice(0, index + 1).join('/')))) entries.add(parts[0] ?? file);
  }
  return [...entries];
}

function testPathsOf(commands: readonly RunnerCommand[], files: readonly string[]): RunnerTestPaths | null {
  const exists = inTree(files);
  const paths = new Set<string>();
  const from: string[] = [];
  // pytest's own commands, where there are any, say what its developers run with it, with the
  // unittest discoveries beside them (requests-mock's tox: `pytest tests/pytest` and
  // `python -m testtools.run discover`, each a part of the suite); one of those over the whole
  // tree adds the entries holding the modules it loads, not every test file of the tree.
  const pytest = commands.filter((command) => command.pytest);
  for (const { file, command, base, args, pattern } of pytest.length > 0 ? commands.filter((each) => each.pytest || each.pattern !== undefined) : commands) {
    let named = namedPaths(args, base, exists);
    if (named !== null && named.includes('.') && pytest.length > 0 && pattern !== undefined) named = discoveredEntries(files, pattern);
    if (named === null || named.includes('.')) return null;
    for (const path of named) paths.add(path);
    from.push(`${file}: ${command}`);
  }
  // A path below another the commands name is collected with it.
  const outermost = [...paths].filter((path) => ![...paths].some((other) => path.startsWith(`${other}/`)));
  return outermost.length === 0 ? null : { paths: outermost.sort(), from };
}

/** The options a project's runner gives pytest that envgen adopts, and where. */
export interface RunnerOptions {
  /** The options, as pytest reads them (`--benchmark-skip`). */
  options: string[];
  /** The commands that give them, as `file: command`. */
  from: string[];
}

/** Options of a run of the benchmarks themselves (pytest-benchmark's, pytest-codspeed's), not of the tests. */
const BENCHMARK_RUN = new Set(['--benchmark-only', '--codspeed']);

/**
 * How the project's developers leave pytest-benchmark's benchmarks out of a run of their tests:
 * `--benchmark-skip` (not run) or else `--benchmark-disable` (each run once, untimed), where a
 * pytest command of its CI workflows, tox.ini or Makefile that runs the tests (not the
 * benchmarks: `--benchmark-only`, `--codspeed`) gives it, written out or through a variable of
 * its file (hgrecco/pint's `pytest $TEST_OPTS`). Without it a benchmark runs its code for
 * rounds timed to last a second or more, in every run. Null when no such command gives either.
 */
export function findRunnerOptions(texts: ReadonlyMap<string, string>, files: readonly string[]): RunnerOptions | null {
  return optionsOf(testCommands(texts, inTree(files)));
}

function optionsOf(commands: Iterable<RunnerCommand>): RunnerOptions | null {
  const given = new Map<string, string[]>();
  for (const { file, command, args, pytest } of commands) {
    if (!pytest || args.some((word) => BENCHMARK_RUN.has(word))) continue;
    for (const option of args.filter((word) => word === '--benchmark-skip' || word === '--benchmark-disable')) given.set(option, [...(given.get(option) ?? []), `${file}: ${command}`]);
  }
  const option = given.has('--benchmark-skip') ? '--benchmark-skip' : given.has('--benchmark-disable') ? '--benchmark-disable' : undefined;
  return option === undefined ? null : { options: [option], from: given.get(option) ?? [] };
}

/**
 * How the project's developers run pytest, read once from its runner files: the test paths
 * ({@link findRunnerTestPaths}) and the options envgen adopts ({@link findRunnerOptions}).
 */
export function readRunner(texts: ReadonlyMap<string, string>, files: readonly string[]): { testPaths: RunnerTestPaths | null; options: RunnerOptions | null } {
  const commands = [...testCommands(texts, inTree(files))];
  return { testPaths: testPathsOf(commands, files), options: optionsOf(commands) };
}
