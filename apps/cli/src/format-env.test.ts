import { describe, expect, it } from 'vitest';
import type { EnvReport } from './env-command.js';
import { formatEnvReport, verdict } from './format-env.js';

function report(tests: Partial<EnvReport['tests']>, more: Partial<EnvReport> = {}): EnvReport {
  return {
    repo: 'org/proj', owner: 'org', name: 'proj', commit: 'c'.repeat(40), sandbox: 'local',
    profile: { python: '/usr/bin/python3', env: {}, aptPackages: [], install: [], testArgs: [], testGlobs: [], deselect: [], timeoutMs: 1, testTimeoutMs: 1, provenance: {} },
    sourceFiles: 1, testFiles: 1, entities: { functions: 1, methods: 0, classes: 0 },
    tests: { total: 0, passed: 0, failed: 0, error: 0, skipped: 0, flaky: 0, ...tests },
    flaky: [], untraced: [], failing: [], collectionErrors: [], suiteSeconds: [1], coverage: { coveredFunctions: 1, allFunctions: 1 }, importedElsewhere: [],
    missingAptPackages: [], unavailableAptPackages: [], olderAptPackages: [], ciServices: [], notes: [], fromCache: false, seconds: 1, ...more,
  };
}

describe("envgen env's report", () => {
  it('shows the test command as a shell reads it back, words with spaces or globs quoted', () => {
    const shown = report({ passed: 1 });
    shown.profile.testArgs = ['-o', 'python_files=test_*.py *_test.py tests.py', 'tests'];
    expect(formatEnvReport(shown)).toContain("/usr/bin/python3 -m pytest -o 'python_files=test_*.py *_test.py tests.py' tests\n");
  });

  it('says what the machine lacks for a test file that does not collect, as for a failing test (wireservice/agate: a tests package that sets a locale)', () => {
    const collectionErrors = [{ nodeid: 'tests/test_agate.py', message: 'locale.Error: unsupported locale setting' }];
    const failing = [{ reason: 'locale.Error: unsupported locale setting', count: 2, example: 'tests/test_x.py::test_a' }];
    const text = formatEnvReport(report({ failed: 2 }, { collectionErrors, failing }));
    // Before, only the failing row said it; a suite whose tests package sets the locale fails to collect instead.
    expect(text).toContain('collection  tests/test_agate.py: locale.Error: unsupported locale setting: a locale this machine has not generated: apt-get install -y locales-all');
    expect(text).toContain('2 × locale.Error: unsupported locale setting (tests/test_x.py::test_a, …): a locale this machine has not generated: apt-get install -y locales-all');
  });

  it('says which declared distribution Debian does not package for the test files it stops, one row for them all (python/importlib_resources: jaraco.test)', () => {
    const message = "ModuleNotFoundError: No module named 'jaraco'";
    const collectionErrors = ['test_files.py', 'test_open.py', 'util.py'].map((file) => ({ nodeid: `importlib_resources/tests/${file}`, message: `${message}\nmore` }));
    const shown = report({ passed: 2 }, { collectionErrors });
    shown.profile.unpackaged = ['jaraco-test', 'pytest-mypy'];
    const text = formatEnvReport(shown);
    expect(text).toContain(
      "collection  3 test files (importlib_resources/tests/test_files.py, …): ModuleNotFoundError: No module named 'jaraco': the project declares jaraco-test, which Debian does not package: install it where the tests run by other means",
    );
    expect(text.match(/ {2}collection /g)).toHaveLength(1);
    expect(verdict(shown)).toBe("envgen can run org/proj's tests safely in the local sandbox, but 3 test file(s) did not collect (the `collection` rows say why): their tests are in no instance");
  });

  it('says the installed package is older than declared where a module or name of it is missing (jquast/blessed: wcwidth.table_vs16)', () => {
    const olderAptPackages = [{ package: 'python3-wcwidth', version: '0.2.14', requirement: 'wcwidth>=0.2.14', installed: '0.2.5+dfsg1-1.1' }];
    const collectionErrors = [{ nodeid: 'tests/test_color.py', message: "ModuleNotFoundError: No module named 'wcwidth.table_vs16'" }];
    const failing = [{ reason: "ImportError: cannot import name 'width' from 'wcwidth' (/usr/lib/python3/dist-packages/wcwidth/__init__.py)", count: 2, example: 'tests/test_x.py::test_a' }];
    const text = formatEnvReport(report({ passed: 1, failed: 2 }, { collectionErrors, failing, olderAptPackages }));
    const cause = 'the project declares wcwidth>=0.2.14, and the python3-wcwidth installed (0.2.5+dfsg1-1.1) is older: install a newer one where the tests run by other means';
    expect(text).toContain(`collection  tests/test_color.py: ModuleNotFoundError: No module named 'wcwidth.table_vs16': ${cause}`);
    expect(text).toContain(`(tests/test_x.py::test_a, …): ${cause}`);
  });

  it("says why tests that read the project's own git repository fail (gitpython-developers/GitPython's rorepo)", () => {
    const failing = [{ reason: 'git.exc.InvalidGitRepositoryError: /tmp/repo', count: 615, example: 'test/test_commit.py::TestCommit::test_bake' }];
    const text = formatEnvReport(report({ passed: 103, error: 615 }, { failing }));
    expect(text).toContain("615 × git.exc.InvalidGitRepositoryError: /tmp/repo (test/test_commit.py::TestCommit::test_bake, …): they read the project's own git repository");
    expect(text).toContain('in the tree without its history (a history would show the fix): these tests are in no instance');
  });

  it('says why tests that reach for a service on the machine fail (PyMySQL/PyMySQL: MySQL on localhost)', () => {
    const reason = `pymysql.err.OperationalError: (2003, "Can't connect to MySQL server on 'localhost' ([Errno 111] Connection refused)")`;
    const failing = [{ reason, count: 123, example: 'pymysql/tests/test_DictCursor.py::TestDictCursor::test_DictCursor' }];
    const text = formatEnvReport(report({ passed: 25, failed: 123 }, { failing }));
    expect(text).toContain(`123 × ${reason} (pymysql/tests/test_DictCursor.py::TestDictCursor::test_DictCursor, …): a connection was refused`);
    expect(text).toContain("the sandbox's private loopback has none and these tests are in no instance");
  });

  it("names the services the project's CI starts beside its tests, which the sandbox has not (coleifer/huey: Redis tests that skip themselves)", () => {
    const ciServices = [
      { name: 'redis', from: '.github/workflows/tests.yaml' },
      { name: 'postgres', from: '.github/workflows/tests.yaml' },
      { name: 'mariadb', from: '.gitlab-ci.yml' },
    ];
    expect(formatEnvReport(report({ passed: 269, skipped: 34 }, { ciServices }))).toContain(
      "services  redis, postgres (.github/workflows/tests.yaml); mariadb (.gitlab-ci.yml): the project's CI starts these beside its tests, and the sandbox has none (no network but its own loopback): tests that need one fail or skip",
    );
    expect(formatEnvReport(report({ passed: 1 }))).not.toContain('services');
  });

  it('names the installed packages older than the project declares it needs (davidhalter/jedi: parso>=0.8.6, whose 3.13 grammar its conftest loads)', () => {
    const olderAptPackages = [{ package: 'python3-parso', version: '0.8.6', requirement: 'parso>=0.8.6', installed: '0.8.3-1' }];
    expect(formatEnvReport(report({ passed: 1 }, { olderAptPackages }))).toMatch(/\n {2}older +parso>=0\.8\.6 \(python3-parso 0\.8\.3-1 installed\): the project declares newer versions\n/);
  });
});

