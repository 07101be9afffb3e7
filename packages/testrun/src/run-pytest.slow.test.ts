import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { silentLogger } from '@envgen/core';
import { createSandboxProvider } from '@envgen/sandbox';
import { afterAll, describe, expect, it } from 'vitest';
import { openPytestSandbox } from './pytest-sandbox.js';
import { runPytest } from './run-pytest.js';
import type { RunPytestOptions } from './run-pytest.js';
import { fixtureProfile, writeFixtureRepo } from './test-helpers.js';
import type { Profile } from '@envgen/repo';
import { HYPOTHESIS_DRAWS } from '../../../test/support/hypothesis-draws.js';

const provider = createSandboxProvider('local', { logger: silentLogger });
const trees: string[] = [];

afterAll(async () => {
  await Promise.all(trees.map((tree) => rm(tree, { recursive: true, force: true })));
});

async function runFixture(files: Record<string, string>, profile: Profile = fixtureProfile(), options: RunPytestOptions = {}) {
  const tree = await writeFixtureRepo(files);
  trees.push(tree);
  const target = await openPytestSandbox(provider, { worktree: tree });
  try {
    return await runPytest(target, profile, options);
  } finally {
    await target.close();
  }
}

/** A test (lines of a test module importing threading and pkg.m's in_thread) that runs in_thread in a thread of its own. */
const THREAD_TEST = ['def test_thread():', '    worker = threading.Thread(target=in_thread)', '    worker.start()', '    worker.join()', ''];

const ESCAPE_PATH = '/var/tmp/envgen-testrun-escape-probe';

const OUTCOMES_REPO = {
  'tests/test_outcomes.py': `import pytest

@pytest.fixture
def broken():
    raise RuntimeError("fixture boom")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown boom")

def test_pass():
    assert 1 + 1 == 2

def test_fail():
    assert 1 + 1 == 3

def test_error(broken):
    pass

def test_teardown_error(broken_teardown):
    pass

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

@pytest.mark.xfail
def test_xfail():
    assert False

@pytest.mark.xfail
def test_xpass():
    pass

@pytest.mark.xfail(strict=True)
def test_xpass_strict():
    pass

@pytest.mark.parametrize("s", ["a b", "[x]", "c::d"])
def test_param(s):
    assert s

class TestGroup:
    def test_method(self):
        assert True

def test_write_outside_tree():
    with open(${JSON.stringify(ESCAPE_PATH)}, "w") as handle:
        handle.write("escaped")
`,
  'tests/test_broken.py': 'import module_that_does_not_exist_xyz\n\ndef test_never():\n    pass\n',
};

