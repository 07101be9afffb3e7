import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { structuredPatch } from 'diff';
import { createRng, isEnvgenError } from '@envgen/core';
import { applyPatch } from './apply-patch.js';
import { formatPatch } from './format-patch.js';
import { makePatch } from './make-patch.js';
import { isPatchProblem, parsePatch } from './parse-patch.js';
import { patchedPaths, reversePatch } from './reverse-patch.js';
import type { ParsedPatch, PatchedFile } from './types.js';
import { findUnsafeTargets, writePatchedFiles } from './write-patched-files.js';

function reader(files: Record<string, string>): (path: string) => string | null {
  return (path) => files[path] ?? null;
}

function parsed(text: string): ParsedPatch {
  const result = parsePatch(text);
  if (isPatchProblem(result)) throw new Error(`unexpected problem: ${result.message}`);
  return result;
}

const lines = (n: number, from = 1): string => Array.from({ length: n }, (_, i) => `line ${i + from}\n`).join('');

describe('makePatch', () => {
  it('writes git-style diffs: sorted files, a/ b/ prefixes, /dev/null for created and deleted files', () => {
    const text = makePatch([
      { path: 'pkg/z.py', before: 'x = 1\n', after: 'x = 2\n' },
      { path: 'pkg/new.py', before: null, after: 'print(1)\n' },
      { path: 'pkg/gone.py', before: 'a\n', after: null },
      { path: 'pkg/same.py', before: 'same\n', after: 'same\n' },
    ]);
    expect(text).toBe(
      [
        'diff --git a/pkg/gone.py b/pkg/gone.py',
        'deleted file mode 100644',
        '--- a/pkg/gone.py',
        '+++ /dev/null',
        '@@ -1 +0,0 @@',
        '-a',
        'diff --git a/pkg/new.py b/pkg/new.py',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/pkg/new.py',
        '@@ -0,0 +1 @@',
        '+print(1)',
        'diff --git a/pkg/z.py b/pkg/z.py',
        '--- a/pkg/z.py',
        '+++ b/pkg/z.py',
        '@@ -1 +1 @@',
        '-x = 1',
        '+x = 2',
        '',
      ].join('\n'),
    );
  });

  it('is deterministic whatever the input order', () => {
    const files: PatchedFile[] = [
      { path: 'b.py', before: lines(20), after: lines(20).replace('line 10', 'LINE 10') },
      { path: 'a.py', before: 'x\n', after: 'y\n' },
    ];
    expect(makePatch(files)).toBe(makePatch([...files].reverse()));
  });

  it('uses 3 lines of context', () => {
    const text = makePatch([{ path: 'm.py', before: lines(20), after: lines(20).replace('line 10\n', 'line ten\n') }]);
    expect(text).toContain('@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n');
  });

  it('marks a missing final newline', () => {
    const text = makePatch([{ path: 'm.py', before: 'a\nb', after: 'a\nc\n' }]);
    expect(text).toContain('-b\n\\ No newline at end of file\n+c\n');
  });

  it('diffs from the common start, byte for byte as diffing the whole files (seeded edits on repetitive lines)', () => {
    // The bug's patch is what instance ids hash: skipping the shared start must not move a hunk.
    const rng = createRng('make-patch-common-start');
    const whole = (before: string, after: string): string =>
      formatPatch({ files: [{ oldPath: 'f.py', newPath: 'f.py', hunks: structuredPatch('f.py', 'f.py', before, after, '', '', { context: 3 }).hunks }] });
    for (let round = 0; round < 400; round++) {
      // Few distinct lines, so Myers's search meets ties; CRLF and a missing final newline now and then.
      const eol = rng.int(8) === 0 ? '\r\n' : '\n';
      const old = Array.from({ length: 5 + rng.int(60) }, () => ['pass', 'x = 1', 'return x', '', '    y()'][rng.int(5)] ?? '');
      const now = [...old];
      for (let edit = 1 + rng.int(4); edit > 0; edit--) {
        const at = rng.int(now.length + 1);
        const kind = rng.int(3);
        if (kind === 0) now.splice(at, 1 + rng.int(4));
        else if (kind === 1) now.splice(at, 0, ...Array.from({ length: 1 + rng.int(3) }, () => ['pass', 'z = 2', 'return x'][rng.int(3)] ?? ''));
        else now.splice(at, 1, 'x = 2');
      }
      const text = (rows: string[]): string => rows.join(eol) + (rng.int(6) === 0 ? '' : eol);
      const before = text(old);
      const after = text(now);
      if (before === after) continue;
      expect(makePatch([{ path: 'f.py', before, after }])).toBe(whole(before, after));
    }
  });

  it('is accepted by git apply, including a path with a space', () => {
    const dir = execFileSync('mktemp', ['-d']).toString().trim();
    try {
      execFileSync('git', ['init', '-q', dir]);
      execFileSync('sh', ['-c', `printf 'a\\nb' > '${dir}/m.py' && printf 'x\\n' > '${dir}/with space.py'`]);
      const text = makePatch([
        { path: 'm.py', before: 'a\nb', after: 'a\nc\n' },
        { path: 'with space.py', before: 'x\n', after: 'y\n' },
        { path: 'sub/new.py', before: null, after: 'n\n' },
      ]);
      execFileSync('git', ['-C', dir, 'apply', '--check', '-'], { input: text });
      execFileSync('git', ['-C', dir, 'apply', '-'], { input: text });
      expect(execFileSync('cat', [join(dir, 'm.py'), join(dir, 'with space.py'), join(dir, 'sub/new.py')]).toString()).toBe('a\nc\ny\nn\n');
    } finally {
      execFileSync('rm', ['-rf', dir]);
    }
  });

  it('refuses unsafe paths', () => {
    expect(() => makePatch([{ path: '../x.py', before: null, after: 'x' }])).toThrow(/\.\./);
  });
});

