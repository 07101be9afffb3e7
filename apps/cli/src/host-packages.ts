import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { compareDebianVersions } from '@envgen/repo';
import type { RequiredVersion } from '@envgen/repo';
import type { Sandbox } from '@envgen/sandbox';

const execFileAsync = promisify(execFile);

/** Runs `dpkg-query` with these arguments and returns its stdout (also when it exits 1). */
export type DpkgQuery = (args: string[]) => Promise<string>;

/** Runs `apt-cache` with these arguments and returns its stdout. */
export type AptCacheQuery = (args: string[]) => Promise<string>;

/** Runs `command` on this host and returns its stdout, also when it exits non-zero (or '' when it cannot run). */
async function hostStdout(command: string, args: string[]): Promise<string> {
  try {
    return (await execFileAsync(command, args)).stdout;
  } catch (error) {
    // dpkg-query exits 1 when some names are unknown but still prints the known ones.
    const stdout = (error as { stdout?: unknown }).stdout;
    return typeof stdout === 'string' ? stdout : '';
  }
}

/** `dpkg-query` on this host: what the `local` sandbox runs with (its root is the host's, read-only). */
export const hostDpkgQuery: DpkgQuery = (args) => hostStdout('dpkg-query', args);

/** `apt-cache` on this host: the archive `apt-get install` would install from. */
export const hostAptCache: AptCacheQuery = (args) => hostStdout('apt-cache', args);

/** `dpkg-query` inside a sandbox, e.g. the `docker` image the tests will run in. */
export function sandboxDpkgQuery(sandbox: Sandbox): DpkgQuery {
  return async (args) => (await sandbox.exec(['dpkg-query', ...args])).stdout;
}

/** `apt-cache` inside a sandbox, e.g. the `docker` image the tests will run in. */
export function sandboxAptCache(sandbox: Sandbox): AptCacheQuery {
  return async (args) => (await sandbox.exec(['apt-cache', ...args])).stdout;
}

/**
 * The packages of `names` that Debian's archive, as apt knows it there, has no candidate
 * for (`apt-cache policy`): no `apt-get install` gets them (dh-python's map of distribution
 * names also names packages of later Debian releases). Where apt has no package lists (no
 * candidate even for python3), none is reported.
 */
export async function findUnavailablePackages(names: readonly string[], query: AptCacheQuery): Promise<string[]> {
  if (names.length === 0) return [];
  const candidates = new Set<string>();
  let current: string | null = null;
  for (const line of (await query(['policy', 'python3', ...names])).split('\n')) {
    const header = /^(\S+):$/.exec(line);
    if (header !== null) current = header[1] ?? null;
    const candidate = /^\s+Candidate:\s+(\S+)/.exec(line);
    if (candidate !== null && current !== null && candidate[1] !== '(none)') candidates.add(current);
  }
  if (!candidates.has('python3')) return [];
  return names.filter((name) => !candidates.has(name));
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

/** Of `missing`, those `apt-get install` can get (not among `unavailable`). */
export function installablePackages(missing: readonly string[], unavailable: readonly string[]): string[] {
  return missing.filter((name) => !unavailable.includes(name));
}

/** A declared lower bound the installed package does not meet, with the version installed. */
export interface OlderPackage extends RequiredVersion {
  /** The installed package's Debian version (`0.8.3-1`). */
  installed: string;
}

/** The upstream part of a Debian version: no epoch (`1:`), no Debian revision (`-1`). */
function upstreamVersion(version: string): string {
  const noEpoch = version.replace(/^\d+:/, '');
  const revision = noEpoch.lastIndexOf('-');
  return revision > 0 ? noEpoch.slice(0, revision) : noEpoch;
}

/**
 * Of the lower bounds the project declares (`parso>=0.8.6`), those the Debian packages
 * installed where the tests run do not meet (python3-parso 0.8.3-1). A package not installed
 * is none of them: {@link findMissingPackages} names it.
 */
export async function findOlderPackages(required: readonly RequiredVersion[], query: DpkgQuery): Promise<OlderPackage[]> {
  if (required.length === 0) return [];
  const installed = new Map<string, string>();
  for (const line of (await query(['-W', '-f=${Package} ${Version} ${db:Status-Abbrev}\n', ...required.map((entry) => entry.package)])).split('\n')) {
    const [name, version, status] = line.trim().split(/\s+/);
    if (name && version && status?.startsWith('ii')) installed.set(name.split(':')[0] ?? name, version);
  }
  return required.flatMap((entry) => {
    const version = installed.get(entry.package);
    return version !== undefined && compareDebianVersions(upstreamVersion(version), entry.version) < 0 ? [{ ...entry, installed: version }] : [];
  });
}

/** `parso>=0.8.6 (python3-parso 0.8.3-1 installed)`, comma-separated. */
export function describeOlder(older: readonly OlderPackage[]): string {
  return older.map((entry) => `${entry.requirement} (${entry.package} ${entry.installed} installed)`).join(', ');
}
