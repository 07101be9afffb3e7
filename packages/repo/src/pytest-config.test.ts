import { describe, expect, it } from 'vitest';
import { globToRegExp, matchesAnyGlob } from './glob.js';
import { parseIni, splitShellWords } from './ini.js';
import { filterAddopts, joinShellWords, olderVersion, readPytestSettings, turnsWarningsIntoErrors } from './pytest-config.js';

describe('parseIni', () => {
  it('reads sections, both separators, continuations and comments', () => {
    const data = parseIni('[pytest]\ntestpaths =\n    tests\n    # not this\n    integration ; inline\nAddopts: -ra\n[other]\nx=1\n');
    expect(data.get('pytest')?.get('testpaths')).toBe('tests\nintegration');
    expect(data.get('pytest')?.get('addopts')).toBe('-ra');
    expect(data.get('other')?.get('x')).toBe('1');
  });
});

describe('splitShellWords', () => {
  it('splits like shlex', () => {
    expect(splitShellWords(`-k "a and b" --x='1 2' c\\ d\n -q`)).toEqual(['-k', 'a and b', '--x=1 2', 'c d', '-q']);
    expect(splitShellWords(joinShellWords(['-k', "it's here", '-q']))).toEqual(['-k', "it's here", '-q']);
  });
});

describe('readPytestSettings', () => {
  it('prefers pytest.ini even without a section, like pytest', () => {
    const settings = readPytestSettings([
      { path: 'pytest.ini', text: '# empty\n' },
      { path: 'tox.ini', text: '[pytest]\ntestpaths = t\n' },
    ]);
    expect(settings).toEqual({ source: 'pytest.ini [pytest]', testpaths: null, pythonFiles: null, ownTestNames: false, addopts: [], pythonpath: null, filterwarnings: [], requiresPytest: null });
  });

  it('reads filterwarnings line by line, and tells when they or -W turn warnings into errors', () => {
    const ini = readPytestSettings([{ path: 'setup.cfg', text: '[tool:pytest]\nfilterwarnings =\n    error\n    ignore:a message with spaces:UserWarning\n' }]);
    expect(ini?.filterwarnings).toEqual(['error', 'ignore:a message with spaces:UserWarning']);
    const toml = readPytestSettings([{ path: 'pyproject.toml', text: '[tool.pytest]\nini_options.filterwarnings = ["ignore::DeprecationWarning"]\n' }]);
    expect(toml?.filterwarnings).toEqual(['ignore::DeprecationWarning']);
    expect(turnsWarningsIntoErrors(ini ?? { filterwarnings: [], addopts: [] })).toBe(true);
    expect(turnsWarningsIntoErrors(toml ?? { filterwarnings: [], addopts: [] })).toBe(false);
    expect(turnsWarningsIntoErrors({ filterwarnings: [], addopts: ['-W', 'error::UserWarning'] })).toBe(true);
    expect(turnsWarningsIntoErrors({ filterwarnings: [], addopts: ['-Werror'] })).toBe(true);
    expect(turnsWarningsIntoErrors({ filterwarnings: [], addopts: ['--pythonwarnings=error'] })).toBe(true);
    // tqdm's addopts: pytest reads -W=error as -W error.
    expect(turnsWarningsIntoErrors({ filterwarnings: [], addopts: ['-v', '-W=error'] })).toBe(true);
    expect(turnsWarningsIntoErrors({ filterwarnings: ['default'], addopts: ['-W', 'ignore'] })).toBe(false);
  });

  it('reads pyproject.toml ini_options arrays and strings', () => {
    const settings = readPytestSettings([
      { path: 'pyproject.toml', text: '[project]\nname = "x"\n[tool.pytest.ini_options]\ntestpaths = ["tests", "more"]\npython_files = "check_*.py"\naddopts = ["-ra", "--cov=x"]\n' },
      { path: 'setup.cfg', text: '[tool:pytest]\ntestpaths = ignored\n' },
    ]);
    expect(settings).toMatchObject({ source: 'pyproject.toml [tool.pytest.ini_options]', testpaths: ['tests', 'more'], pythonFiles: ['check_*.py'], addopts: ['-ra', '--cov=x'] });
  });

  it("reads pytest 9's native TOML configs, first in pytest 9's order, and says they need pytest 9 or their minversion", () => {
    const native = readPytestSettings([
      { path: 'pyproject.toml', text: '[tool.pytest]\nminversion = "9.1.0"\naddopts = ["-q", "-n", "auto"]\ntestpaths = ["tests"]\npython_files = ["check_*.py"]\npython_classes = ["Check*"]\nfilterwarnings = ["error"]\n' },
      { path: 'tox.ini', text: '[pytest]\ntestpaths = t\n' },
    ]);
    expect(native).toEqual({ source: 'pyproject.toml [tool.pytest]', testpaths: ['tests'], pythonFiles: ['check_*.py'], ownTestNames: true, addopts: ['-q', '-n', 'auto'], pythonpath: null, filterwarnings: ['error'], requiresPytest: '9.1.0' });
    // Without a minversion, or an older one: 9.0, the first pytest that reads them.
    expect(readPytestSettings([{ path: 'pyproject.toml', text: '[tool.pytest]\nminversion = "8.0"\nstrict = true\n' }])?.requiresPytest).toBe('9.0');
    // pytest.toml comes before pytest.ini, and counts even without a [pytest] table.
    const toml = readPytestSettings([
      { path: 'pytest.ini', text: '[pytest]\ntestpaths = ini\n' },
      { path: 'pytest.toml', text: '# nothing yet\n' },
    ]);
    expect(toml).toMatchObject({ source: 'pytest.toml [pytest]', testpaths: null, requiresPytest: '9.0' });
    // The ini-style table is read by every pytest since 6.0, which checks its minversion itself.
    expect(readPytestSettings([{ path: 'pyproject.toml', text: '[tool.pytest.ini_options]\nminversion = "9.0"\n' }])?.requiresPytest).toBeNull();
  });

  it('compares versions by their release numbers', () => {
    expect(olderVersion('7.2.1', '9.0')).toBe(true);
    expect(olderVersion('9.0.0', '9.0')).toBe(false);
    expect(olderVersion('9.1.0rc1', '9.0')).toBe(false);
    expect(olderVersion('8.4.2', '8.10')).toBe(true);
  });

  it('falls through pyproject without pytest settings to tox.ini and setup.cfg', () => {
    expect(readPytestSettings([{ path: 'pyproject.toml', text: '[tool.black]\nline-length = 99\n' }, { path: 'setup.cfg', text: '[tool:pytest]\ntestpaths = src/tests\n' }])).toMatchObject({
      source: 'setup.cfg [tool:pytest]',
      testpaths: ['src/tests'],
    });
    expect(readPytestSettings([{ path: 'tox.ini', text: '[tox]\nenvlist = py3\n' }])).toBeNull();
  });
});

