import { execFile } from 'node:child_process';
import { constants, lstatSync, readdirSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readdir, readFile, readlink, realpath, rm, symlink } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { EnvgenError } from '@envgen/core';
import type { MutatedFile } from './types.js';

const execFileAsync = promisify(execFile);

/** A file of a candidate with its clean content. */
export interface ChangedFile {
  path: string;
  before: string;
  after: string;
}

/** The candidate's files with their clean contents, or why they cannot be applied. */
export type ResolvedFiles = { ok: true; files: ChangedFile[] } | { ok: false; detail: string };

/**
 * Checks that every path is a repo-relative path to an existing regular file of `worktree`
 * (no absolute path, no `..`, no symlink on the way) and reads its clean content. A bad
 * path is the candidate's fault, so it is data (`apply-failed`), not an exception.
 */
export async function resolveCandidateFiles(worktree: string, files: readonly MutatedFile[]): Promise<ResolvedFiles> {
  if (files.length === 0) return { ok: false, detail: 'the candidate changes no file' };
  const root = await realpath(worktree);
  const seen = new Set<string>();
  const resolved: ChangedFile[] = [];
  for (const file of files) {
    const normal = posix.normalize(file.path);
    if (file.path === '' || posix.isAbsolute(file.path) || normal.startsWith('../') || normal === '..' || normal === '.git' || normal.startsWith('.git/')) {
      return { ok: false, detail: `path "${file.path}" leaves the repo or names its git data` };
    }
    if (seen.has(normal)) return { ok: false, detail: `path "${file.path}" is listed twice` };
    seen.add(normal);
    const host = hostPath(root, normal);
    let real: string;
    try {
      real = await realpath(host);
    } catch {
      return { ok: false, detail: `file "${file.path}" does not exist in the repo` };
    }
    if (real !== host || !(await lstat(host)).isFile()) {
      return { ok: false, detail: `path "${file.path}" is not a regular file of the repo (symlink or directory)` };
    }
    resolved.push({ path: normal, before: await readFile(host, 'utf8'), after: file.after });
  }
  return { ok: true, files: resolved };
}

/** Copies a tree without its `.git` (tests get the files, never the repository's git data). */
export async function copyTree(source: string, destination: string): Promise<void> {
  await mkdir(destination, { recursive: true });
  const entries = (await readdir(source)).filter((name) => name !== '.git');
  if (entries.length === 0) return;
  await execFileAsync('cp', ['-a', '--reflink=auto', ...entries.map((name) => join(source, name)), destination]);
}

/** One entry of a {@link snapshotTree}: enough to notice any write, rename or replacement. */
export type EntryStamp = string;

/** The stamp of one path: type, inode, size and modification time. */
export function stampPath(path: string): EntryStamp {
  const stats = lstatSync(path);
  const type = stats.isDirectory() ? 'd' : stats.isFile() ? 'f' : stats.isSymbolicLink() ? 'l' : 'o';
  return `${type}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/**
 * Every path under `root` (not following symlinks) with its type, inode, size and
 * modification time, to notice what a test run created, deleted or changed. Synchronous:
 * it runs after every warm run, and a walk of a few hundred entries costs a tenth of the
 * processor time through the synchronous calls that it does through promises and the
 * thread pool (3 ms against 30 ms on a tree of 300 entries).
 */
export function snapshotTree(root: string): Map<string, EntryStamp> {
  const stamps = new Map<string, EntryStamp>();
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir)) {
      const rel = prefix === '' ? name : `${prefix}/${name}`;
      const stamp = stampPath(join(dir, name));
      stamps.set(rel, stamp);
      if (stamp.startsWith('d:')) walk(join(dir, name), rel);
    }
  };
  walk(root, '');
  return stamps;
}

/** Paths whose stamps differ between two snapshots (added, removed or changed), sorted. */
export function diffSnapshots(before: ReadonlyMap<string, EntryStamp>, after: ReadonlyMap<string, EntryStamp>): string[] {
  const changed = new Set<string>();
  for (const [path, stamp] of before) if (after.get(path) !== stamp) changed.add(path);
  for (const path of after.keys()) if (!before.has(path)) changed.add(path);
  return [...changed].sort();
}

/** Host path of a repo-relative path (already checked by {@link resolveCandidateFiles}). */
export function hostPath(root: string, path: string): string {
  return join(root, ...path.split('/'));
}

/**
 * Overwrites a regular file in place (same inode) without following a symlink, in its
 * real directory: code that ran in the tree may have replaced the file or a directory
 * above it with a link to somewhere outside.
 */
export async function overwriteFile(path: string, content: string): Promise<void> {
  if ((await realpath(dirname(path))) !== dirname(path)) {
    throw new EnvgenError('path-escape', `${dirname(path)} is no longer a plain directory of the tree; rebuild the tree copy.`);
  }
  const handle = await open(path, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/** Whether `path`'s directory is still a plain directory of the tree (no link on the way). */
async function inPlainDirectory(path: string): Promise<boolean> {
  return (await realpath(dirname(path)).catch(() => null)) === dirname(path);
}

/**
 * Puts the `paths` a run changed in `tree` (from {@link diffSnapshots} against `clean`) back
 * as they are in `source`, the clean checkout: what the run created is removed, files it
 * wrote or removed are copied back. Returns false where that cannot be done in place (a
 * directory replaced or removed, a path now behind a link): rebuild the copy then.
 */
export async function restoreTree(tree: string, source: string, clean: ReadonlyMap<string, EntryStamp>, paths: readonly string[]): Promise<boolean> {
  const gone: string[] = [];
  for (const path of paths) {
    if (gone.some((removed) => path.startsWith(`${removed}/`))) continue;
    const host = hostPath(tree, path);
    if (!(await inPlainDirectory(host))) return false;
    const was = clean.get(path);
    const now = await lstat(host).catch(() => null);
    if (was === undefined) {
      await rm(host, { recursive: true, force: true });
      gone.push(path);
      continue;
    }
    const type = was.slice(0, 1);
    if (type === 'd') {
      if (now === null || !now.isDirectory()) return false;
      continue;
    }
    if (now !== null && now.isDirectory()) return false;
    const original = hostPath(source, path);
    if (type === 'l') {
      if (now !== null) await rm(host, { force: true });
      await symlink(await readlink(original), host);
    } else if (type === 'f') {
      if (now !== null && !now.isFile()) await rm(host, { force: true });
      await copyFile(original, host);
      await chmod(host, (await lstat(original)).mode & 0o7777);
    } else {
      return false;
    }
  }
  return true;
}

/** Whether two snapshots hold the same paths with the same types and sizes. */
export function sameShape(a: ReadonlyMap<string, EntryStamp>, b: ReadonlyMap<string, EntryStamp>): boolean {
  if (a.size !== b.size) return false;
  const shape = (stamp: EntryStamp): string => {
    const [type, , size] = stamp.split(':');
    return type === 'd' ? 'd' : `${type}:${size}`;
  };
  for (const [path, stamp] of a) {
    const other = b.get(path);
    if (other === undefined || shape(other) !== shape(stamp)) return false;
  }
  return true;
}
