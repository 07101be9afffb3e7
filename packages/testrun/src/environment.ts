import { createHash } from 'node:crypto';
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