describe('filterAddopts', () => {
  it('drops plugin options with their values and keeps the rest', () => {
    expect(filterAddopts(['-ra', '--cov=pkg', '--cov-report', 'term', '-n', 'auto', '--doctest-modules', '-p', 'no:cacheprovider', '-p', 'xdist', '--timeout=30', '-pfoo'])).toEqual({
      kept: ['-ra', '--doctest-modules', '-p', 'no:cacheprovider'],
      dropped: ['--cov=pkg', '--cov-report', 'term', '-n', 'auto', '-p', 'xdist', '--timeout=30', '-pfoo'],
      ini: [],
    });
  });

  it("drops --cov with the source it names as its own word, as argparse reads the option's optional value (before, portalocker's `--cov portalocker` left `portalocker` as the run's only path)", () => {
    expect(filterAddopts(['--doctest-modules', '--cov', 'portalocker', '--cov-report', 'html', '--cov', '--flake8', '--cov'])).toEqual({
      kept: ['--doctest-modules'],
      dropped: ['--cov', 'portalocker', '--cov-report', 'html', '--cov', '--flake8', '--cov'],
      ini: [],
    });
  });

  it('drops --strict-config, which turns an older plugin\'s unknown config key into a usage error, and keeps --strict-markers', () => {
    expect(filterAddopts(['--strict-markers', '--strict-config', '--import-mode=importlib'])).toEqual({
      kept: ['--strict-markers', '--import-mode=importlib'],
      dropped: ['--strict-config'],
      ini: [],
    });
  });

  it("drops the cache plugin's options that change nothing in a fresh checkout's run, which envgen's runs make without the plugin", () => {
    expect(filterAddopts(['-vv', '--cache-clear', '--ff', '--last-failed', '--lfnf', 'none', '--lfnf=all', '--nf'])).toEqual({
      kept: ['-vv', '--nf'],
      dropped: ['--cache-clear', '--ff', '--last-failed', '--lfnf', 'none', '--lfnf=all'],
      ini: [],
    });
  });

  it('drops the options that stop a run at a failure, alone or in a cluster of short flags, and keeps clusters whose x is a value', () => {
    expect(filterAddopts(['--maxfail=2', '-rf', '--maxfail', '3', '-x', '--exitfirst', '--sw', '--stepwise-skip', '--pdb'])).toEqual({
      kept: ['-rf'],
      dropped: ['--maxfail=2', '--maxfail', '3', '-x', '--exitfirst', '--sw', '--stepwise-skip', '--pdb'],
      ini: [],
    });
    expect(filterAddopts(['-vx', '-xrs', '-xx', '-rxs', '-vv', '-Werror'])).toEqual({
      kept: ['-v', '-rs', '-rxs', '-vv', '-Werror'],
      dropped: ['-x', '-x', '-x'],
      ini: [],
    });
  });

  it('gives a plugin option that is also an ini key as the key (a usage error without the plugin, a warning as -o)', () => {
    expect(filterAddopts(['-v', '--asyncio-mode=strict', '--asyncio-mode', 'auto'])).toEqual({
      kept: ['-v'],
      dropped: ['--asyncio-mode=strict', '--asyncio-mode=auto'],
      ini: ['asyncio_mode=strict', 'asyncio_mode=auto'],
    });
  });
});

describe('globs', () => {
  it('matches basenames anywhere and anchored paths with **', () => {
    expect(matchesAnyGlob('a/b/test_x.py', ['test_*.py'])).toBe(true);
    expect(matchesAnyGlob('a/b/xtest_x.py', ['test_*.py'])).toBe(false);
    expect(globToRegExp('**/tests/**/*.py').test('tests/helpers.py')).toBe(true);
    expect(globToRegExp('**/tests/**/*.py').test('pkg/tests/sub/x.py')).toBe(true);
    expect(globToRegExp('**/tests/**/*.py').test('pkg/mytests/x.py')).toBe(false);
    expect(globToRegExp('src/*.py').test('src/a/b.py')).toBe(false);
  });
});