describe('runPytest in the local sandbox', () => {
  it('records every outcome by exact node id, collection errors apart', async () => {
    const run = await runFixture(OUTCOMES_REPO);
    expect(run.status).toBe('completed');
    expect(run.exitCode).toBe(1);
    const outcomes = Object.fromEntries(Object.entries(run.results).map(([id, result]) => [id, result.outcome]));
    expect(outcomes).toEqual({
      'tests/test_outcomes.py::test_pass': 'passed',
      'tests/test_outcomes.py::test_fail': 'failed',
      'tests/test_outcomes.py::test_error': 'error',
      'tests/test_outcomes.py::test_teardown_error': 'error',
      'tests/test_outcomes.py::test_skip': 'skipped',
      'tests/test_outcomes.py::test_xfail': 'skipped',
      'tests/test_outcomes.py::test_xpass': 'passed',
      'tests/test_outcomes.py::test_xpass_strict': 'failed',
      'tests/test_outcomes.py::test_param[a b]': 'passed',
      'tests/test_outcomes.py::test_param[[x]]': 'passed',
      'tests/test_outcomes.py::test_param[c::d]': 'passed',
      'tests/test_outcomes.py::TestGroup::test_method': 'passed',
      'tests/test_outcomes.py::test_write_outside_tree': 'failed',
    });
    expect(existsSync(ESCAPE_PATH)).toBe(false);
    expect(run.collectionErrors).toEqual([
      { nodeid: 'tests/test_broken.py', message: "ModuleNotFoundError: No module named 'module_that_does_not_exist_xyz'" },
    ]);
    for (const result of Object.values(run.results)) {
      expect(result.duration).toBeGreaterThan(0);
      // The whole protocol holds setup, call and teardown, and pytest's own work for the test.
      expect(result.wall).toBeGreaterThanOrEqual(result.duration);
    }
  });

  it('runs exactly the given node ids, brackets and spaces included', async () => {
    const run = await runFixture(OUTCOMES_REPO, fixtureProfile(), {
      nodeIds: ['tests/test_outcomes.py::test_param[a b]', 'tests/test_outcomes.py::TestGroup::test_method'],
    });
    expect(run.status).toBe('completed');
    expect(Object.keys(run.results).sort()).toEqual([
      'tests/test_outcomes.py::TestGroup::test_method',
      'tests/test_outcomes.py::test_param[a b]',
    ]);
  });

  it('honours the profile: deselected tests, env and src layout', async () => {
    const run = await runFixture(
      {
        'src/lib.py': 'import os\n\ndef mode():\n    return os.environ["LIB_MODE"]\n',
        'tests/test_lib.py': 'from lib import mode\n\ndef test_mode():\n    assert mode() == "fast"\n\ndef test_dropped():\n    assert False\n',
      },
      fixtureProfile({ env: { PYTHONPATH: 'src', LIB_MODE: 'fast' }, deselect: ['tests/test_lib.py::test_dropped'] }),
    );
    expect(run.results).toEqual({ 'tests/test_lib.py::test_mode': { outcome: 'passed', duration: expect.any(Number), wall: expect.any(Number) } });
  });

  it('reports a repo whose only test file fails to import as a collection error', async () => {
    const run = await runFixture({ 'tests/test_only.py': 'import missing_dependency_abc\n\ndef test_a():\n    pass\n' });
    expect(run.status).toBe('completed');
    expect(run.results).toEqual({});
    expect(run.collectionErrors).toEqual([
      { nodeid: 'tests/test_only.py', message: "ModuleNotFoundError: No module named 'missing_dependency_abc'" },
    ]);
  });

  it('reports a session a conftest stops at import (the package it imports is broken) as stopped, not crashed', async () => {
    const run = await runFixture({
      'pkg/__init__.py': 'undefined_name_at_import\n',
      'tests/conftest.py': 'import pkg\n',
      'tests/test_a.py': 'def test_a():\n    pass\n',
    });
    expect(run.status).toBe('stopped');
    expect(run.results).toEqual({});
    expect(run.output).toContain('ImportError while loading conftest');
  });

  it("reports a session a plugin stops when it runs the project's code as pytest starts (pytest-django's django.setup()) as stopped, not crashed", async () => {
    const run = await runFixture({
      'pkg/__init__.py': 'undefined_name_at_import\n',
      'pytest.ini': '[pytest]\naddopts = -p startup\n',
      // A plugin of the project's, as pytest-django imports the apps' models when it sets Django up.
      'startup.py': 'def pytest_load_initial_conftests(early_config, parser, args):\n    import pkg  # noqa: F401\n',
      'tests/test_a.py': 'def test_a():\n    pass\n',
    });
    expect(run.status).toBe('stopped');
    expect(run.results).toEqual({});
    expect(run.output).toContain("the project's code failed while pytest started (pkg/__init__.py)");
  });

  it('reports a hanging suite as a timeout, keeping the tests that finished', async () => {
    const run = await runFixture(
      { 'tests/test_hang.py': 'import time\n\ndef test_quick():\n    pass\n\ndef test_hang():\n    time.sleep(600)\n' },
      fixtureProfile(),
      { timeoutMs: 4_000 },
    );
    expect(run.status).toBe('timeout');
    expect(run.seconds).toBeLessThan(30);
    expect(run.results).toEqual({ 'tests/test_hang.py::test_quick': { outcome: 'passed', duration: expect.any(Number), wall: expect.any(Number) } });
  });

  it('reports a pytest that dies without results as crashed, with its output', async () => {
    const run = await runFixture({ 'tests/test_die.py': 'import os\n\ndef test_die():\n    print("dying now", flush=True)\n    os._exit(3)\n' }, fixtureProfile({ testArgs: ['-s', 'tests'] }));
    expect(run.status).toBe('crashed');
    expect(run.results).toEqual({});
    expect(run.output).toContain('dying now');
  });

  it("lets a multiprocessing pool end workers it terminates while they still start, as plain pytest does (before, a SIGTERM sent while one forked was lost and the pool's exit waited forever)", async () => {
    // One task for four workers: the pool's exit terminates the three still starting.
    const pools = 'import multiprocessing\n\nFORK = multiprocessing.get_context("fork")\n\n\ndef double(x):\n    return 2 * x\n\n\ndef test_pools():\n    for _ in range(25):\n        with FORK.Pool(4) as pool:\n            assert pool.map(double, [1]) == [2]\n';
    const run = await runFixture({ 'tests/test_pools.py': pools }, fixtureProfile(), { testLimits: { 'tests/test_pools.py::test_pools': 30 } });
    expect(run.results['tests/test_pools.py::test_pools']).toMatchObject({ outcome: 'passed' });
  });

  it('starts no thread of pytest-rerunfailures where pytest-xdist is installed too, its reruns work as before and its tests see its flag as it is (before, its server thread made every warm checkpoint decline)', async () => {
    const tests = [
      'import threading',
      '',
      'import pytest',
      '',
      'RUNS = []',
      '',
      '',
      'def test_no_thread(pytestconfig):',
      '    assert pytestconfig.pluginmanager.has_plugin("rerunfailures") and pytestconfig.pluginmanager.has_plugin("xdist")',
      '    assert threading.active_count() == 1, threading.enumerate()',
      '',
      '',
      'def test_flag_as_the_module_has_it():',
      '    # The plugin\'s own suite reads it (pytest-dev/pytest-rerunfailures skips its xdist tests where false).',
      '    import pytest_rerunfailures',
      '    assert pytest_rerunfailures.HAS_PYTEST_HANDLECRASHITEM',
      '',
      '',
      '@pytest.mark.flaky(reruns=2)',
      'def test_passes_on_its_second_run():',
      '    RUNS.append(1)',
      '    assert len(RUNS) == 2',
      '',
    ].join('\n');
    // The `flaky` plugin (python3-flaky, which a sweep may have installed) claims the same marker and refuses `reruns`: not this test's plugin.
    const run = await runFixture({ 'tests/test_plugins.py': tests }, fixtureProfile({ testArgs: ['-p', 'no:flaky', 'tests'] }));
    expect(run.results['tests/test_plugins.py::test_no_thread']).toMatchObject({ outcome: 'passed' });
    expect(run.results['tests/test_plugins.py::test_flag_as_the_module_has_it']).toMatchObject({ outcome: 'passed' });
    expect(run.results['tests/test_plugins.py::test_passes_on_its_second_run']).toMatchObject({ outcome: 'passed' });
  });

  it('records per-test coverage of functions in the tree only', async () => {
    const run = await runFixture(
      {
        'pkg/__init__.py': '',
        'pkg/m.py': 'import json\n\n\ndef dump(x):\n    return json.dumps(x)\n\n\ndef unused():\n    return 0\n\n\ndef in_thread():\n    return 1\n',
        'tests/test_m.py': [
          'import threading',
          'from pkg.m import dump, in_thread',
          '',
          'def test_dump():',
          '    assert dump(1) == "1"',
          '',
          'def test_nothing():',
          '    pass',
          '',
          ...THREAD_TEST,
        ].join('\n'),
      },
      fixtureProfile(),
      { coverage: true },
    );
    expect(run.results['tests/test_m.py::test_thread']?.outcome).toBe('passed');
    const ownFiles = Object.fromEntries(
      Object.entries(run.coverage ?? {}).map(([nodeId, files]) => [nodeId, { 'pkg/m.py': files['pkg/m.py'], 'tests/test_m.py': files['tests/test_m.py'] }]),
    );
    expect(ownFiles).toEqual({
      'tests/test_m.py::test_dump': { 'pkg/m.py': [4], 'tests/test_m.py': [4] },
      'tests/test_m.py::test_nothing': { 'pkg/m.py': undefined, 'tests/test_m.py': [7] },
      'tests/test_m.py::test_thread': { 'pkg/m.py': [12], 'tests/test_m.py': [10] },
    });
    // Nothing outside the tree (the standard library's json, threading, pytest) is recorded.
    const files = new Set(Object.values(run.coverage ?? {}).flatMap((perFile) => Object.keys(perFile)));
    expect([...files].sort()).toEqual(['pkg/m.py', 'tests/test_m.py']);
  });

  it('records which lines of the named source files ran: branches not taken and functions not called stay out, threads count', async () => {
    const files = {
      'pkg/__init__.py': '',
      'pkg/m.py': [
        'def parse(text, strict=False):', // 1
        '    if not text:', // 2
        '        raise ValueError("empty")', // 3
        '    if strict:', // 4
        '        return text.upper()', // 5
        '    return text', // 6
        '',
        '',
        'def unused():', // 9
        '    return 0', // 10
        '',
        '',
        'def in_thread():', // 13
        '    return 1', // 14
        '',
      ].join('\n'),
      'tests/test_m.py': [
        'import threading',
        'from pkg.m import parse, in_thread',
        '',
        'def test_parse():',
        '    for _ in range(3):',
        '        assert parse("a") == "a"',
        '',
        ...THREAD_TEST,
      ].join('\n'),
    };
    for (const coverage of [true, false]) {
      const run = await runFixture(files, fixtureProfile(), { coverage, lines: ['pkg/m.py', 'pkg/__init__.py'] });
      expect(run.results['tests/test_m.py::test_thread']?.outcome).toBe('passed');
      // The def lines ran at import; the raise, the strict branch and unused's body did not. Test files are not recorded.
      expect(run.lines).toEqual({ 'pkg/m.py': [1, 2, 4, 6, 9, 13, 14] });
    }
  });

  it('records the functions that ran before the first test, not the module code of a file whose first line is a def', async () => {
    const run = await runFixture(
      {
        'pkg/__init__.py': '',
        'pkg/m.py': 'def first():\n    return 1\n\n\ndef second():\n    return 2\n\n\nVALUE = second()\n',
        'tests/test_m.py': 'from pkg.m import first\n\n\ndef test_first():\n    assert first() == 1\n',
      },
      fixtureProfile(),
      { coverage: true },
    );
    expect(run.results['tests/test_m.py::test_first']?.outcome).toBe('passed');
    // second ran at import; the module's code (first line 1, first's) is no function's.
    expect(run.collection).toEqual({ 'pkg/m.py': [5] });
  });

  it('goes on recording lines after a test whose RecursionError made Python drop the recorder (tomli, sqlparse)', async () => {
    const run = await runFixture(
      {
        'pkg/__init__.py': '',
        'pkg/m.py': 'def deeper(n):\n    return deeper(n + 1)\n\n\ndef after():\n    return 2\n',
        'tests/test_m.py': 'import pytest\nfrom pkg.m import after, deeper\n\n\ndef test_limit():\n    with pytest.raises(RecursionError):\n        deeper(0)\n\n\ndef test_after():\n    assert after() == 2\n',
      },
      fixtureProfile(),
      { coverage: true, lines: ['pkg/m.py'] },
    );
    expect(run.results['tests/test_m.py::test_after']?.outcome).toBe('passed');
    // Before: null, the whole suite's lines thrown away.
    expect(run.lines).toEqual({ 'pkg/m.py': [1, 2, 5, 6] });
  });

  it('records no lines when the suite puts its own trace function in place of the recorder', async () => {
    const run = await runFixture(
      {
        'pkg/__init__.py': '',
        'pkg/m.py': 'def f():\n    return 1\n',
        'tests/test_m.py': 'import sys\nfrom pkg.m import f\n\ndef test_f():\n    sys.settrace(lambda frame, event, arg: None)\n    sys.settrace(None)\n    assert f() == 1\n',
      },
      fixtureProfile(),
      { coverage: true, lines: ['pkg/m.py'] },
    );
    expect(run.results['tests/test_m.py::test_f']?.outcome).toBe('passed');
    expect(run.lines).toBeNull();
  });

  it("credits what a thread a test's body left running does to that test, and what a fixture's thread does to the test it serves", async () => {
    // The body's thread calls leaked() only while the second test runs: a tracer crediting
    // the current test would give it to that one (or to either, as thread timing falls). The
    // module fixture's server thread calls served() for the fourth test's request.
    const run = await runFixture(
      {
        'pkg/__init__.py': '',
        'pkg/m.py': 'def leaked():\n    return 2\n\n\ndef served():\n    return 3\n',
        'tests/test_leak.py': [
          'import queue',
          'import threading',
          'import pytest',
          'from pkg.m import leaked, served',
          '',
          'go = threading.Event()',
          'done = threading.Event()',
          'requests = queue.Queue()',
          'answers = queue.Queue()',
          '',
          'def work():',
          '    go.wait(10)',
          '    leaked()',
          '    done.set()',
          '',
          'def serve():',
          '    while True:',
          '        requests.get()',
          '        answers.put(served())',
          '',
          '@pytest.fixture(scope="module")',
          'def server():',
          '    threading.Thread(target=serve, daemon=True).start()',
          '',
          'def test_a_starts_a_thread():',
          '    threading.Thread(target=work, daemon=True).start()',
          '',
          'def test_b_runs_while_it_works():',
          '    go.set()',
          '    assert done.wait(10)',
          '',
          'def test_c_starts_the_server(server):',
          '    pass',
          '',
          'def test_d_asks_it(server):',
          '    requests.put(1)',
          '    assert answers.get(timeout=10) == 3',
          '',
        ].join('\n'),
      },
      fixtureProfile(),
      { coverage: true },
    );
    expect(run.results['tests/test_leak.py::test_d_asks_it']?.outcome).toBe('passed');
    expect(run.coverage?.['tests/test_leak.py::test_a_starts_a_thread']).toEqual({ 'pkg/m.py': [1], 'tests/test_leak.py': [11, 25] });
    expect(run.coverage?.['tests/test_leak.py::test_b_runs_while_it_works']).toEqual({ 'tests/test_leak.py': [28] });
    expect(run.coverage?.['tests/test_leak.py::test_c_starts_the_server']).toEqual({ 'tests/test_leak.py': [16, 21, 32] });
    expect(run.coverage?.['tests/test_leak.py::test_d_asks_it']).toEqual({ 'pkg/m.py': [5], 'tests/test_leak.py': [35] });
  });

  describe('a project with Hypothesis property tests (seeded runs)', () => {
    /** test_seen fails with a digest of every example test_draw drew. */
    const DRAWS = { 'tests/test_draws.py': HYPOTHESIS_DRAWS };
    const drawn = async (profile: Profile = fixtureProfile()) => {
      const run = await runFixture(DRAWS, profile);
      expect(run.results['tests/test_draws.py::test_draw']?.outcome).toBe('passed');
      return run.results['tests/test_draws.py::test_seen']?.reason;
    };

    it('draws the same examples in every run (before, each run drew its own)', async () => {
      const first = await drawn();
      expect(first).toMatch(/^AssertionError: drew \d+: [0-9a-f]{40}/);
      expect(await drawn()).toBe(first);
    });

    it('imports Hypothesis only where the tests do, as plain pytest (before, its plugin imported it at start for every suite)', async () => {
      // Hypothesis imports unittest.mock too, which another plugin may import anyway (pytest-mock's).
      const looks = 'import sys\n\nAT_IMPORT = "hypothesis" in sys.modules\n\n\ndef test_nothing_imported():\n    assert not AT_IMPORT\n    assert "hypothesis" not in sys.modules\n';
      const run = await runFixture({ 'tests/test_looks.py': looks }, fixtureProfile());
      expect(run.results['tests/test_looks.py::test_nothing_imported']?.outcome).toBe('passed');
    });

    it("keeps the project's own seed", async () => {
      const own = fixtureProfile({ testArgs: ['tests', '--hypothesis-seed=7'] });
      const seven = await drawn(own);
      expect(await drawn(own)).toBe(seven);
      expect(seven).not.toBe(await drawn());
    });
  });

  describe('a test past its own limit in code that never returns to the interpreter (a built-in looping in C)', () => {
    const looping = { 'tests/test_loop.py': 'def test_loop():\n    assert sum(range(10 ** 12)) > 0\n\n\ndef test_after():\n    pass\n' };
    const limits = { 'tests/test_loop.py::test_loop': 1, 'tests/test_loop.py::test_after': 1 };

    it("is ended by the plugin's watchdog at its limit and a grace in processor time: a timeout in that test, not the run's limit", async () => {
      // Before, the alarm went unheard and the run went on to its own limit (here 60 s).
      const run = await runFixture(looping, fixtureProfile(), { timeoutMs: 60_000, testLimits: limits });
      expect(run).toMatchObject({ status: 'timeout', watchdog: true, results: {}, stoppedIn: { nodeId: 'tests/test_loop.py::test_loop' } });
      expect(run.seconds).toBeLessThan(30);
    });

    it("leaves the profiling timer to a suite that runs it with a SIGPROF handler of its own (a sampling profiler)", async () => {
      const profiled = {
        'tests/conftest.py': 'import signal\n\nsignal.signal(signal.SIGPROF, lambda *args: None)\nsignal.setitimer(signal.ITIMER_PROF, 0.5, 0.5)\n',
        'tests/test_profiled.py': 'import signal\n\n\ndef test_timer_is_the_suites():\n    assert signal.getitimer(signal.ITIMER_PROF)[1] == 0.5\n',
      };
      const run = await runFixture(profiled, fixtureProfile(), { testLimits: { 'tests/test_profiled.py::test_timer_is_the_suites': 1 } });
      expect(run.results['tests/test_profiled.py::test_timer_is_the_suites']?.outcome).toBe('passed');
    });
  });

  describe("a project that times its tests with pytest-timeout (Debian's python3-pytest-timeout, its signal method)", () => {
    const hanging = (timeout: number) => ({
      'pytest.ini': `[pytest]\ntimeout = ${timeout}\n`,
      'tests/test_hang.py': 'import time\n\n\ndef test_hang():\n    while True:\n        time.sleep(0.01)\n\n\ndef test_after():\n    pass\n',
    });

    it("stops a hanging test at envgen's own limit when that comes first: a timeout, the run ends there", async () => {
      // Before, pytest-timeout's alarm replaced envgen's: the test failed at the project's 30 s, not a timeout.
      const run = await runFixture(hanging(30), fixtureProfile(), { testLimits: { 'tests/test_hang.py::test_hang': 1, 'tests/test_hang.py::test_after': 5 } });
      expect(run.results['tests/test_hang.py::test_hang']).toMatchObject({ outcome: 'failed', timedOut: true, reason: expect.stringContaining('exceeded its 1.0 s limit') });
      expect(run.results['tests/test_hang.py::test_after']).toBeUndefined();
    });

    it("fails it as the project says when the project's timeout comes first, and goes on", async () => {
      const run = await runFixture(hanging(1), fixtureProfile(), { testLimits: { 'tests/test_hang.py::test_hang': 10, 'tests/test_hang.py::test_after': 5 } });
      expect(run.results['tests/test_hang.py::test_hang']).toMatchObject({ outcome: 'failed', reason: 'Failed: Timeout >1.0s' });
      expect(run.results['tests/test_hang.py::test_hang']?.timedOut).toBeUndefined();
      expect(run.results['tests/test_hang.py::test_after']?.outcome).toBe('passed');
    });
  });
});