describe('parsePatch', () => {
  it('reads git diffs back into files and hunks', () => {
    const text = makePatch([
      { path: 'a.py', before: 'x\n', after: 'y\n' },
      { path: 'new.py', before: null, after: 'n\n' },
    ]);
    const patch = parsed(text);
    expect(patch.files.map((file) => [file.oldPath, file.newPath])).toEqual([
      ['a.py', 'a.py'],
      [null, 'new.py'],
    ]);
    expect(formatPatch(patch)).toBe(text);
  });

  it('reads plain diffs without git headers or prefixes', () => {
    const patch = parsed('--- m.py\n+++ m.py\n@@ -1 +1 @@\n-a\n+b\n');
    expect(patch.files[0]).toMatchObject({ oldPath: 'm.py', newPath: 'm.py' });
  });

  it('ignores a commit message before the first file', () => {
    const patch = parsed(`Subject: fix\n\nexplanation\n${makePatch([{ path: 'a.py', before: 'x\n', after: 'y\n' }])}`);
    expect(patchedPaths(patch)).toEqual(['a.py']);
  });

  it('reads empty created files and pure renames from git headers', () => {
    const patch = parsed('diff --git a/pkg/__init__.py b/pkg/__init__.py\nnew file mode 100644\nindex 0000000..e69de29\ndiff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n');
    expect(patch.files).toEqual([
      { oldPath: null, newPath: 'pkg/__init__.py', hunks: [] },
      { oldPath: 'old.py', newPath: 'new.py', hunks: [] },
    ]);
  });

  it.each([
    ['../../etc/passwd', '--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+evil\n', 'parent-segment'],
    ['an absolute path', '--- /abs/x.py\n+++ /abs/x.py\n@@ -1 +1 @@\n-a\n+b\n', 'absolute'],
    ['a/../../x', 'diff --git a/../../x b/../../x\n--- a/../../x\n+++ b/../../x\n@@ -1 +1 @@\n-a\n+b\n', 'parent-segment'],
    ['a path into .git', '--- a/.git/hooks/pre-commit\n+++ b/.git/hooks/pre-commit\n@@ -1 +1 @@\n-a\n+b\n', 'git-dir'],
    ['a rename out of the repo', 'diff --git a/x.py b/../x.py\nsimilarity index 100%\nrename from x.py\nrename to ../x.py\n', 'parent-segment'],
    ['a created file outside', '--- /dev/null\n+++ b/src/../../../tmp/owned\n@@ -0,0 +1 @@\n+x\n', 'parent-segment'],
  ])('rejects %s with the path as evidence', (_name, text, reason) => {
    const result = parsePatch(text);
    expect(result).toMatchObject({ kind: 'unsafe-path', reason });
  });

  it('rejects NUL bytes, binary diffs and garbage', () => {
    expect(parsePatch('--- a/x\0\n+++ b/x\n')).toMatchObject({ kind: 'malformed', message: expect.stringContaining('NUL') });
    expect(parsePatch('diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n')).toMatchObject({ kind: 'binary', path: 'b/img.png' });
    expect(parsePatch('hello, this is not a diff\nat all\n')).toMatchObject({ kind: 'malformed', text: 'hello, this is not a diff' });
    expect(parsePatch(String.fromCharCode(...Array.from({ length: 300 }, (_, i) => 1 + ((i * 7919) % 250))))).toMatchObject({ kind: 'malformed' });
  });

  it('rejects symlink modes and copies', () => {
    expect(parsePatch('diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n')).toMatchObject({ kind: 'unsupported', path: 'b/link' });
    expect(parsePatch('diff --git a/x.py b/y.py\nsimilarity index 100%\ncopy from x.py\ncopy to y.py\n')).toMatchObject({ kind: 'unsupported' });
  });

  it('rejects malformed hunks with where they are', () => {
    expect(parsePatch('--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n')).toMatchObject({ kind: 'malformed', message: expect.stringMatching(/Hunk at line 3/) });
    expect(parsePatch('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n?? what\n')).toMatchObject({ kind: 'malformed', message: expect.stringMatching(/Unknown line/) });
    expect(parsePatch('--- a/x\n+++ b/x\n@@ -5 +5 @@\n-a\n+b\n@@ -2 +2 @@\n-c\n+d\n')).toMatchObject({ kind: 'malformed', message: expect.stringMatching(/previous hunk/) });
  });

  it('rejects a file patched twice', () => {
    const one = makePatch([{ path: 'a.py', before: 'x\n', after: 'y\n' }]);
    expect(parsePatch(one + one)).toMatchObject({ kind: 'duplicate-path', path: 'a.py' });
  });

  it('treats the empty string as the empty patch', () => {
    expect(parsePatch('')).toEqual({ files: [] });
  });
});

