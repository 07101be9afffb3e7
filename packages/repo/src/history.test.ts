import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { revertEntity } from '@envgen/mutate';
import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { afterAll, describe, expect, it } from 'vitest';
import { directoryState, git } from './git-test-helpers.fixture.js';
import { collectHistoricalVersions } from './history.js';

const root = mkdtempSync(join(tmpdir(), 'envgen-history-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Functions no commit touches: they keep the rename recognisable as one (git's 50% similarity).
const UNCHANGED = `


def square(x):
    return x * x


def cube(x):
    return x * x * x


def half(x):
    return x / 2
`;
const BUGGY = `def clamp(x, lo, hi):
    return max(lo, min(x, lo))


def area(r):
    return 3.14 * r * r
${UNCHANGED}`;
// Reformats clamp (comment, spacing: same syntax tree) and really changes area.
const REFORMATTED = `def clamp(x, lo, hi):
    # keep x in range
    return max(lo,  min(x, lo))


def area(r):
    return 3.14159 * r * r
${UNCHANGED}`;
// The fix, in the last commit, plus a function that did not exist before.
const FIXED = `def clamp(x, lo, hi):
    # keep x in range
    return max(lo,  min(x, hi))


def area(r):
    return 3.14159 * r  *  r


def perimeter(r):
    return 2 * 3.14159 * r
${UNCHANGED}`;

/** A repo with three commits of geo.py (renamed from shapes.py in the second) and a file that never changed. */
function makeRepo(): { work: string; commits: string[] } {
  const work = join(root, 'work');
  git(root, 'init', '--quiet', '--initial-branch=main', work);
  writeFileSync(join(work, 'shapes.py'), BUGGY);
  writeFileSync(join(work, 'const.py'), 'PI = 3.14159\n');
  git(work, 'add', '.');
  git(work, 'commit', '--quiet', '-m', 'buggy clamp');
  git(work, 'mv', 'shapes.py', 'geo.py');
  writeFileSync(join(work, 'geo.py'), REFORMATTED);
  git(work, 'commit', '--quiet', '-am', 'rename, reformat');
  writeFileSync(join(work, 'geo.py'), FIXED);
  git(work, 'commit', '--quiet', '-am', 'fix clamp');
  return { work, commits: git(work, 'log', '--format=%H', '--reverse').split('\n') };
}

describe('collectHistoricalVersions + revertEntity', () => {
  const { work, commits } = makeRepo();
  const head = commits[2] ?? '';
  const mirror = join(root, 'mirror.git');
  git(root, 'clone', '--quiet', '--mirror', work, mirror);

  it('collects the distinct past versions of each file, newest first, following the rename', async () => {
    for (const dir of [work, mirror]) {
      const before = directoryState(dir);
      const versions = await collectHistoricalVersions(dir, head, { paths: ['geo.py', 'const.py', 'missing.py'] });
      expect(versions).toEqual([
        { path: 'geo.py', commit: commits[1], source: REFORMATTED },
        { path: 'geo.py', commit: commits[0], source: BUGGY },
      ]);
      expect(directoryState(dir)).toBe(before);
    }
    const limited = await collectHistoricalVersions(mirror, head, { paths: ['geo.py'], maxCommitsPerFile: 2 });
    expect(limited.map((version) => version.commit)).toEqual([commits[1]]);
    expect(await collectHistoricalVersions(mirror, commits[0] ?? '', { paths: ['shapes.py'] })).toEqual([]);
  });

  it("reverts the fixed function to its buggy past onto today's code, skipping whitespace-only and new functions", async () => {
    const versions = await collectHistoricalVersions(work, head, { paths: ['geo.py'] });
    const entities = extractEntities(FIXED, 'geo.py').entities;
    const entity = (name: string): Entity => {
      const found = entities.find((candidate) => candidate.qualifiedName === name);
      if (found === undefined) throw new Error(`no ${name} in geo.py`);
      return found;
    };
    const reverted = versions.map((version) => revertEntity({ source: FIXED, entity: entity('clamp'), oldSource: version.source, origin: `commit ${version.commit.slice(0, 8)}` }));
    // The buggy bound comes back; area and perimeter keep today's text.
    expect(reverted[0]?.newSource).toBe(FIXED.replace('min(x, hi)', 'min(x, lo)'));
    expect(reverted[1]?.newSource).toBe(FIXED.replace('    # keep x in range\n    return max(lo,  min(x, hi))', '    return max(lo, min(x, lo))'));
    expect(reverted[0]?.description).toContain(`commit ${commits[1]?.slice(0, 8)}`);
    // area differs from its past only in spacing at commit 2, but really at commit 1.
    expect(revertEntity({ source: FIXED, entity: entity('area'), oldSource: REFORMATTED })).toBeNull();
    expect(revertEntity({ source: FIXED, entity: entity('area'), oldSource: BUGGY })?.newSource).toBe(FIXED.replace('3.14159 * r  *  r', '3.14 * r * r'));
    expect(revertEntity({ source: FIXED, entity: entity('perimeter'), oldSource: BUGGY })).toBeNull();
  });
});
