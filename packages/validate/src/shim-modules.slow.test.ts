import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Candidate } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { buildBaseline } from '@envgen/testrun';
import { validateReference } from './reference.js';
import type { ValidationInput } from './types.js';
import { createValidator } from './validator.js';
import { sameVerdict } from './verdict.js';

// A module that makes a module of its own named after its file, as bottle.py makes
// bottle.ext for its import hook: the made module runs none of the file.
const SHIMMED = `import sys
import types


def double(x):
    return x * 2


def triple(x):
    return x * 3


class _Redirect:
    def find_module(self, name, path=None):
        return None


ext = sys.modules.setdefault(__name__ + ".ext", types.ModuleType(__name__ + ".ext"))
ext.__dict__.update({"__file__": __file__, "__path__": [], "__loader__": _Redirect()})
`;

// The same file run a second time into a module of another name, by hand: its functions hold
// code no warm code cache served, so a change cannot be swapped into them.
const COPIED = `import os
import sys
import types

copy = types.ModuleType("shimmed_copy")
copy.__file__ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shimmed.py")
with open(copy.__file__) as handle:
    exec(compile(handle.read(), copy.__file__, "exec"), copy.__dict__)
sys.modules["shimmed_copy"] = copy
`;

const TESTS = `from shimmed import double, triple


def test_double():
    assert double(2) == 4


def test_triple():
    assert triple(2) == 6
`;

const COPY_TESTS = `import copied
from shimmed_copy import triple


def test_copy_triple():
    assert triple(3) == 9
`;

const provider = createSandboxProvider('local');
const roots: string[] = [];

afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function fixture(files: Record<string, string>): Promise<{ tree: string; home: string }> {
  const root = await mkdtemp(join(tmpdir(), 'envgen-shim-'));
  roots.push(root);
  const tree = join(root, 'tree');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), content);
  }
  return { tree, home: join(root, 'home') };
}

const triple4: ValidationInput = {
  candidate: { strategy: 'change_constant', family: 'procedural', seed: 1, patch: '', entities: [], description: 'triple times four' } satisfies Candidate,
  files: [{ path: 'shimmed.py', after: SHIMMED.replace('return x * 3', 'return x * 4') }],
};

function profileOf(testFiles: string[], sourceFiles: string[]): Profile {
  return {
    python: '/usr/bin/python3', env: { PYTHONHASHSEED: '0' }, aptPackages: [], install: [], testArgs: ['tests'], testGlobs: ['tests/**'],
    sourceFiles, testFiles, deselect: [], timeoutMs: 60_000, testTimeoutMs: 60_000, provenance: {},
  };
}

describe('checkpoints of a project whose code makes modules named after its own files', () => {
  it('goes on from a checkpoint when the made module holds none of the file’s code (bottle.ext)', async () => {
    const { tree, home } = await fixture({ 'shimmed.py': SHIMMED, 'tests/test_shim.py': TESTS });
    const profile = profileOf(['tests/test_shim.py'], ['shimmed.py']);
    const baseline = await buildBaseline({ worktree: tree, commit: 'a'.repeat(40), profile, sandboxProvider: provider, home });
    const validator = await createValidator({ worktree: tree, profile, baseline, sandboxProvider: provider, concurrency: 1 });
    try {
      const outcome = await validator.validateWithDetails(triple4);
      expect(outcome).toMatchObject({ mode: 'resumed', resumedFrom: 'tests/test_shim.py::test_triple', verdict: { kind: 'instance', failToPass: ['tests/test_shim.py::test_triple'] } });
      expect(outcome.declined).toBeUndefined();
      expect(sameVerdict(outcome.verdict, await validateReference({ worktree: tree, profile, baseline, sandboxProvider: provider, ...triple4 }))).toBe(true);
    } finally {
      await validator.close();
    }
  });

  it('declines the checkpoint when another load of the file holds functions the cache did not serve, and still sees the bug there', async () => {
    const { tree, home } = await fixture({ 'shimmed.py': SHIMMED, 'copied.py': COPIED, 'tests/test_shim.py': TESTS, 'tests/test_copy.py': COPY_TESTS });
    const profile = profileOf(['tests/test_copy.py', 'tests/test_shim.py'], ['copied.py', 'shimmed.py']);
    const baseline = await buildBaseline({ worktree: tree, commit: 'b'.repeat(40), profile, sandboxProvider: provider, home });
    const validator = await createValidator({ worktree: tree, profile, baseline, sandboxProvider: provider, concurrency: 1 });
    try {
      const outcome = await validator.validateWithDetails(triple4);
      expect(outcome.declined).toContain('shimmed_copy was imported without the warm code cache');
      expect(outcome.verdict).toMatchObject({ kind: 'instance', failToPass: ['tests/test_copy.py::test_copy_triple', 'tests/test_shim.py::test_triple'] });
      expect(sameVerdict(outcome.verdict, await validateReference({ worktree: tree, profile, baseline, sandboxProvider: provider, ...triple4 }))).toBe(true);
    } finally {
      await validator.close();
    }
  });
});
