import { mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BundleFiles } from '@envgen/core';
import { readBundle, writeBundle } from './bundle-files.js';

const FILES: BundleFiles = {
  'bug_inject.diff': 'diff --git a/x.py b/x.py\n',
  'test_weaken.diff': '',
  'test_files.txt': 'tests/test_x.py\n',
  'test_script.sh': '#!/bin/bash\necho hi\n',
  'test_parser.py': 'print("{}")\n',
};

describe('writeBundle and readBundle', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  async function scratch(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'envgen-bundle-io-'));
    dirs.push(dir);
    return dir;
  }

  it('round-trips the five files, replacing an existing bundle whole', async () => {
    const parent = await scratch();
    const dir = join(parent, 'b1');
    await writeBundle(dir, FILES);
    await writeBundle(dir, { ...FILES, 'test_weaken.diff': 'changed\n' });
    expect(await readBundle(dir)).toEqual({ ...FILES, 'test_weaken.diff': 'changed\n' });
    expect((await stat(join(dir, 'test_script.sh'))).mode & 0o111).not.toBe(0);
    expect(await readdir(parent)).toEqual(['b1']);
  });

  it('names a missing and an extra file', async () => {
    const dir = join(await scratch(), 'b');
    await writeBundle(dir, FILES);
    await rm(join(dir, 'test_parser.py'));
    await writeFile(join(dir, 'notes.md'), 'x');
    await expect(readBundle(dir)).rejects.toThrow(/missing test_parser\.py; unexpected notes\.md/);
  });

  it('refuses oversized files and symlinks', async () => {
    const dir = join(await scratch(), 'b');
    await writeBundle(dir, FILES);
    await expect(readBundle(dir, { maxFileBytes: 10 })).rejects.toThrow(/bug_inject\.diff is 25 bytes/);
    await rm(join(dir, 'test_files.txt'));
    await symlink('/etc/hostname', join(dir, 'test_files.txt'));
    await expect(readBundle(dir)).rejects.toThrow(/test_files\.txt is not a regular file/);
  });

  it('says what to pass when the directory does not exist', async () => {
    await expect(readBundle(join(await scratch(), 'nope'))).rejects.toThrow(/Cannot read the bundle directory/);
  });
});
