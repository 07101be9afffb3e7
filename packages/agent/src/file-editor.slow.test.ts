import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createSandboxProvider } from '@envgen/sandbox';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { openFileEditor } from './file-editor.js';
import type { FileEditor } from './file-editor.js';

const provider = createSandboxProvider('local');
const outside = mkdtempSync(join(tmpdir(), 'envgen-editor-outside-'));
writeFileSync(join(outside, 'secret.txt'), 'host secret\n');
const editors: FileEditor[] = [];
let checkout: string;
let editor: FileEditor;

beforeEach(async () => {
  checkout = writeFixtureRepo(
    {
      'pkg/__init__.py': '',
      'pkg/calc.py': 'def add(a, b):\n    return a - b\n\n\ndef twice(x):\n    return add(x, x)\n',
      'pkg/.hidden/x.py': 'x = 1\n',
      'tests/test_calc.py': 'from pkg.calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    },
    { git: true },
  );
  symlinkSync(outside, join(checkout, 'escape'));
  symlinkSync(join(outside, 'secret.txt'), join(checkout, 'pkg', 'secret_link.py'));
  editor = await openFileEditor({ provider, worktree: checkout });
  editors.push(editor);
});

afterAll(async () => {
  await Promise.all(editors.map((e) => e.close()));
});

const calc = () => readFileSync(join(checkout, 'pkg/calc.py'), 'utf8');

describe('str_replace_editor in the sandbox on a real checkout', () => {
  it('views files with line numbers, line ranges and directories two levels deep without hidden items', async () => {
    const whole = await editor.run({ command: 'view', path: '/tmp/repo/pkg/calc.py' });
    expect(whole).toBe(`Here is the result of running \`cat -n\` on /tmp/repo/pkg/calc.py:\n     1\tdef add(a, b):\n     2\t    return a - b\n     3\t\n     4\t\n     5\tdef twice(x):\n     6\t    return add(x, x)`);
    const range = await editor.run({ command: 'view', path: 'pkg/calc.py', view_range: [5, -1] });
    expect(range).toBe('Here is the result of running `cat -n` on /tmp/repo/pkg/calc.py (lines 5-6):\n     5\tdef twice(x):\n     6\t    return add(x, x)');
    expect(await editor.run({ command: 'view', path: 'pkg/calc.py', view_range: [4, 99] })).toMatch(/^Error: view_range end 99 must be -1 or between 4 and 6/);
    const listing = await editor.run({ command: 'view', path: '/tmp/repo' });
    expect(listing).toContain('/tmp/repo/pkg/\n/tmp/repo/pkg/__init__.py\n/tmp/repo/pkg/calc.py');
    expect(listing).toContain('/tmp/repo/tests/test_calc.py');
    expect(listing).not.toContain('.hidden');
    expect(listing).not.toContain('.git');
  });

  it('replaces a unique string, refuses missing and repeated ones, inserts lines, and undoes each edit in turn', async () => {
    const edited = await editor.run({ command: 'str_replace', path: '/tmp/repo/pkg/calc.py', old_str: 'return a - b', new_str: 'return a + b' });
    expect(edited).toContain('The file /tmp/repo/pkg/calc.py has been edited.');
    expect(edited).toContain('     2\t    return a + b');
    expect(calc()).toContain('return a + b');
    expect(await editor.run({ command: 'str_replace', path: 'pkg/calc.py', old_str: 'return a * b', new_str: 'x' })).toBe(
      'Error: no replacement was made: old_str does not appear verbatim in /tmp/repo/pkg/calc.py',
    );
    expect(await editor.run({ command: 'str_replace', path: 'pkg/calc.py', old_str: 'return', new_str: 'yield' })).toBe(
      'Error: no replacement was made: old_str occurs 2 times in /tmp/repo/pkg/calc.py (lines 2, 6); make it unique',
    );
    await editor.run({ command: 'insert', path: 'pkg/calc.py', insert_line: 0, new_str: '"""Arithmetic."""\n' });
    expect(calc().split('\n')[0]).toBe('"""Arithmetic."""');
    expect(await editor.run({ command: 'undo_edit', path: '/tmp/repo/pkg/calc.py' })).toBe('Last edit to /tmp/repo/pkg/calc.py undone successfully.');
    expect(calc()).toBe('def add(a, b):\n    return a + b\n\n\ndef twice(x):\n    return add(x, x)\n');
    await editor.run({ command: 'undo_edit', path: 'pkg/calc.py' });
    expect(calc()).toContain('return a - b');
    expect(await editor.run({ command: 'undo_edit', path: 'pkg/calc.py' })).toBe('Error: no edit of pkg/calc.py to undo.');
  });

  it('creates new files with their directories, never overwrites, and undoes a creation by removing the file', async () => {
    expect(await editor.run({ command: 'create', path: '/tmp/repo/pkg/new/mod.py', file_text: 'VALUE = 1\n' })).toBe('File created successfully at: /tmp/repo/pkg/new/mod.py');
    expect(readFileSync(join(checkout, 'pkg/new/mod.py'), 'utf8')).toBe('VALUE = 1\n');
    expect(await editor.run({ command: 'create', path: 'pkg/calc.py', file_text: '' })).toMatch(/^Error: \/tmp\/repo\/pkg\/calc\.py already exists: create never overwrites/);
    expect(await editor.run({ command: 'undo_edit', path: 'pkg/new/mod.py' })).toBe('Undid the creation of /tmp/repo/pkg/new/mod.py: the file is removed.');
    expect(existsSync(join(checkout, 'pkg/new/mod.py'))).toBe(false);
  });

  it('refuses paths outside the checkout, ".." segments, .git and symlinks, and changes nothing outside', async () => {
    const refusals = [
      [{ command: 'view', path: '/etc/passwd' }, /^Error: \/etc\/passwd is outside the repository \/tmp\/repo/],
      [{ command: 'create', path: '/tmp/repo/../evil.py', file_text: 'x' }, /^Error: \/tmp\/repo\/\.\.\/evil\.py has a '\.\.' segment/],
      [{ command: 'create', path: 'pkg/../../evil.py', file_text: 'x' }, /has a '\.\.' segment/],
      [{ command: 'create', path: 'escape/planted.py', file_text: 'x' }, /^Error: \/tmp\/repo\/escape is a symlink: the editor does not follow symlinks/],
      [{ command: 'view', path: 'escape/secret.txt' }, /is a symlink/],
      [{ command: 'str_replace', path: 'pkg/secret_link.py', old_str: 'host', new_str: 'x' }, /pkg\/secret_link\.py is a symlink/],
      [{ command: 'create', path: '.git/hooks/post-checkout', file_text: '#!/bin/sh\n' }, /is inside \.git/],
      [{ command: 'view', path: '' }, /needs "path"/],
      [{ command: 'delete', path: 'pkg/calc.py' }, /needs "command", one of view, create, str_replace, insert, undo_edit/],
      [{ command: 'insert', path: 'pkg/calc.py', insert_line: 'two', new_str: 'x' }, /needs "insert_line" as an integer/],
    ] as const;
    for (const [args, expected] of refusals) expect(await editor.run({ ...args })).toMatch(expected);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('host secret\n');
    expect(existsSync(join(checkout, '..', 'evil.py'))).toBe(false);
    expect(existsSync(join(checkout, '.git', 'hooks', 'post-checkout'))).toBe(false);
  });

  it('reads a file out of the sandbox with the same rules', async () => {
    expect(await editor.read('/tmp/repo/pkg/calc.py')).toEqual({ ok: true, path: '/tmp/repo/pkg/calc.py', text: calc() });
    expect(await editor.read('escape/secret.txt')).toMatchObject({ ok: false, error: expect.stringMatching(/is a symlink/) });
    mkdirSync(join(checkout, 'big'));
    writeFileSync(join(checkout, 'big', 'blob.bin'), Buffer.from([0xff, 0xfe, 0x00]));
    expect(await editor.read('big/blob.bin')).toMatchObject({ ok: false, error: expect.stringMatching(/is not UTF-8 text/) });
  });
});
