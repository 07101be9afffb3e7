import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '@envgen/core';
import { buildInstanceEnvironment, materializeInstance } from './environment.js';

const scratch: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
}

const CLEAN = 'def add(a, b):\n    return a + b  # the one true sum of both arguments\n';
const BUGGY = 'def add(a, b):\n    return a - b  # the one true sum of both arguments\n';
const PATCH = `diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + b  # the one true sum of both arguments\n+    return a - b  # the one true sum of both arguments\n`;

/** A repo with two commits of history, the later one holding the clean code. */
function makeRepo(): { dir: string; commit: string } {
  const dir = tempDir('envgen-envsrc-');
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README'), 'calc\n');
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'first');
  execFileSync('mkdir', ['-p', join(dir, 'pkg')]);
  writeFileSync(join(dir, 'pkg', 'calc.py'), CLEAN);
  writeFileSync(join(dir, 'pkg', 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'add calc');
  return { dir, commit: git(dir, 'rev-parse', 'HEAD').trim() };
}

async function makeTask(home: string, source: { dir: string; commit: string }, instanceId = 'o__calc.12345678.change_operator__abcdef01'): Promise<Task> {
  const environment = await buildInstanceEnvironment({
    home,
    repo: 'o/calc',
    commit: source.commit,
    sourceGitDir: join(source.dir, '.git'),
    submodules: [],
    instanceId,
    patch: PATCH,
  });
  return {
    instance_id: instanceId,
    file_changes: [],
    problem_statement: { kind: 'tests', text: 'x fails', created_at: '2026-01-01T00:00:00Z' },
    environment,
    image_name: 'envgen/python:bookworm',
  };
}

afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('instance environments', () => {
  it('materializes the buggy tree as the only commit, keeping file modes', async () => {
    const source = makeRepo();
    const task = await makeTask(tempDir('envgen-home-'), source);
    const checkout = join(tempDir('envgen-co-'), 'work');
    const made = await materializeInstance(task, checkout);
    expect(made.commit).toBe(task.environment.commit);
    expect(readFileSync(join(checkout, 'pkg', 'calc.py'), 'utf8')).toBe(BUGGY);
    expect(git(checkout, 'rev-list', '--all').trim().split('\n')).toEqual([task.environment.commit]);
    expect(git(checkout, 'ls-files', '-s', 'pkg/run.sh')).toMatch(/^100755 /);
    expect(git(checkout, 'status', '--porcelain')).toBe('');
    expect(git(checkout, 'log', '--format=%s|%an|%at')).toBe('Initial commit|envgen|946684800\n');
  });

  it('gives the same bug the same commit everywhere', async () => {
    const source = makeRepo();
    const first = await makeTask(tempDir('envgen-home-'), source);
    const second = await makeTask(tempDir('envgen-home-'), source);
    expect(second.environment.commit).toBe(first.environment.commit);
    // The commit envgen's earlier plumbing (read-tree, hash-object, commit-tree) made of this bug:
    // pools built by those versions keep their environments' shas.
    expect(first.environment.commit).toBe('a47595310ac01420a34e21ae11ea2cb7cc089d22');
  });

  it('keeps the mode of a changed executable and takes deletions, new files and paths with spaces and quotes', async () => {
    const source = makeRepo();
    writeFileSync(join(source.dir, 'pkg', 'a "b" c.py'), 'x = 1\n');
    git(source.dir, 'add', '.');
    git(source.dir, 'commit', '-qm', 'odd name');
    const commit = git(source.dir, 'rev-parse', 'HEAD').trim();
    const patch = [
      'diff --git a/pkg/run.sh b/pkg/run.sh\n--- a/pkg/run.sh\n+++ b/pkg/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo run\n+echo ran\n',
      'diff --git a/pkg/a "b" c.py b/pkg/a "b" c.py\n--- a/pkg/a "b" c.py\n+++ b/pkg/a "b" c.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n',
      'diff --git a/README b/README\ndeleted file mode 100644\n--- a/README\n+++ /dev/null\n@@ -1 +0,0 @@\n-calc\n',
      'diff --git a/new dir/m.py b/new dir/m.py\nnew file mode 100644\n--- /dev/null\n+++ b/new dir/m.py\n@@ -0,0 +1 @@\n+y = 3\n',
    ].join('');
    const home = tempDir('envgen-home-');
    const environment = await buildInstanceEnvironment({ home, repo: 'o/calc', commit, sourceGitDir: join(source.dir, '.git'), submodules: [], instanceId: 'o__calc.12345678.x__00000003', patch });
    const task = { ...(await makeTask(home, source)), environment };
    const checkout = join(tempDir('envgen-co-'), 'work');
    await materializeInstance(task, checkout);
    expect(git(checkout, 'ls-files', '-s', 'pkg/run.sh')).toMatch(/^100755 /);
    expect(readFileSync(join(checkout, 'pkg', 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho ran\n');
    expect(readFileSync(join(checkout, 'pkg', 'a "b" c.py'), 'utf8')).toBe('x = 2\n');
    expect(readFileSync(join(checkout, 'new dir', 'm.py'), 'utf8')).toBe('y = 3\n');
    expect(git(checkout, 'ls-files', 'README')).toBe('');
    expect(git(checkout, 'ls-files', 'pkg/calc.py')).toBe('pkg/calc.py\n');
    expect(git(checkout, 'status', '--porcelain')).toBe('');
  });

  it('leaves no git command in the checkout a way to the fix', async () => {
    const source = makeRepo();
    const home = tempDir('envgen-home-');
    // Another instance of the same repo leaves the clean calc.py reachable in the mirror.
    const other = `diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-calc\n+calculator\n`;
    await buildInstanceEnvironment({ home, repo: 'o/calc', commit: source.commit, sourceGitDir: join(source.dir, '.git'), submodules: [], instanceId: 'o__calc.12345678.x__00000002', patch: other });
    const task = await makeTask(home, source);
    const checkout = join(tempDir('envgen-co-'), 'work');
    await materializeInstance(task, checkout);
    const cleanBlob = git(source.dir, 'rev-parse', 'HEAD:pkg/calc.py').trim();
    const fixLine = 'return a + b';
    const everyObject = git(checkout, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)');
    expect(everyObject).not.toContain(cleanBlob);
    const contents = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: checkout }).toString('utf8');
    expect(contents).not.toContain(fixLine);
    expect(contents).toContain('return a - b');
    for (const args of [['log', '--all', '-p'], ['reflog', '--all'], ['stash', 'list'], ['remote', '-v'], ['fsck', '--unreachable', '--dangling', '--no-reflogs'], ['for-each-ref'], ['show-ref']]) {
      const out = (() => {
        try {
          return execFileSync('git', args, { cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
        } catch (error) {
          return String((error as { stdout?: string }).stdout ?? '');
        }
      })();
      expect(out, `git ${args.join(' ')}`).not.toContain(fixLine);
      expect(out, `git ${args.join(' ')}`).not.toContain('change_operator');
      expect(out, `git ${args.join(' ')}`).not.toContain(source.commit);
    }
    expect(execFileSync('ls', ['-A', join(checkout, '.git')], { encoding: 'utf8' }).split('\n')).not.toEqual(expect.arrayContaining(['FETCH_HEAD', 'logs', 'ORIG_HEAD']));
    // Nothing in .git names the mirror or the instance.
    const grep = spawnSync('grep', ['-rIl', '-e', 'envs', '-e', 'refs/envgen', '-e', task.instance_id, join(checkout, '.git')], { encoding: 'utf8' });
    expect(grep.status, grep.stdout).toBe(1);
  });

  it('refuses a non-empty target and a vanished mirror with what to do', async () => {
    const source = makeRepo();
    const home = tempDir('envgen-home-');
    const task = await makeTask(home, source);
    const busy = tempDir('envgen-busy-');
    writeFileSync(join(busy, 'x'), '');
    await expect(materializeInstance(task, busy)).rejects.toThrow(/not empty/);
    rmSync(task.environment.mirror, { recursive: true });
    await expect(materializeInstance(task, join(tempDir('envgen-co-'), 'w'))).rejects.toThrow(/envgen tasks/);
  });

  it('lets parallel task lanes add their checkouts to one mirror at once without losing any', async () => {
    const home = tempDir('envgen-home-');
    const sources = Array.from({ length: 6 }, () => makeRepo());
    const built = await Promise.all(
      sources.map((source, index) =>
        buildInstanceEnvironment({ home, repo: 'o/calc', commit: source.commit, sourceGitDir: join(source.dir, '.git'), submodules: [], instanceId: `o__calc.12345678.x__0000000${index}`, patch: PATCH }),
      ),
    );
    const alternates = readFileSync(join(built[0]?.mirror ?? '', 'objects', 'info', 'alternates'), 'utf8').trim().split('\n');
    expect(alternates).toHaveLength(sources.length);
    for (const [index, environment] of built.entries()) {
      const checkout = join(tempDir('envgen-co-'), 'work');
      await materializeInstance({ instance_id: `o__calc.12345678.x__0000000${index}`, environment } as Task, checkout);
      expect(readFileSync(join(checkout, 'pkg', 'calc.py'), 'utf8')).toBe(BUGGY);
    }
  });
});
