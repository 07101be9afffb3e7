import { posix } from 'node:path';
import { splitShellWords } from './ini.js';

/** Files where a project's developers say how they run pytest: CI workflows, tox, a Makefile. */
const RUNNER_FILE = /^(?:\.github\/workflows\/[^/]+\.ya?ml|\.gitlab-ci\.yml|\.travis\.yml|azure-pipelines\.yml|tox\.ini|Makefile)$/;

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

/** The words after `pytest` of one shell command, or null when the command runs no pytest. */
function pytestArgs(words: readonly string[]): string[] | null {
  const command = words.findIndex((word) => !/^[A-Za-z_]\w*=/.test(word));
  if (command < 0) return null;
  let rest = words.slice(command);
  if (RUN_WRAPPERS.has(rest[0] ?? '') && rest[1] === 'run') rest = rest.slice(2);
  const program = posix.basename(rest[0] ?? '');
  if (program === 'pytest' || program === 'py.test') return rest.slice(1);
  // `python -m pytest`, `{envpython} -m pytest`, `$(PYTHON) -m pytest`, `coverage run -m pytest`, `python3.11 -bb -m pytest`.
  if (/python[\d.]*$|^\{envpython\}$|^\$[{(]?\w*PYTHON\w*[})]?$|^coverage$/.test(program)) {
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
    let word = args[index] ?? '';
    if (word === '--pyargs') return null;
    if (word.startsWith('-')) {
      if (!word.includes('=') && VALUE_OPTIONS.has(word) && !(word === '--cov' && (args[index + 1] ?? '-').startsWith('-'))) index += 1;
      continue;
    }
    // tox: `{posargs:tests}` is `tests` when no arguments are given, `{posargs}` nothing; `{toxinidir}/tests` is `tests`.
    word = word.replace(/^\{posargs:?([^}]*)\}$/, '$1').replace(/^\{toxinidir\}\/?/, '');
    if (word === '') continue;
    if (/[$`{}*?]/.test(word)) return null;
    const path = posix.normalize(posix.join(base, word.split('::')[0] ?? '')).replace(/\/$/, '');
    if (path.startsWith('..')) return null;
    if (exists(path)) paths.push(path);
  }
  return paths.length === 0 ? [base] : paths;
}

/**
 * The test paths the project's developers give pytest, where every pytest command of its CI
 * workflows, tox.ini and Makefile names some (`cd tests/ && py.test`, `pytest tests/unit`,
 * `{envpython} -m pytest {posargs:tests}`): what they run, when the tree holds test files
 * beyond them (a fuzzing module "run separately", benchmarks). Null when no command runs
 * pytest, or one runs it over the whole tree (no path from the root: pytest finds the tests
 * itself, as envgen does), or names what is not a path of the tree. `texts` holds the files
 * {@link mayNameTestPaths} picks (path → text); `files` every file of the tree.
 */
export function findRunnerTestPaths(texts: ReadonlyMap<string, string>, files: readonly string[]): RunnerTestPaths | null {
  const exists = (path: string): boolean => path === '.' || files.some((file) => file === path || file.startsWith(`${path}/`));
  const paths = new Set<string>();
  const from: string[] = [];
  for (const [file, text] of [...texts].sort(([a], [b]) => a.localeCompare(b))) {
    for (const line of logicalLines(text)) {
      if (/^\s*#/.test(line)) continue;
      // A YAML list item or `run:` key, tox's `commands =`, a Makefile recipe's tab.
      const body = line.replace(/^\s*(?:-\s+)?(?:(?:run|script|commands(?:_pre|_post)?)\s*[:=]\s*[|>]?[-+]?)?\s*/, '');
      let base = '.';
      for (const command of body.split(/&&|\|\||;|\|/)) {
        const words = splitShellWords(command.trim());
        if (words[0] === 'cd' && words.length === 2) {
          base = posix.normalize(posix.join(base, words[1] ?? '.')).replace(/\/$/, '');
          if (base.startsWith('..') || !exists(base)) break;
          continue;
        }
        const args = pytestArgs(words);
        if (args === null) continue;
        const named = namedPaths(args, base, exists);
        if (named === null || named.includes('.')) return null;
        for (const path of named) paths.add(path);
        from.push(`${file}: ${command.trim()}`);
      }
    }
  }
  return paths.size === 0 ? null : { paths: [...paths].sort(), from };
}
