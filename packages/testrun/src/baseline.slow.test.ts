import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@envgen/core';
import { profileHash } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import type { Sandbox, SandboxOptions, SandboxProvider } from '@envgen/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baselinePath, buildBaseline, loadCachedBaseline } from './baseline.js';
import { coveredEntities } from './summary.js';
import { fixtureProfile, writeFixtureRepo } from './test-helpers.js';
import { SHADOWED_NAMESPACE, SHADOWED_NAMESPACE_ENV } from '../../../test/support/shadowed-namespace.js';
import type { Baseline } from './types.js';

/** The real local provider, counting the sandboxes it opens. */
function countingProvider(): SandboxProvider & { opened: number } {
  const inner = createSandboxProvider('local', { logger: silentLogger });
  const counting = {
    kind: inner.kind,
    opened: 0,
    ensureAvailable: () => inner.ensureAvailable(),
    open: (options: SandboxOptions): Promise<Sandbox> => {
      counting.opened += 1;
      return inner.open(options);
    },
  };
  return counting;
}

const COINS = 16;

const REPO = {
  'pkg/__init__.py': '',
  'pkg/shapes.py': `import functools


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


def area(w, h):
    def checked(v):
        if v < 0:
            raise ValueError(v)
        return v
    return checked(w) * checked(h)


@logged
def perimeter(w, h):
    return 2 * (w + h)


class Square:
    def __init__(self, side):
        self.side = side

    def area(self):
        return area(self.side, self.side)

    @property
    def diagonal(self):
        return self.side * 2 ** 0.5


def never_called():
    return None
`,
  'tests/test_shapes.py': `import os
import pytest
from pkg.shapes import Square, area, perimeter


def test_area():
    assert area(2, 3) == 6


def test_perimeter():
    assert perimeter(2, 3) == 10


class TestSquare:
    def test_area(self):
        assert Square(3).area() == 9

    def test_diagonal_fails(self):
        assert Square(1).diagonal == 2


def test_no_code():
    assert True


@pytest.mark.parametrize("i", range(${COINS}))
def test_coin(i):
    assert os.urandom(1)[0] % 2 == 0
`,
};

