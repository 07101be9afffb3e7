import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BUNDLE_FILE_NAMES, EnvgenError, describeError, hashValue, isProcessAlive } from '@envgen/core';
import type { BundleFiles } from '@envgen/core';

/** Staging directories are `.tmp-<pid>-<random>`, so a sweep can tell a dead writer's from a live one's. */
const STAGING_PREFIX = '.tmp-';

/** An instance id names a directory, so it must be one plain path segment. */
const SAFE_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Throws unless `id` can safely name a bundle directory. */
export function assertSafeId(id: string): void {
  if (!SAFE_ID.test(id) || id.includes('..')) {
    throw new EnvgenError('path-escape', `instance id ${JSON.stringify(id)} is not a plain directory name; make ids with makeInstanceId`);
  }
}

/**
 * Writes the five bundle files into a fresh staging directory under `bundlesDir`; the caller
 * renames it into place. Returns the staging path. No fsync: a killed process loses nothing
 * the kernel already holds, and an OS crash is caught on read by the bundle hash in the index
 * (an fsync per file cost ~36 ms per instance here, more than everything else together).
 */
export function stageBundle(bundlesDir: string, files: BundleFiles): string {
  const staging = join(bundlesDir, `${STAGING_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  mkdirSync(staging);
  try {
    for (const name of BUNDLE_FILE_NAMES) {
      const content = files[name];
      if (typeof content !== 'string') {
        throw new EnvgenError('internal', `bundle file ${name} is missing; a bundle has exactly ${BUNDLE_FILE_NAMES.join(', ')}`);
      }
      writeFileSync(join(staging, name), content);
    }
    return staging;
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/** The hash of a bundle's five files, stored in the index so a read can prove it got them whole. */
export function hashBundle(files: BundleFiles): string {
  return hashValue(BUNDLE_FILE_NAMES.map((name) => [name, files[name]]));
}

/** Reads a bundle directory written by {@link stageBundle}. */
export function readBundleDir(dir: string, id: string): BundleFiles {
  const read = (name: (typeof BUNDLE_FILE_NAMES)[number]): string => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch (error) {
      throw new EnvgenError(
        'store-corrupt',
        `instance ${id} is indexed but its bundle file ${join(dir, name)} cannot be read (${describeError(error)}); re-run envgen inject for its repo to rewrite it`,
        { cause: error },
      );
    }
  };
  return {
    'bug_inject.diff': read('bug_inject.diff'),
    'test_weaken.diff': read('test_weaken.diff'),
    'test_files.txt': read('test_files.txt'),
    'test_script.sh': read('test_script.sh'),
    'test_parser.py': read('test_parser.py'),
  };
}


/** True for a staging directory whose writing process has died (killed mid-write). */
export function isAbandonedStaging(name: string): boolean {
  if (!name.startsWith(STAGING_PREFIX)) return false;
  const pid = Number(name.slice(STAGING_PREFIX.length).split('-')[0]);
  return !Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid);
}

/** True when `name` is a staging directory rather than a bundle. */
export function isStaging(name: string): boolean {
  return name.startsWith(STAGING_PREFIX);
}