describe('applyPatch', () => {
  it('round-trips makePatch for edits, created and deleted files, CRLF and missing final newlines', () => {
    const before: Record<string, string> = {
      'edit.py': lines(40),
      'crlf.py': 'a\r\nb\r\nc\r\n',
      'noeol.py': 'x\ny',
      'gone.py': 'bye\n',
    };
    const after: Record<string, string | null> = {
      'edit.py': lines(40).replace('line 3\n', '').replace('line 30\n', 'line thirty\nextra\n'),
      'crlf.py': 'a\r\nB\r\nc\r\n',
      'noeol.py': 'x\nz',
      'gone.py': null,
      'new.py': 'hello\n',
    };
    const files = Object.keys(after).map((path) => ({ path, before: before[path] ?? null, after: after[path] ?? null }));
    const result = applyPatch(reader(before), makePatch(files));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.fromEntries(result.files.map((file) => [file.path, file.after]))).toEqual(after);
    expect(result.offsets).toEqual([]);
  });

  it.each([
    ['adds', 'a\nb', 'a\nb\n'],
    ['removes', 'a\nb\n', 'a\nb'],
    ['keeps a missing', 'a\nb', 'A\nb'],
  ])('%s the final newline', (_name, from, to) => {
    expect(applyPatch(reader({ f: from }), makePatch([{ path: 'f', before: from, after: to }]))).toMatchObject({ ok: true, files: [{ after: to }] });
  });

  it('refuses a "no newline" hunk where the file has one', () => {
    const text = makePatch([{ path: 'f', before: 'a\nb', after: 'a\nc' }]);
    expect(applyPatch(reader({ f: 'a\nb\n' }), text)).toMatchObject({ ok: false, problem: { kind: 'does-not-apply' } });
  });

  it('applies an LF patch to a CRLF file', () => {
    const result = applyPatch(reader({ 'w.py': 'a\r\nb\r\nc\r\n' }), '--- a/w.py\n+++ b/w.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
    expect(result).toMatchObject({ ok: true, files: [{ after: 'a\r\nB\r\nc\r\n' }] });
  });

  it('reports the offset of a hunk that moved', () => {
    const text = makePatch([{ path: 'm.py', before: lines(30), after: lines(30).replace('line 20\n', 'line twenty\n') }]);
    const shifted = `header 1\nheader 2\nheader 3\n${lines(30)}`;
    const result = applyPatch(reader({ 'm.py': shifted }), text);
    expect(result).toMatchObject({ ok: true, offsets: [{ path: 'm.py', hunk: 1, offset: 3, fuzz: 0 }] });
    if (result.ok) expect(result.files[0]?.after).toBe(shifted.replace('line 20\n', 'line twenty\n'));
  });

  it('needs fuzz for changed context and reports it, keeping the file’s own context lines', () => {
    const text = makePatch([{ path: 'm.py', before: lines(30), after: lines(30).replace('line 20\n', 'line twenty\n') }]);
    const drifted = lines(30).replace('line 18\n', 'line 18 # edited\n');
    const strict = applyPatch(reader({ 'm.py': drifted }), text);
    expect(strict).toMatchObject({ ok: false, problem: { kind: 'does-not-apply', path: 'm.py', hunk: 1, expectedLine: 17 } });
    if (!strict.ok) {
      expect(strict.problem.message).toMatch(/expected "line 18", found "line 18 # edited"/);
    }
    const fuzzy = applyPatch(reader({ 'm.py': drifted }), text, { fuzz: 1 });
    expect(fuzzy).toMatchObject({ ok: true, offsets: [{ path: 'm.py', hunk: 1, offset: 0, fuzz: 1 }] });
    if (fuzzy.ok) expect(fuzzy.files[0]?.after).toBe(drifted.replace('line 20\n', 'line twenty\n'));
  });

  it('never fuzzes the lines a hunk removes, and says where it looked', () => {
    const text = makePatch([{ path: 'm.py', before: lines(10), after: lines(10).replace('line 5\n', '') }]);
    const result = applyPatch(reader({ 'm.py': lines(10).replace('line 5\n', 'line five\n') }), text, { fuzz: 3 });
    expect(result).toMatchObject({ ok: false, problem: { kind: 'does-not-apply', closest: { line: 2, mismatches: [{ line: 5, expected: 'line 5', found: 'line five' }] } } });
  });

  it('limits the search to maxOffset', () => {
    const text = makePatch([{ path: 'm.py', before: lines(30), after: lines(30).replace('line 20\n', 'x\n') }]);
    const shifted = `${lines(10, 100)}${lines(30)}`;
    expect(applyPatch(reader({ 'm.py': shifted }), text, { maxOffset: 5 }).ok).toBe(false);
    expect(applyPatch(reader({ 'm.py': shifted }), text, { maxOffset: 10 })).toMatchObject({ ok: true, offsets: [{ offset: 10 }] });
  });

  it('reports missing files, files that already exist and partial deletions', () => {
    expect(applyPatch(reader({}), makePatch([{ path: 'a.py', before: 'x\n', after: 'y\n' }]))).toMatchObject({ ok: false, problem: { kind: 'missing-file', path: 'a.py' } });
    expect(applyPatch(reader({ 'a.py': 'x\n' }), makePatch([{ path: 'a.py', before: null, after: 'y\n' }]))).toMatchObject({ ok: false, problem: { kind: 'file-exists' } });
    expect(applyPatch(reader({ 'a.py': 'x\nmore\n' }), '--- a/a.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n')).toMatchObject({ ok: false, problem: { kind: 'does-not-apply' } });
  });

  it('passes parse problems through', () => {
    expect(applyPatch(reader({}), '--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n')).toMatchObject({ ok: false, problem: { kind: 'unsafe-path' } });
  });

  it('applies renames as a deletion and a creation', () => {
    const result = applyPatch(reader({ 'old.py': 'a\nb\n' }), 'diff --git a/old.py b/new.py\nsimilarity index 50%\nrename from old.py\nrename to new.py\n--- a/old.py\n+++ b/new.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n');
    expect(result).toMatchObject({ ok: true, files: [{ path: 'old.py', after: null }, { path: 'new.py', before: null, after: 'a\nc\n' }] });
  });
});