describe('buildBaseline in the local sandbox', () => {
  let home: string;
  let worktree: string;
  const provider = countingProvider();
  const profile = fixtureProfile({ sourceFiles: ['pkg/__init__.py', 'pkg/shapes.py'], testFiles: ['tests/test_shapes.py'] });
  let baseline: Baseline;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'envgen-testrun-home-'));
    worktree = await writeFixtureRepo(REPO);
    baseline = await buildBaseline({ worktree, commit: 'a'.repeat(40), profile, sandboxProvider: provider, home });
  });

  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
    await rm(worktree, { recursive: true, force: true });
  });

  it('runs the suite twice in two sandboxes and keeps the first run results', () => {
    // One sandbox for each run of the suite and one that reads the packages python sees.
    expect(provider.opened).toBe(3);
    expect(baseline.suiteSeconds).toHaveLength(2);
    expect(baseline.results['tests/test_shapes.py::test_area']?.outcome).toBe('passed');
    expect(baseline.results['tests/test_shapes.py::TestSquare::test_diagonal_fails']?.outcome).toBe('failed');
    expect(Object.keys(baseline.results)).toHaveLength(5 + COINS);
  });

  it('marks tests whose outcome differs between the runs as flaky', () => {
    // Each coin test passes with probability 1/2 per run: all 16 agreeing has odds 2^-16.
    expect(baseline.flaky.length).toBeGreaterThan(0);
    for (const nodeId of baseline.flaky) expect(nodeId).toMatch(/^tests\/test_shapes\.py::test_coin\[\d+\]$/);
  });

  it('maps coverage to exactly the functions and methods each test ran', () => {
    expect(baseline.coverage).toEqual({
      'pkg/shapes.py:Square.__init__': ['tests/test_shapes.py::TestSquare::test_area', 'tests/test_shapes.py::TestSquare::test_diagonal_fails'],
      'pkg/shapes.py:Square.area': ['tests/test_shapes.py::TestSquare::test_area'],
      'pkg/shapes.py:Square.diagonal': ['tests/test_shapes.py::TestSquare::test_diagonal_fails'],
      'pkg/shapes.py:area': ['tests/test_shapes.py::TestSquare::test_area', 'tests/test_shapes.py::test_area'],
      'pkg/shapes.py:logged': ['tests/test_shapes.py::test_perimeter'],
      'pkg/shapes.py:perimeter': ['tests/test_shapes.py::test_perimeter'],
    });
    expect(baseline.functions).toEqual([
      'pkg/shapes.py:Square.__init__',
      'pkg/shapes.py:Square.area',
      'pkg/shapes.py:Square.diagonal',
      'pkg/shapes.py:area',
      'pkg/shapes.py:logged',
      'pkg/shapes.py:never_called',
      'pkg/shapes.py:perimeter',
    ]);
    expect(coveredEntities(baseline).map((entity) => entity.qualifiedName)).toEqual(['Square.__init__', 'Square.area', 'area', 'logged', 'perimeter']);
    // `@logged` ran when the test module imported pkg.shapes, before any test.
    expect(baseline.ranAtCollection).toEqual(['pkg/shapes.py:logged']);
  });

  it('keeps the lines of source files that ran: not a raise no test reaches, nor the body of a function no test calls', () => {
    const lines = REPO['pkg/shapes.py'].split('\n');
    const at = (text: string): number => lines.findIndex((line) => line.includes(text)) + 1;
    const ran = new Set(baseline.executedLines?.['pkg/shapes.py']);
    for (const text of ['if v < 0:', 'return v', 'return checked(w) * checked(h)', 'return 2 * (w + h)', 'def never_called():']) expect(ran.has(at(text)), text).toBe(true);
    for (const text of ['raise ValueError(v)', 'return None']) expect(ran.has(at(text)), text).toBe(false);
    expect(Object.keys(baseline.executedLines ?? {})).toEqual(['pkg/shapes.py']);
  });

  it('keeps apart the lines that had run when the first test began: a decorator applied at import, not the wrapper it returned', () => {
    const lines = REPO['pkg/shapes.py'].split('\n');
    const at = (text: string): number => lines.findIndex((line) => line.includes(text)) + 1;
    const atCollection = new Set(baseline.collectionLines?.['pkg/shapes.py']);
    for (const text of ['import functools', '@functools.wraps(fn)', 'return wrapper', 'def area(w, h):']) expect(atCollection.has(at(text)), text).toBe(true);
    for (const text of ['return fn(*args)', 'return 2 * (w + h)', 'if v < 0:', 'self.side = side']) expect(atCollection.has(at(text)), text).toBe(false);
    for (const line of atCollection) expect(baseline.executedLines?.['pkg/shapes.py']).toContain(line);
  });

  it('caches the baseline atomically and answers the second call without running pytest', async () => {
    const path = baselinePath(home, 'a'.repeat(40), profileHash(profile));
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(baseline);
    expect(await loadCachedBaseline(home, 'a'.repeat(40), profile)).toEqual(baseline);
    // A profile that takes other files for source (an envgen that tells them apart otherwise) has none cached.
    expect(await loadCachedBaseline(home, 'a'.repeat(40), { ...profile, sourceFiles: [...profile.sourceFiles, 'pkg/also.py'] })).toBeNull();
    expect(provider.opened).toBe(3);
    const again = await buildBaseline({ worktree, commit: 'a'.repeat(40), profile, sandboxProvider: provider, home });
    expect(again).toEqual(baseline);
    expect(provider.opened).toBe(4);
    const refreshed = await buildBaseline({ worktree, commit: 'a'.repeat(40), profile, sandboxProvider: provider, home, cache: 'refresh' });
    expect(provider.opened).toBe(7);
    expect(refreshed.coverage).toEqual(baseline.coverage);
  });

  it("imports the tree's portion of a namespace package an installed copy's -nspkg.pth made first, in pytest and in the processes tests start (zope.interface)", async () => {
    const tree = await writeFixtureRepo(SHADOWED_NAMESPACE);
    try {
      // Plain pytest imports the installed copy (41): both tests fail there.
      const baseline = await buildBaseline({ worktree: tree, commit: 'a'.repeat(40), profile: fixtureProfile({ env: SHADOWED_NAMESPACE_ENV }), sandboxProvider: provider, home });
      expect(Object.fromEntries(Object.entries(baseline.results).map(([id, result]) => [id, result.outcome]))).toEqual({
        'tests/test_ns.py::test_answer': 'passed',
        'tests/test_ns.py::test_answer_in_a_child': 'passed',
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('runs the suite again when a package it imports was installed after the cached baseline was made', async () => {
    // A directory on the tests' import path outside the worktree, as dist-packages is: the
    // 'none' sandbox runs on the host, where the test can install into it.
    const site = await mkdtemp(join(tmpdir(), 'envgen-site-'));
    const tree = await writeFixtureRepo({ 'tests/test_needs.py': 'from needed_pkg import VALUE\n\ndef test_value():\n    assert VALUE == 3\n' });
    const host = createSandboxProvider('none', { logger: silentLogger });
    const logged: string[] = [];
    const logger = { ...silentLogger, info: (message: string) => void logged.push(message) };
    try {
      const options = { worktree: tree, commit: 'f'.repeat(40), profile: fixtureProfile({ env: { PYTHONPATH: site } }), sandboxProvider: host, home, logger };
      const before = await buildBaseline(options);
      expect(before.results).toEqual({});
      expect(before.collectionErrors.map((error) => error.message).join('\n')).toContain("No module named 'needed_pkg'");
      expect(await buildBaseline(options)).toEqual(before);
      expect(logged).toEqual([]);
      // As `apt-get install` or `pip install` adds an entry to its directory.
      await writeFile(join(site, 'needed_pkg.py'), 'VALUE = 3\n');
      const after = await buildBaseline(options);
      expect(after.results['tests/test_needs.py::test_value']?.outcome).toBe('passed');
      expect(after.environment).not.toBe(before.environment);
      expect(logged).toEqual([expect.stringContaining('packages the tests import or the locales changed since the cached baseline was made')]);
      expect(await buildBaseline(options)).toEqual(after);
    } finally {
      await rm(tree, { recursive: true, force: true });
      await rm(site, { recursive: true, force: true });
    }
  });

  it('runs the install steps in the worktree itself, so that every copy of it has their outputs', async () => {
    const tree = await writeFixtureRepo({ 'tests/test_generated.py': 'from generated import VALUE\n\ndef test_value():\n    assert VALUE == 7\n' });
    try {
      const built = await buildBaseline({
        worktree: tree,
        commit: 'c'.repeat(40),
        profile: fixtureProfile({ install: ["printf 'VALUE = 7\\n' > generated.py"] }),
        sandboxProvider: provider,
        home,
      });
      expect(built.results).toEqual({ 'tests/test_generated.py::test_value': { outcome: 'passed', duration: expect.any(Number), wall: expect.any(Number) } });
      // The validator's and the bundle runner's copies of the worktree are made from it.
      expect(await readFile(join(tree, 'generated.py'), 'utf8')).toBe('VALUE = 7\n');
      await expect(
        buildBaseline({ worktree: tree, commit: 'd'.repeat(40), profile: fixtureProfile({ install: ['exit 3'] }), sandboxProvider: provider, home }),
      ).rejects.toMatchObject({ code: 'test-run-failed', message: expect.stringContaining('Install step `exit 3` failed') });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('names the pytest a project asks for with its minversion when this one is older', async () => {
    const tree = await writeFixtureRepo({ 'tox.ini': '[pytest]\nminversion = 99.0\n', 'tests/test_one.py': 'def test_one():\n    pass\n' });
    try {
      await expect(buildBaseline({ worktree: tree, commit: 'e'.repeat(40), profile: fixtureProfile(), sandboxProvider: provider, home })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringMatching(/the project asks for pytest 99\.0 or newer \(its minversion\) and \S+ has pytest \d+\.\d+\.\d+: give the profile a python/),
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('names the option pytest does not know and the plugin packages to install, where the profile gives a missing plugin\'s option', async () => {
    const tree = await writeFixtureRepo({ 'tests/test_one.py': 'def test_one():\n    pass\n' });
    try {
      const profile = fixtureProfile({ testArgs: ['--no-such-plugin-option', 'tests'], aptPackages: ['python3-pytest', 'python3-pytest-nosuch'] });
      await expect(buildBaseline({ worktree: tree, commit: 'f'.repeat(40), profile, sandboxProvider: provider, home })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringContaining("pytest does not know --no-such-plugin-option, which the profile gives it as the project does: the option of a plugin that is not installed where the tests run. Install the profile's Debian packages there (python3-pytest-nosuch)"),
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it("names the library the project needs a newer version of, where pytest's start imports a name the installed one lacks", async () => {
    // pytest imports it at start, before any test: from a conftest, or as the plugin a project that is one declares (typeguard).
    const tree = await writeFixtureRepo({
      'conftest.py': 'import plug\n',
      'plug.py': 'from json import NoExtraItems\n',
      'tests/test_one.py': 'def test_one():\n    pass\n',
    });
    try {
      await expect(buildBaseline({ worktree: tree, commit: 'd'.repeat(40), profile: fixtureProfile(), sandboxProvider: provider, home })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringMatching(/the project imports NoExtraItems from json, and the json installed here \(\S+json\/__init__\.py\) has no such name: the project needs a newer json than this machine's/),
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('names what the project declares newer than installed where pytest stops at start for a cause of its own (flask-sqlalchemy on SQLAlchemy 1.4)', async () => {
    const tree = await writeFixtureRepo({
      'tests/conftest.py': 'import json\n\nBase = json.DeclarativeBase\n',
      'tests/test_one.py': 'def test_one():\n    pass\n',
    });
    try {
      const declaredNewer = 'sqlalchemy>=2.0.16 (python3-sqlalchemy 1.4.46+ds1-1 installed)';
      await expect(buildBaseline({ worktree: tree, commit: 'e'.repeat(40), profile: fixtureProfile(), sandboxProvider: provider, home, declaredNewer })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringContaining(`the project declares newer versions than are installed where the tests run, the likeliest cause: ${declaredNewer}. Give the profile a python that has them`),
      });
      // Nothing declared newer: the output is all there is to go on.
      await expect(buildBaseline({ worktree: tree, commit: 'e'.repeat(40), profile: fixtureProfile(), sandboxProvider: provider, home })).rejects.toMatchObject({
        message: expect.stringContaining('check the profile (python, env, testArgs, aptPackages) against the output'),
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('names the module a conftest imports at start that nothing installed holds (urllib3, tox)', async () => {
    const tree = await writeFixtureRepo({ 'tests/conftest.py': 'import not_installed_anywhere.server\n', 'tests/test_one.py': 'def test_one():\n    pass\n' });
    try {
      await expect(buildBaseline({ worktree: tree, commit: 'e'.repeat(40), profile: fixtureProfile(), sandboxProvider: provider, home })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringMatching(/the conftest \S+tests\/conftest\.py imports not_installed_anywhere when it starts, and no not_installed_anywhere is installed where the tests run: install it there/),
      });
      // Declared by the project and not in Debian (pyinvoke/invoke's pytest_relaxed): no Debian package to point at.
      await expect(buildBaseline({ worktree: tree, commit: 'e'.repeat(40), profile: { ...fixtureProfile(), unpackaged: ['not-installed-anywhere'] }, sandboxProvider: provider, home })).rejects.toMatchObject({
        message: expect.stringMatching(/no not_installed_anywhere is installed where the tests run: the project declares not-installed-anywhere, which Debian does not package: install it there by other means/),
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('runs no suite where the config is native TOML and this pytest is older than it needs, and says what to do', async () => {
    const tree = await writeFixtureRepo({ 'pyproject.toml': '[tool.pytest]\npython_classes = ["*Check"]\n', 'tests/test_one.py': 'class OneCheck:\n    def test_one(self):\n        pass\n' });
    const opened = provider.opened;
    try {
      const profile = fixtureProfile({ requiresPytest: { version: '99.0', from: 'pyproject.toml [tool.pytest]' } });
      await expect(buildBaseline({ worktree: tree, commit: 'f'.repeat(40), profile, sandboxProvider: provider, home })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringMatching(/pyproject\.toml \[tool\.pytest\]\) is native TOML, which only pytest 99\.0 and newer read .* has pytest \d+\.\d+\.\d+, which ignores it without a word/),
      });
      // Only the sandbox that asked pytest its version: no run of the suite.
      expect(provider.opened).toBe(opened + 1);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('says which sandbox limit stopped the clean suite, and what to do', async () => {
    const tree = await writeFixtureRepo({ 'tests/test_hog.py': 'def test_small():\n    pass\n\n\ndef test_hog():\n    hog = b"x" * (512 * 1024 ** 2)\n    assert hog\n' });
    const inner = createSandboxProvider('local', { logger: silentLogger });
    const small: SandboxProvider = { kind: inner.kind, ensureAvailable: () => inner.ensureAvailable(), open: (options) => inner.open({ ...options, limits: { ...options.limits, memoryBytes: 256 * 1024 ** 2 } }) };
    try {
      await expect(buildBaseline({ worktree: tree, commit: 'f'.repeat(40), profile: fixtureProfile(), sandboxProvider: small, home })).rejects.toMatchObject({
        code: 'test-run-failed',
        message: expect.stringContaining("interrupted, exit 137); it hit the sandbox's memory limit, which every run has: deselect the test that needs more"),
      });
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('fails with a clear error when the clean suite hangs, naming the tests to deselect', async () => {
    const hang = 'import time\n\n\ndef test_first():\n    time.sleep(600)\n\n\ndef test_second():\n    time.sleep(600)\n\n\ndef test_third():\n    time.sleep(600)\n';
    const hanging = await writeFixtureRepo({ 'tests/test_hang.py': hang });
    try {
      // Each test is stopped at 2 s and the run at 6 s (its SIGTERM a second earlier): the
      // first test is past the per-test limit, and a later one is running when the run stops.
      const error = await buildBaseline({ worktree: hanging, commit: 'b'.repeat(40), profile: fixtureProfile({ timeoutMs: 6_000, testTimeoutMs: 2_000 }), sandboxProvider: provider, home }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'test-run-failed', message: expect.stringContaining("raise the profile's timeoutMs (6000 ms) or deselect the tests that hang: tests/test_hang.py::test_first") });
      expect((error as Error).message).toContain("past the per-test limit, the profile's testTimeoutMs of 2000 ms");
      expect((error as Error).message).toMatch(/tests\/test_hang\.py::test_(second|third) \(still running after \d+\.\d s when the run was stopped\)/);
    } finally {
      await rm(hanging, { recursive: true, force: true });
    }
  });

  it('names the test a run killed without results was in, when that test took SIGTERM (gunicorn)', async () => {
    const deaf = 'import signal\nimport time\n\n\ndef test_quick():\n    pass\n\n\ndef test_server():\n    signal.signal(signal.SIGTERM, lambda signum, frame: None)\n    time.sleep(60)\n';
    const tree = await writeFixtureRepo({ 'tests/test_deaf.py': deaf });
    try {
      // Its SIGTERM at 5 s goes to the test's handler; the sandbox kills pytest at 6 s, before the per-test limit.
      const error = await buildBaseline({ worktree: tree, commit: 'd'.repeat(40), profile: fixtureProfile({ timeoutMs: 6_000, testTimeoutMs: 30_000 }), sandboxProvider: provider, home }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'test-run-failed', message: expect.stringContaining('(first run: timeout, exit null)') });
      expect((error as Error).message).toMatch(/or deselect the tests that hang: tests\/test_deaf\.py::test_server \(still running after \d+\.\d s when the run was stopped\)/);
    } finally {
      await rm(tree, { recursive: true, force: true });
    }
  });

  it('stops a suite that took SIGTERM between two tests at its limit, and names the longest tests', async () => {
    // A server's signal handling, as gunicorn's tests install it: the run's SIGTERM goes unheard.
    const conftest = 'import signal\n\nsignal.signal(signal.SIGTERM, lambda signum, frame: None)\n';
    const quick = Array.from({ length: 60 }, (_, index) => `def test_${String(index).padStart(2, '0')}():\n    time.sleep(0.5)\n`).join('\n\n');
    const slow = await writeFixtureRepo({ 'tests/conftest.py': conftest, 'tests/test_slow.py': `import time\n\n\ndef test_longest():\n    time.sleep(1.5)\n\n\n${quick}` });
    try {
      // The run's SIGTERM at 18 s, its kill at 20 s: before, killed without results ("exit null").
      const error = await buildBaseline({ worktree: slow, commit: 'c'.repeat(40), profile: fixtureProfile({ timeoutMs: 20_000, testTimeoutMs: 3_000 }), sandboxProvider: provider, home }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'test-run-failed', message: expect.stringContaining('(first run: timeout, exit 124)') });
      expect((error as Error).message).toMatch(/or deselect the slowest tests: the run was stopped between two tests after \d+ had run, none past the per-test limit; the longest were tests\/test_slow\.py::test_longest \(1\.\d s\), tests\/test_slow\.py::test_\d\d \(0\.\d s\)/);
    } finally {
      await rm(slow, { recursive: true, force: true });
    }
  });
});