describe("envgen env's verdict", () => {
  it('says the repo can be used when its passing tests are stable', () => {
    expect(verdict(report({ passed: 40, flaky: 3 }))).toBe("envgen can run org/proj's tests safely in the local sandbox");
  });

  it('says so when most tests are flaky: few bugs will be kept', () => {
    // joerick/pyinstrument before envgen hid its tracers: 75 of 79 tests flaky, 0 of 40 candidates kept.
    expect(verdict(report({ passed: 4, flaky: 75 }))).toMatch(/^envgen can run org\/proj's tests in the local sandbox, but most are flaky \(75 flaky, 4 stable passing\): bugs are proved by stable tests only, so few will be kept/);
  });

  it("says the repo cannot be used when its passing tests ran none of the tree's functions, naming the copy they ran", () => {
    const elsewhere = [{ module: 'yaml', tree: 'lib/yaml', imported: '/usr/lib/python3/dist-packages/yaml/__init__.py' }];
    expect(verdict(report({ passed: 40 }, { coverage: { coveredFunctions: 0, allFunctions: 355 }, importedElsewhere: elsewhere }))).toBe(
      "envgen cannot use org/proj: its tests pass but ran none of the tree's 355 functions (they import yaml from /usr/lib/python3/dist-packages/yaml/__init__.py, not the tree's lib/yaml), so no bug in them can be proved. " +
        'If the tree\'s package lives in a directory its packaging config does not name, put that directory on the tests\' path with a profile file: {"env": {"PYTHONPATH": "lib"}} (configs/profiles/README.md)',
    );
    expect(verdict(report({ passed: 40 }, { coverage: { coveredFunctions: 0, allFunctions: 8 } }))).toMatch(/ran none of the tree's 8 functions \(they import another copy of its code, an installed one, or run it only in processes of their own\)/);
    // A test that ran a profiler of its own hides what it ran: not a verdict to draw then.
    expect(verdict(report({ passed: 40 }, { coverage: { coveredFunctions: 0, allFunctions: 8 }, untraced: ['t.py::test_profiles'] }))).toBe("envgen can run org/proj's tests safely in the local sandbox");
  });

  it('says where bugs can go when most tests fail on the clean tree (rq/rq without a Redis server)', () => {
    const collectionErrors = [{ nodeid: 'tests/test_cli.py', message: 'redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.' }];
    expect(verdict(report({ passed: 1, error: 471 }, { coverage: { coveredFunctions: 2, allFunctions: 751 }, collectionErrors }))).toBe(
      "envgen can run org/proj's tests safely in the local sandbox, but most of its tests fail on the clean tree (471 failing, 1 passing; the `failing` rows say why): bugs go only where passing tests run, 2 of 751 functions; " +
        'and 1 test file(s) did not collect (the `collection` rows say why): their tests are in no instance',
    );
  });

  it('says the repo cannot be used when no test passes', () => {
    expect(verdict(report({ failed: 3, flaky: 2 }))).toBe('envgen cannot use org/proj: no test passed stably on its clean tree in the local sandbox, so no bug can be proved');
  });
});
