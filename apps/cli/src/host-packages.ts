import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Sandbox } from '@envgen/sandbox';

const execFileAsync = promisify(execFile);

/** Runs `dpkg-query` with these arguments and returns its stdout (also when it exits 1). */
export type DpkgQuery = (args: string[]) => Promise<string>;

/** `dpkg-query` on this host: what the `local` sandbox runs with (its root is the host's, read-only). */
export const hostDpkgQuery: DpkgQuery = async (args) => {
  try {
    return (await execFileAsync('dpkg-query', args)).stdout;
  } catch (error) {
    // dpkg-query exits 1 when some names are unknown but still prints the known ones.
    const stdout = (error as { stdout?: unknown }).stdout;
    return typeof stdout === 'string' ? stdout : '';
  }
};

/** `dpkg-query` inside a sandbox, e.g. the `docker` image the tests will run in. */
export function sandboxDpkgQuery(sandbox: Sandbox): DpkgQuery {
  return async (args) => (await sandbox.exec(['dpkg-query', ...args])).stdout;
}

/**
 * Debian packages of `names` not installed where the tests run. Where dpkg cannot answer
 * (no dpkg), nothing is reported missing.
 */
export async function findMissingPackages(names: readonly string[], query: DpkgQuery): Promise<string[]> {
  if (names.length === 0) return [];
  const stdout = await query(['-W', '-f=${Package} ${db:Status-Abbrev}\n', ...names]);
  if (stdout.trim() === '') return [];
  const installed = new Set<string>();
  for (const line of stdout.split('\n')) {
    const [name, status] = line.trim().split(/\s+/);
    if (name && status?.startsWith('ii')) installed.add(name.split(':')[0] ?? name);
  }
  return names.filter((name) => !installed.has(name));
}
