import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { createLogger, isEnvgenError, silentLogger } from '@envgen/core';
import { createProgress, formatEnvReport, runEnv, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { LIB as CALC, TESTS as CALC_TESTS } from '../support/calc-fixture.js';
import { writeFixtureRepo } from '../support/fixture-repo.js';

const quiet = createProgress({ quiet: true });

function settingsFor(profiles: Record<string, Record<string, unknown>> = {}) {
  const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
  return { ...resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home }), profiles };
}

const LIB = 'def add(a, b):\n    return a + b\n\n\ndef unused():\n    return 0\n';

describe('envgen env on edge-case repos', () => {
  it('finds a src layout and puts src on PYTHONPATH', async () => {
    const repo = writeFixtureRepo({
      'src/calc/__init__.py': LIB,
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.profile.env.PYTHONPATH).toBe('src');
    expect(report.tests).toMatchObject({ passed: 1, failed: 0, error: 0 });
    expect(report.coverage).toEqual({ coveredFunctions: 1, allFunctions: 2 });
    expect(report.repo).toBe('local/project');
  });

  it('names declared dependencies apt cannot install apart from those it can', async () => {
    // dh-python's map names python3-pympler, which bookworm's archive does not have.
    const repo = writeFixtureRepo({
      'pyproject.toml': '[project]\nname = "calc"\nversion = "1.0"\n\n[project.optional-dependencies]\ntest = ["Pympler", "pytest"]\n',
      'calc.py': LIB,
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    });
    const lines: string[] = [];
    const report = await runEnv({ repo }, settingsFor(), createLogger({ level: 'warn', write: (line) => lines.push(line) }), quiet);
    expect(report.profile.aptPackages).toContain('python3-pympler');
    expect(report.missingAptPackages).toContain('python3-pympler');
    expect(report.unavailableAptPackages).toEqual(['python3-pympler']);
    expect(lines.filter((line) => line.includes('apt-get install')).join('\n')).not.toContain('python3-pympler');
    expect(lines.join('\n')).toContain("this machine's Debian archive does not have (tests that import them will fail or skip): python3-pympler");
    expect(formatEnvReport(report)).toMatch(/not in apt {2}python3-pympler \(not in this machine's Debian archive\)/);
  });

  it('runs a suite whose warnings are errors although its config has a key this pytest does not know', async () => {
    // A newer plugin's key (filelock's asyncio_default_fixture_loop_scope under Debian's older
    // pytest-asyncio) warns at start-up, and filterwarnings = error makes that an INTERNALERROR.
    const repo = writeFixtureRepo({
      'pyproject.toml': '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\nenvgen_key_of_a_newer_plugin = "function"\n',
      'calc.py': CALC,
      'tests/test_calc.py': CALC_TESTS,
      'tests/test_warn.py': 'import warnings\n\n\ndef test_warning_is_error():\n    warnings.warn("still an error", UserWarning)\n',
    });
    const plain = spawnSync('/usr/bin/python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: repo, encoding: 'utf8' });
    expect(plain.stdout).toContain('INTERNALERROR> pytest.PytestConfigWarning: Unknown config option: envgen_key_of_a_newer_plugin');
    const settings = settingsFor();
    const report = await runEnv({ repo }, settings, silentLogger, quiet);
    expect(report.profile.testArgs).toEqual(['-W', 'ignore::pytest.PytestConfigWarning', 'tests']);
    // The project's own filter still turns a test's warning into its failure.
    expect(report.tests).toMatchObject({ failed: 1, error: 0 });
    expect(report.tests.passed).toBeGreaterThan(3);
    // Runs of chosen tests (check 6, the statements' failure output) keep the filter as an option.
    const injected = await runInject({ repo, count: 4, seed: 1, combine: 0, tasks: { statement: 'tests' } }, settings, silentLogger, quiet);
    expect(injected.kept).toBeGreaterThan(0);
    expect(injected.afterVerdict).toEqual([]);
    expect(injected.tasks).toMatchObject({ built: injected.kept, failed: [] });
    const pool = openPool(settings.home);
    try {
      // Each statement shows pytest's report of the failing tests (its `E` lines), not a usage error.
      for (const { task } of pool.listInstances()) expect(task?.problem_statement.text).toMatch(/^E {3}/m);
    } finally {
      pool.close();
    }
  });

  it('says there are no Python tests, and what to do', async () => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'README.md': 'no tests here\n' });
    const error = await runEnv({ repo }, settingsFor(), silentLogger, quiet).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'no-python-tests')).toBe(true);
    expect((error as Error).message).toMatch(/profile/);
  });

  it('stops an inject where no test passes on the clean tree, saying why (test files that read data from an absent submodule)', async () => {
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      // As tomlkit's: each test module's collection lists the cases the submodule holds.
      'tests/conftest.py': 'import os\n\n\ndef pytest_generate_tests(metafunc):\n    os.listdir(os.path.join(os.path.dirname(__file__), "toml-test", "tests"))\n',
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n',
    });
    const error = await runInject({ repo, count: 4, seed: 1, combine: 0, tasks: null }, settingsFor(), silentLogger, quiet).catch((caught: unknown) => caught);
    // Before, inject tried nothing and exited 0 with an empty table.
    expect(isEnvgenError(error, 'no-python-tests')).toBe(true);
    expect((error as Error).message).toContain('envgen cannot use local/project: no test passed stably on its clean tree');
    expect((error as Error).message).toContain("toml-test/tests'");
    expect((error as Error).message).toContain('`envgen env` with the same --repo');
  });

  it('reports a collection error as such, next to the tests that ran', async () => {
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/test_ok.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n',
      'tests/test_broken.py': 'import module_that_does_not_exist\n\n\ndef test_never():\n    pass\n',
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.tests.passed).toBe(1);
    expect(report.collectionErrors.map((error) => error.nodeid)).toEqual(['tests/test_broken.py']);
    expect(report.collectionErrors[0]?.message).toMatch(/module_that_does_not_exist/);
  });

  it('says why clean tests fail, grouped by their exception, and what to do where the machine lacks what they need', async () => {
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/test_reasons.py': [
        'import locale',
        'import pytest',
        'from calc import add',
        '',
        '',
        '@pytest.fixture',
        'def in_a_locale():',
        '    # A locale no machine generates: setlocale fails as where en_US.UTF-8 was never generated.',
        '    locale.setlocale(locale.LC_ALL, "xx_YY.UTF-8")',
        '',
        '',
        '@pytest.mark.parametrize("case", range(3))',
        'def test_sorted(in_a_locale, case):',
        '    pass',
        '',
        '',
        'def test_wrong():',
        '    assert add(2, 2) == 5',
        '',
        '',
        'def test_ok():',
        '    assert add(2, 2) == 4',
        '',
      ].join('\n'),
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.tests).toMatchObject({ passed: 1, failed: 1, error: 3 });
    expect(report.failing).toEqual([
      { reason: 'locale.Error: unsupported locale setting', count: 3, example: 'tests/test_reasons.py::test_sorted[0]' },
      { reason: 'assert 4 == 5', count: 1, example: 'tests/test_reasons.py::test_wrong' },
    ]);
    const text = formatEnvReport(report);
    expect(text).toContain('3 × locale.Error: unsupported locale setting (tests/test_reasons.py::test_sorted[0], …): a locale this machine has not generated: apt-get install -y locales-all\n');
    expect(text).toMatch(/\n\s+failing\s+1 × assert 4 == 5 \(tests\/test_reasons.py::test_wrong\)\n/);
  });

  it('marks tests whose outcome differs between the two runs as flaky', async () => {
    // 16 coin flips per run: the chance that no case differs between two runs is 2^-16.
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/test_flaky.py': [
        'import os',
        'import pytest',
        'from calc import add',
        '',
        '',
        'def test_stable():',
        '    assert add(1, 1) == 2',
        '',
        '',
        '@pytest.mark.parametrize("case", range(16))',
        'def test_coin(case):',
        '    assert os.urandom(1)[0] % 2 == 0',
        '',
      ].join('\n'),
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.flaky.length).toBeGreaterThan(0);
    expect(report.flaky.every((nodeId) => nodeId.startsWith('tests/test_flaky.py::test_coin['))).toBe(true);
    expect(report.flaky).not.toContain('tests/test_flaky.py::test_stable');
    expect(report.tests.flaky).toBe(report.flaky.length);
  });

  it('names the tests that run a profiler of their own, whose coverage is partial', async () => {
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/test_profiled.py': [
        'import cProfile',
        'from calc import add',
        '',
        '',
        'def test_profiled():',
        '    cProfile.runctx("add(1, 1)", globals(), locals())',
        '    assert add(1, 2) == 3',
        '',
        '',
        'def test_plain():',
        '    assert add(2, 2) == 4',
        '',
      ].join('\n'),
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.untraced).toEqual(['tests/test_profiled.py::test_profiled']);
    expect(formatEnvReport(report)).toMatch(/\n\s+untraced\s+tests\/test_profiled.py::test_profiled \(runs a profiler of its own/);
  });

  it("hides envgen's tracers from a suite that asserts no profiler or tracer runs: its coverage run behaves as the plain one", async () => {
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/conftest.py': [
        'import sys',
        'import threading',
        'import pytest',
        '',
        '',
        '@pytest.fixture(autouse=True)',
        'def no_tracers():',
        '    assert sys.getprofile() is None and sys.gettrace() is None and threading.gettrace() is None',
        '    yield',
        '    assert sys.getprofile() is None and sys.gettrace() is None',
        '    sys.setprofile(None)',
        '    sys.settrace(None)',
        '',
      ].join('\n'),
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_again():\n    assert add(2, 2) == 4\n',
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.tests).toMatchObject({ passed: 2, failed: 0, error: 0, flaky: 0 });
    expect(report.untraced).toEqual([]);
    expect(report.coverage.coveredFunctions).toBe(1);
  });

  it('stops a test that hangs at the per-test limit and keeps the rest of the run', async () => {
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/test_hang.py': [
        'import time',
        'from calc import add',
        '',
        '',
        'def test_hangs():',
        '    time.sleep(1000)',
        '',
        '',
        'def test_add():',
        '    assert add(1, 2) == 3',
        '',
      ].join('\n'),
    });
    const started = performance.now();
    const report = await runEnv({ repo }, settingsFor({ 'local/project': { testTimeoutMs: 1500 } }), silentLogger, quiet);
    expect(report.tests).toMatchObject({ passed: 1, failed: 1, flaky: 0 });
    expect(report.profile.testTimeoutMs).toBe(1500);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('contains a test that writes outside its tree: the write fails, the host is unchanged', async () => {
    const target = join(mkdtempSync(join(tmpdir(), 'envgen-outside-')), 'escaped.txt');
    const repo = writeFixtureRepo({
      'calc.py': LIB,
      'tests/test_escape.py': [
        'from calc import add',
        '',
        '',
        'def test_add():',
        '    assert add(1, 2) == 3',
        '',
        '',
        'def test_escape():',
        `    with open(${JSON.stringify(target)}, "w") as handle:`,
        '        handle.write("out")',
        '',
      ].join('\n'),
    });
    const report = await runEnv({ repo }, settingsFor(), silentLogger, quiet);
    expect(report.tests).toMatchObject({ passed: 1, failed: 1 });
    expect(existsSync(target)).toBe(false);
  });
});
