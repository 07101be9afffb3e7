import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { BUNDLE_FILE_NAMES, ERROR_CODES, EnvgenError, describeError } from '@envgen/core';
import type { BundleFiles } from '@envgen/core';

/** Largest bundle file {@link readBundle} accepts by default. */
export const DEFAULT_MAX_BUNDLE_FILE_BYTES = 8 * 1024 ** 2;

/** Options of {@link readBundle}. */
export interface ReadBundleOptions {
  /** Largest size of any one file, in bytes (default {@link DEFAULT_MAX_BUNDLE_FILE_BYTES}). */
  maxFileBytes?: number;
  /** Other file names the directory may hold beside the five (e.g. an export's `metadata.json`); they are not read. */
  alongside?: readonly string[];
}

/**
 * Reads a bundle directory: exactly the five files of DESIGN.md (and any `alongside`), each a regular file (not a
 * symlink) of at most `maxFileBytes`. Throws `store-corrupt` naming the missing, extra or
 * oversized file.
 */
export async function readBundle(dir: string, options: ReadBundleOptions = {}): Promise<BundleFiles> {
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_BUNDLE_FILE_BYTES;
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    throw new EnvgenError(ERROR_CODES.storeCorrupt, `Cannot read the bundle directory ${dir} (${describeError(error)}): pass a directory holding ${BUNDLE_FILE_NAMES.join(', ')}.`, { cause: error });
  }
  const expected = new Set<string>([...BUNDLE_FILE_NAMES, ...(options.alongside ?? [])]);
  const extra = entries.filter((entry) => !expected.has(entry)).sort();
  const missing = BUNDLE_FILE_NAMES.filter((name) => !entries.includes(name));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [missing.length > 0 ? `missing ${missing.join(', ')}` : '', extra.length > 0 ? `unexpected ${extra.join(', ')}` : ''].filter(Boolean);
    throw new EnvgenError(ERROR_CODES.storeCorrupt, `The bundle ${dir} is not a bundle: ${parts.join('; ')}. A bundle holds exactly ${BUNDLE_FILE_NAMES.join(', ')}.`);
  }
  const files: Partial<BundleFiles> = {};
  for (const name of BUNDLE_FILE_NAMES) {
    const path = join(dir, name);
    const stats = await lstat(path);
    if (!stats.isFile()) throw new EnvgenError(ERROR_CODES.storeCorrupt, `The bundle file ${path} is not a regular file (symlinks are refused): replace it with the file itself.`);
    if (stats.size > maxFileBytes) {
      throw new EnvgenError(ERROR_CODES.storeCorrupt, `The bundle file ${path} is ${stats.size} bytes, more than the ${maxFileBytes} allowed: shrink it.`);
    }
    files[name] = await readFile(path, 'utf8');
  }
  return files as BundleFiles;
}

/**
 * Writes a bundle atomically: the five files go to a temporary sibling directory that is then
 * renamed to `dir` (an existing bundle at `dir` is replaced whole). test_script.sh is executable.
 */
export async function writeBundle(dir: string, files: BundleFiles): Promise<void> {
  const target = resolve(dir);
  await mkdir(dirname(target), { recursive: true });
  const staging = join(dirname(target), `.${basename(target)}.tmp-${randomUUID()}`);
  await mkdir(staging);
  try {
    for (const name of BUNDLE_FILE_NAMES) await writeFile(join(staging, name), files[name]);
    await chmod(join(staging, 'test_script.sh'), 0o755);
    try {
      await rename(staging, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      // Replace an existing bundle: move it aside, move the new one in, drop the old one.
      const old = join(dirname(target), `.${basename(target)}.old-${randomUUID()}`);
      await rename(target, old);
      await rename(staging, target);
      await rm(old, { recursive: true, force: true });
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}
