import { describe, expect, it } from 'vitest';
import type { Profile } from '@envgen/repo';
import { SANDBOX_SUPPORT_DIR } from './pytest-sandbox.js';
import { buildPytestArgv, buildPytestEnv, parseResultsFile, softDeadlineMs, splitTestArgs } from './run-pytest.js';

const profile: Profile = {
  python: '/usr/bin/python3',
  env: { PYTHONPATH: 'src', LC_ALL: 'C.UTF-8' },
  aptPackages: [],
  install: [],
  testArgs: ['tests'],
  testGlobs: ['tests/**'],
  sourceFiles: ['src/m.py'],
  testFiles: ['tests/test_m.py'],
  deselect: ['tests/test_m.py::test_slow'],
  timeoutMs: 60_000,
  testTimeoutMs: 30_000,
  provenance: {},
};

describe('pytest command line', () => {
  it('runs the profile args with the plugin, deselections and the worktree as rootdir', () => {
    expect(buildPytestArgv(profile, '/tmp/repo')).toEqual([
      '/usr/bin/python3', '-m', 'pytest', '-p', 'envgen_pytest', '-p', 'no:cacheprovider', '-q', '-rN', '--color=no',
      '--rootdir=/tmp/repo', '--continue-on-collection-errors', '--deselect=tests/test_m.py::test_slow', 'tests',
    ]);
  });

  it('replaces the profile args with node ids', () => {
    expect(buildPytestArgv(profile, '/tmp/repo', ['tests/test_m.py::test_a[x y]']).at(-1)).toBe('tests/test_m.py::test_a[x y]');
    expect(buildPytestArgv(profile, '/tmp/repo', ['tests/test_m.py::test_a'])).not.toContain('tests');
  });

  it('keeps the profile options when running chosen node ids', () => {
    const withOptions = { ...profile, testArgs: ['-o', 'addopts=-ra', '-x', 'tests', 'more'] };
    expect(splitTestArgs(withOptions.testArgs)).toEqual({ options: ['-o', 'addopts=-ra', '-x'], selection: ['tests', 'more'] });
    expect(buildPytestArgv(withOptions, '/tmp/repo', ['tests/t.py::a']).slice(-4)).toEqual(['-o', 'addopts=-ra', '-x', 'tests/t.py::a']);
    // A warnings filter is the value of -W, not a path to select.
    const filtered = { ...profile, testArgs: ['-W', 'ignore::pytest.PytestConfigWarning', '--deselect', 'tests/t.py::b', 'tests'] };
    expect(splitTestArgs(filtered.testArgs)).toEqual({ options: ['-W', 'ignore::pytest.PytestConfigWarning', '--deselect', 'tests/t.py::b'], selection: ['tests'] });
  });

  it("appends the plugin to PYTHONPATH, names the profile's own import path and turns coverage on only when asked", () => {
    expect(buildPytestEnv(profile, '/tmp/envgen-out/r.json', true)).toEqual({
      PYTHONPATH: `src:${SANDBOX_SUPPORT_DIR}`,
      ENVGEN_IMPORT_PATH: 'src',
      LC_ALL: 'C.UTF-8',
      PYTHONDONTWRITEBYTECODE: '1',
      ENVGEN_RESULTS: '/tmp/envgen-out/r.json',
      ENVGEN_TEST_TIMEOUT: '30',
      ENVGEN_COVERAGE: '1',
    });
    expect(buildPytestEnv({ ...profile, env: {} }, '/r.json', false)).toEqual({
      PYTHONPATH: SANDBOX_SUPPORT_DIR,
      ENVGEN_IMPORT_PATH: '',
      PYTHONDONTWRITEBYTECODE: '1',
      ENVGEN_RESULTS: '/r.json',
      ENVGEN_TEST_TIMEOUT: '30',
    });
  });
});

describe('parseResultsFile', () => {
  it('reads results, collection errors and coverage', () => {
    const text = JSON.stringify({
      version: 1,
      exitstatus: 1,
      results: { 't.py::a': { outcome: 'failed', duration: 0.5 } },
      collectionErrors: [{ nodeid: 'u.py', message: 'ImportError: x' }],
      coverage: { 't.py::a': { 'm.py': [3] } },
    });
    expect(parseResultsFile(text)).toEqual({
      results: { 't.py::a': { outcome: 'failed', duration: 0.5 } },
      collectionErrors: [{ nodeid: 'u.py', message: 'ImportError: x' }],
      coverage: { 't.py::a': { 'm.py': [3] } },
    });
  });

  it('rejects truncated JSON and unknown outcomes', () => {
    expect(parseResultsFile('{"results": {')).toBeNull();
    expect(parseResultsFile(JSON.stringify({ results: { a: { outcome: 'xpassed' } }, collectionErrors: [] }))).toBeNull();
  });
});

describe('softDeadlineMs', () => {
  it('leaves pytest a grace period of 10% (1 to 10 s) before the hard kill', () => {
    expect(softDeadlineMs(60_000)).toBe(54_000);
    expect(softDeadlineMs(4_000)).toBe(3_000);
    expect(softDeadlineMs(15 * 60_000)).toBe(15 * 60_000 - 10_000);
    expect(softDeadlineMs(1_000)).toBe(500);
  });
});
