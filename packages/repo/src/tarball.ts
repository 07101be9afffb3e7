import { EnvgenError } from '@envgen/core';
import { runProgram } from './run-program.js';

/**
 * The member names of a tar listing that would land outside the extraction directory: absolute
 * paths and any `..` segment.
 */
export function findEscapingMembers(names: string[]): string[] {
  return names.filter((name) => name.startsWith('/') || name.split('/').includes('..'));
}

/**
 * How many leading path components to strip: 1 when every member sits under one top-level
 * directory (the usual `project-1.0/` wrapper), else 0.
 */
export function countWrapperComponents(names: string[]): number {
  const cleaned = names.map((name) => name.replace(/^(\.\/)+/, '')).filter((name) => name !== '' && name !== '.');
  const tops = new Set(cleaned.map((name) => name.split('/')[0]));
  const nested = cleaned.some((name) => name.replace(/\/$/, '').includes('/'));
  return tops.size === 1 && nested ? 1 : 0;
}

/**
 * Extracts a (compressed) tarball into `dest` with the system `tar`, stripping a single top-level
 * wrapper directory. Members with absolute paths or `..` are refused before anything is written.
 *
 * @throws EnvgenError `path-escape` naming the offending members; `repo-unavailable` when tar fails.
 */
export async function extractTarball(archive: string, dest: string): Promise<void> {
  const listing = await runProgram('tar', ['-tf', archive]);
  if (!listing.ok) throw new EnvgenError('repo-unavailable', `Cannot read the tarball ${archive}: ${listing.stderr.trim()}. Delete it and retry the download.`);
  const names = listing.stdout.split('\n').filter((name) => name !== '');
  const escaping = findEscapingMembers(names);
  if (escaping.length) {
    throw new EnvgenError('path-escape', `Refusing to extract ${archive}: ${escaping.length} member(s) would leave the target directory (${escaping.slice(0, 5).join(', ')}).`);
  }
  const strip = countWrapperComponents(names);
  const extracted = await runProgram('tar', ['-xf', archive, '-C', dest, '--no-same-owner', '--no-same-permissions', `--strip-components=${strip}`]);
  if (!extracted.ok) throw new EnvgenError('repo-unavailable', `Extracting ${archive} failed: ${extracted.stderr.trim()}.`);
}
