import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { checkRepoPath } from './repo-path.js';
import type { PatchedFile } from './types.js';

/** A patch target that may not be written, with why. */
export interface UnsafeTarget {
  path: string;
  reason: 'unsafe-path' | 'symlink' | 'outside-root' | 'not-a-file';
  message: string;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function checkTarget(rootReal: string, path: string): Promise<UnsafeTarget | null> {
  const unsafe = checkRepoPath(path);
  if (unsafe) return { path, reason: 'unsafe-path', message: unsafe.message };
  const segments = path.split('/');
  let current = rootReal;
  for (const [i, segment] of segments.entries()) {
    current = join(current, segment);
    let stats;
    try {
      stats = await lstat(current);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    const shown = segments.slice(0, i + 1).join('/');
    if (stats.isSymbolicLink()) return { path, reason: 'symlink', message: `${shown} is a symlink in the repo; patches never write through symlinks` };
    const last = i === segments.length - 1;
    if (last && !stats.isFile()) return { path, reason: 'not-a-file', message: `${path} exists but is not a regular file` };
    if (!last && !stats.isDirectory()) return { path, reason: 'not-a-file', message: `${shown} is not a directory` };
  }
  const real = await realpath(current);
  if (real !== rootReal && !real.startsWith(`${rootReal}${sep}`)) {
    return { path, reason: 'outside-root', message: `${path} resolves to ${real}, outside the repo` };
  }
  return null;
}

/**
 * The targets among repo-relative `paths` that a patch may not touch under `root`: unsafe
 * paths, a symlink at the path or at any directory on the way, something other than a regular
 * file, or a path resolving outside `root`. Missing paths are fine (a patch may create them).
 */
export async function findUnsafeTargets(root: string, paths: readonly string[]): Promise<UnsafeTarget[]> {
  const rootReal = await realpath(root);
  const unsafe: UnsafeTarget[] = [];
  for (const path of paths) {
    const problem = await checkTarget(rootReal, path);
    if (problem) unsafe.push(problem);
  }
  return unsafe;
}

/**
 * Writes patched files under `root` (e.g. {@link applyPatch}'s `files`): each file is written to
 * a temporary name beside it and renamed over the target (keeping the old file's mode), deleted
 * files are removed. Every target is checked first with {@link findUnsafeTargets}; any unsafe
 * target throws `path-escape` before anything is written.
 */
export async function writePatchedFiles(root: string, files: readonly PatchedFile[]): Promise<void> {
  const unsafe = await findUnsafeTargets(root, files.map((file) => file.path));
  if (unsafe.length > 0) {
    throw new EnvgenError(ERROR_CODES.pathEscape, `Refusing to write patched files: ${unsafe.map((target) => target.message).join('; ')}.`);
  }
  const rootReal = await realpath(root);
  for (const file of files) {
    const target = join(rootReal, file.path);
    if (file.after === null) {
      await rm(target, { force: true });
      continue;
    }
    let mode = 0o644;
    try {
      mode = (await lstat(target)).mode & 0o7777;
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
    await mkdir(dirname(target), { recursive: true });
    const temporary = join(dirname(target), `.envgen-patch-${randomUUID()}`);
    try {
      await writeFile(temporary, file.after, { flag: 'wx' });
      await chmod(temporary, mode);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}