describe('reversePatch and patchedPaths', () => {
  it('undoes a patch', () => {
    const before = { 'a.py': lines(12), 'b.py': 'x\ny', 'gone.py': 'g\n' };
    const after = { 'a.py': lines(12).replace('line 2\n', 'two\n2b\n'), 'b.py': 'x\nz\n', 'new.py': 'n\n' };
    const patch = parsed(
      makePatch([
        { path: 'a.py', before: before['a.py'], after: after['a.py'] },
        { path: 'b.py', before: before['b.py'], after: after['b.py'] },
        { path: 'gone.py', before: before['gone.py'], after: null },
        { path: 'new.py', before: null, after: after['new.py'] },
      ]),
    );
    expect(patchedPaths(patch)).toEqual(['a.py', 'b.py', 'gone.py', 'new.py']);
    const reversed = applyPatch(reader(after), formatPatch(reversePatch(patch)));
    expect(reversed.ok).toBe(true);
    if (reversed.ok) {
      expect(Object.fromEntries(reversed.files.map((file) => [file.path, file.after]))).toEqual({ ...before, 'new.py': null });
    }
  });
});

describe('writePatchedFiles', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function tree(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'envgen-patch-'));
    dirs.push(dir);
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    return dir;
  }

  it('writes, creates and deletes files under the root', async () => {
    const root = await tree({ 'a.py': 'x\n', 'gone.py': 'g\n' });
    await writePatchedFiles(root, [
      { path: 'a.py', before: 'x\n', after: 'y\n' },
      { path: 'gone.py', before: 'g\n', after: null },
      { path: 'pkg/new.py', before: null, after: 'n\n' },
    ]);
    expect(await readFile(join(root, 'a.py'), 'utf8')).toBe('y\n');
    expect(await readFile(join(root, 'pkg/new.py'), 'utf8')).toBe('n\n');
    await expect(readFile(join(root, 'gone.py'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses symlinked files and directories, and writes nothing', async () => {
    const outside = await tree({ 'secret.py': 'secret\n' });
    const root = await tree({ 'a.py': 'x\n' });
    await symlink(join(outside, 'secret.py'), join(root, 'link.py'));
    await symlink(outside, join(root, 'linkdir'));
    expect(await findUnsafeTargets(root, ['a.py', 'link.py', 'linkdir/secret.py', 'linkdir/new.py', 'missing/x.py'])).toEqual([
      expect.objectContaining({ path: 'link.py', reason: 'symlink' }),
      expect.objectContaining({ path: 'linkdir/secret.py', reason: 'symlink' }),
      expect.objectContaining({ path: 'linkdir/new.py', reason: 'symlink' }),
    ]);
    const error = await writePatchedFiles(root, [
      { path: 'a.py', before: 'x\n', after: 'y\n' },
      { path: 'linkdir/secret.py', before: 'secret\n', after: 'owned\n' },
    ]).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'path-escape')).toBe(true);
    expect(await readFile(join(outside, 'secret.py'), 'utf8')).toBe('secret\n');
    expect(await readFile(join(root, 'a.py'), 'utf8')).toBe('x\n');
  });
});
