import { createHash } from 'node:crypto';
import { EnvgenError } from '@envgen/core';
import { olderVersion } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import type { PytestSandbox } from './pytest-sandbox.js';

/**
 * Prints what the interpreter imports from outside the worktree: its version and, per entry
 * of its import path (the profile's PYTHONPATH and `.pth` files included), the entry's real
 * path and last change, or null when it does not exist; and the last change of the locales
 * the machine has generated (`locales-all`, `locale-gen`), which tests that set one need.
 */
const PROBE = `import json, os, sys
root = os.path.realpath(os.getcwd())
def entry(path):
    real = os.path.realpath(path or os.curdir)
    if real == root or real.startswith(root + os.sep):
        return None
    try:
        return [real, os.stat(real).st_mtime_ns]
    except OSError:
        return [real, None]
locales = [[path, os.stat(path).st_mtime_ns] for path in ("/usr/lib/locale", "/usr/lib/locale/locale-archive") if os.path.exists(path)]
print(json.dumps([sys.version, os.path.realpath(sys.executable), [found for found in map(entry, sys.path) if found], locales]))
`;

const PROBE_TIMEOUT_MS = 30_000;

/**
 * A fingerprint of the packages the profile's python sees where the tests run: installing or
 * removing one (apt, pip) adds or removes an entry of a directory on its import path, which
 * changes that directory's last change, so a baseline made before can tell it no longer
 * describes the suite (envgen env's `missing` row, followed, must show its effect).
 * Directories inside the worktree are left out: the suite itself writes there.
 */
export async function environmentFingerprint(target: PytestSandbox, profile: Profile): Promise<string> {
  const exec = await target.sandbox.exec([profile.python, '-c', PROBE], { env: profile.env, limits: { timeoutMs: PROBE_TIMEOUT_MS } });
  const seen = exec.status === 'exited' && exec.exitCode === 0 ? exec.stdout.trim() : `${exec.status} ${exec.exitCode ?? ''}`;
  return createHash('sha256').update(seen).digest('hex');
}

/**
 * Stops before the suite runs when the profile's python has a pytest older than the project's
 * config needs ({@link Profile.requiresPytest}: a native TOML config, which older pytests skip
 * without a word, so the suite would run without the project's settings). A python whose
 * pytest does not import is left to the suite's own run, which says why.
 *
 * @throws EnvgenError `test-run-failed` naming both versions and what to do.
 */
export async function assertPytestVersion(target: PytestSandbox, profile: Profile): Promise<void> {
  const required = profile.requiresPytest;
  if (required === undefined) return;
  const exec = await target.sandbox.exec([profile.python, '-c', 'import pytest; print(pytest.__version__)'], { env: profile.env, limits: { timeoutMs: PROBE_TIMEOUT_MS } });
  const version = exec.status === 'exited' && exec.exitCode === 0 ? exec.stdout.trim() : '';
  if (version === '' || !olderVersion(version, required.version)) return;
  throw new EnvgenError(
    'test-run-failed',
    `The clean test suite was not run: the project's pytest config (${required.from}) is native TOML, which only pytest ${required.version} and newer read (9.0 for any native config, or its minversion), and ${profile.python} has pytest ${version}, which ignores it without a word (the suite would run without the project's test paths, options and collection rules): ` +
      `give the profile a python whose pytest is new enough (the config's profiles.<owner/name>.python), or testArgs that pass the config's settings as -o overrides (-o python_classes=... and the paths), which this pytest reads.`,
  );
}

/** Prints, of the top-level module names in argv, those the interpreter finds no spec for (a spec is found without running the module). */
const FIND_SPECS = `import importlib.util, json, sys
print(json.dumps([name for name in sys.argv[1:] if importlib.util.find_spec(name) is None]))
`;

/**
 * Of `names` (top-level module names), those the profile's python cannot import where the
 * tests run, with the profile's environment (its PYTHONPATH), from the worktree's root. An
 * answer the probe did not give (a broken python) is an empty list: the suite's own run says why.
 */
export async function findUnimportableModules(target: PytestSandbox, profile: Profile, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const exec = await target.sandbox.exec([profile.python, '-c', FIND_SPECS, ...names], { env: profile.env, limits: { timeoutMs: PROBE_TIMEOUT_MS } });
  if (exec.status !== 'exited' || exec.exitCode !== 0) return [];
  try {
    const found: unknown = JSON.parse(exec.stdout.trim());
    return Array.isArray(found) ? found.filter((name): name is string => typeof name === 'string' && names.includes(name)) : [];
  } catch {
    return [];
  }
}
