import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { listAptSourceFiles, readAptSources } from './apt-sources.js';
import type { AptSource } from './apt-sources.js';
import { findSourceStanzas, findSourcesOfBinary, parseChecksums, selectTestPackages } from './deb822.js';
import type { Deb822Stanza } from './deb822.js';
import { compareDebianVersions } from './debian-version.js';
import { resolveCommit } from './git.js';
import { sanitizeSegment } from './mirror-path.js';
import { runProgram } from './run-program.js';
import { snapshotTree } from './snapshot.js';
import { extractTarball } from './tarball.js';
import type { RepoSpec, ResolvedRepo } from './types.js';

/** Debian-specific options of `acquireRepo`. */
export interface DebianOptions {
  /** Archives to read `Sources` indexes from (default: this machine's apt configuration). */
  aptSources?: AptSource[];
  /** Age after which a cached `Sources` index is downloaded again, ms (default one day). */
  debianIndexMaxAgeMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const DOWNLOAD_TIMEOUT_MS = 5 * 60 * 1000;

interface SourceCandidate {
  stanza: Deb822Stanza;
  version: string;
  archive: AptSource;
}

async function download(url: string, dest: string): Promise<void> {
  const response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
  const partial = `${dest}.partial-${process.pid}`;
  await writeFile(partial, Buffer.from(await response.arrayBuffer()));
  await rename(partial, dest);
}

/** Where the decompressed `Sources` index of one archive component is cached. */
function indexPathOf(home: string, archive: AptSource, component: string): string {
  return join(home, 'debian', 'indexes', sanitizeSegment(archive.uri.replace(/^https?:\/\//, '')), sanitizeSegment(archive.suite), sanitizeSegment(component), 'Sources');
}

/** A cached index file as it was when read: a change of either means it was replaced. */
interface IndexIdentity {
  path: string;
  mtimeMs: number;
  size: number;
}

async function identifyIndex(path: string): Promise<IndexIdentity | null> {
  return stat(path).then(
    (info) => ({ path, mtimeMs: info.mtimeMs, size: info.size }),
    () => null,
  );
}

/**
 * The decompressed `Sources` index of one archive component, from `<home>/debian/indexes/…`,
 * downloaded when missing or older than `maxAgeMs`. A stale copy is used (with a note) when the
 * refresh fails; null when there is no copy at all. `identity` is set only for a fresh copy.
 */
async function loadSourcesIndex(home: string, archive: AptSource, component: string, maxAgeMs: number, logger: Logger, notes: string[]): Promise<{ text: string; identity: IndexIdentity | null } | null> {
  const indexPath = indexPathOf(home, archive, component);
  const before = await identifyIndex(indexPath);
  const age = before === null ? null : Date.now() - before.mtimeMs;
  if (age !== null && age < maxAgeMs) return { text: await readFile(indexPath, 'utf8'), identity: before };
  const url = `${archive.uri}/dists/${archive.suite}/${component}/source/Sources.xz`;
  try {
    await mkdir(dirname(indexPath), { recursive: true });
    logger.info('downloading Debian source index', { url });
    await download(url, `${indexPath}.xz`);
    const unpacked = await runProgram('xz', ['-dc', `${indexPath}.xz`]);
    if (!unpacked.ok) throw new Error(`xz -dc failed: ${unpacked.stderr.trim()}`);
    await writeFile(`${indexPath}.partial`, unpacked.stdout);
    await rename(`${indexPath}.partial`, indexPath);
    await rm(`${indexPath}.xz`, { force: true });
    return { text: unpacked.stdout, identity: await identifyIndex(indexPath) };
  } catch (error) {
    if (age !== null) {
      notes.push(`could not refresh ${url} (${describeError(error)}); using the cached copy`);
      return { text: await readFile(indexPath, 'utf8'), identity: null };
    }
    logger.warn('Debian source index unavailable', { url, error: describeError(error) });
    notes.push(`${url} unavailable: ${describeError(error)}`);
    return null;
  }
}

/**
 * What a full acquire learnt about one source package from fresh indexes, kept in
 * `<home>/debian/sources/<source>.json` so that a repeat acquire of a snapshotted version answers
 * without reading the (tens of MB of) indexes again.
 */
interface SourceRecord {
  format: 1;
  /** The indexes the versions come from, as they were then; any change invalidates the record. */
  indexes: IndexIdentity[];
  /** Every version in those indexes, newest first, with its test packages. */
  versions: { version: string; aptPackages: string[] }[];
}

function recordPathOf(home: string, source: string): string {
  return join(home, 'debian', 'sources', `${sanitizeSegment(source)}.json`);
}

async function readSourceRecord(home: string, source: string): Promise<SourceRecord | null> {
  try {
    const record = JSON.parse(await readFile(recordPathOf(home, source), 'utf8')) as Partial<SourceRecord>;
    return record.format === 1 && Array.isArray(record.indexes) && Array.isArray(record.versions) ? (record as SourceRecord) : null;
  } catch {
    return null;
  }
}

async function writeSourceRecord(home: string, source: string, record: SourceRecord): Promise<void> {
  const path = recordPathOf(home, source);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial-${process.pid}`;
  await writeFile(partial, JSON.stringify(record));
  await rename(partial, path);
}

/**
 * The version a source record picks for `spec`, if the record still describes the indexes this
 * acquire would read (same files, unchanged, not older than `maxAgeMs`); null sends the caller
 * down the full path.
 */
async function lookupSourceRecord(spec: Extract<RepoSpec, { kind: 'debian' }>, indexPaths: string[], home: string, maxAgeMs: number): Promise<SourceRecord['versions'][number] | null> {
  const record = await readSourceRecord(home, spec.source);
  if (record === null || record.indexes.length !== indexPaths.length) return null;
  const now = Date.now();
  for (const [position, path] of indexPaths.entries()) {
    const known = record.indexes[position];
    const current = await identifyIndex(path);
    if (known === undefined || current === null || known.path !== path || known.mtimeMs !== current.mtimeMs || known.size !== current.size || now - current.mtimeMs >= maxAgeMs) return null;
  }
  return (spec.version === null ? record.versions[0] : record.versions.find((entry) => entry.version === spec.version)) ?? null;
}

function tagForVersion(version: string): string {
  return `refs/tags/debian/${version.replace(/:/g, '%').replace(/~/g, '_')}`;
}

/** The upstream tarball of a source stanza: `*.orig.tar.*`, or the single tarball of a native package. */
function pickTarball(stanza: Deb822Stanza): { name: string; sha256: string } | null {
  const checksums = parseChecksums(stanza['Checksums-Sha256'] ?? '');
  const names = [...checksums.keys()];
  const orig = names.find((name) => /\.orig\.tar\.[a-z0-9]+$/.test(name));
  const native = names.find((name) => /\.tar\.[a-z0-9]+$/.test(name) && !/\.debian\.tar\./.test(name) && !/\.orig-[^.]+\.tar\./.test(name));
  const name = orig ?? native;
  const entry = name === undefined ? undefined : checksums.get(name);
  return name === undefined || entry === undefined ? null : { name, sha256: entry.sha256 };
}

async function fetchVerified(url: string, dest: string, expected: string, label: string): Promise<void> {
  try {
    await download(url, dest);
  } catch (error) {
    throw new EnvgenError('repo-unavailable', `Cannot download the upstream tarball of ${label} from ${url}: ${describeError(error)}. Some Debian sources have no tarball on the mirror; try another version or check the network.`, { cause: error });
  }
  const actual = createHash('sha256').update(await readFile(dest)).digest('hex');
  if (actual !== expected) {
    throw new EnvgenError('repo-unavailable', `The tarball ${url} of ${label} has SHA256 ${actual}, the index says ${expected}; the mirror may be mid-sync, retry later.`);
  }
}

/**
 * Acquires `debian:SOURCE[=VERSION]` without root or deb-src lines: reads the archives from the
 * apt configuration, downloads `dists/<suite>/<component>/source/Sources.xz` (cached under
 * `<home>/debian/`, refreshed daily), picks the stanza (highest version unless one is given),
 * downloads and SHA256-verifies the upstream tarball, extracts it safely and snapshots it into
 * `<home>/mirrors/debian/<source>.git` as the tag `debian/<version>`. A version already snapshotted
 * is not downloaded again, and while the indexes are unchanged and fresh it is answered from a
 * small per-source record without reading them. `aptPackages` come from Build-Depends(-Indep)
 * minus build tooling.
 */
export async function acquireDebianSource(spec: Extract<RepoSpec, { kind: 'debian' }>, options: DebianOptions & { home: string; logger?: Logger }): Promise<ResolvedRepo> {
  const logger = options.logger ?? silentLogger;
  const notes: string[] = [];
  const archives = options.aptSources ?? (await readAptSources(await listAptSourceFiles()));
  if (archives.length === 0) {
    throw new EnvgenError('repo-unavailable', `Cannot fetch ${spec.raw}: no HTTP Debian archive is configured in /etc/apt/sources.list or /etc/apt/sources.list.d/.`);
  }

  const maxAgeMs = options.debianIndexMaxAgeMs ?? DAY_MS;
  const mirror = join(options.home, 'mirrors', 'debian', `${sanitizeSegment(spec.source)}.git`);
  const indexPaths = archives.flatMap((archive) => archive.components.map((component) => indexPathOf(options.home, archive, component)));
  const known = await lookupSourceRecord(spec, indexPaths, options.home, maxAgeMs);
  const knownCommit = known === null ? null : await resolveCommit(mirror, tagForVersion(known.version));
  if (known !== null && knownCommit !== null) {
    return { spec, owner: 'debian', name: spec.source, mirror, aptPackages: known.aptPackages, commit: knownCommit, submodules: [], notes };
  }

  const candidates: SourceCandidate[] = [];
  const indexes: string[] = [];
  const identities: IndexIdentity[] = [];
  for (const archive of archives) {
    for (const component of archive.components) {
      const index = await loadSourcesIndex(options.home, archive, component, maxAgeMs, logger, notes);
      if (index === null) continue;
      indexes.push(index.text);
      if (index.identity !== null) identities.push(index.identity);
      for (const stanza of findSourceStanzas(index.text, spec.source)) {
        const version = stanza['Version'];
        if (version && !candidates.some((candidate) => candidate.version === version)) candidates.push({ stanza, version, archive });
      }
    }
  }
  const searched = archives.map((archive) => `${archive.uri} ${archive.suite}`).join(', ');
  if (indexes.length === 0) {
    throw new EnvgenError('repo-unavailable', `Cannot fetch ${spec.raw}: no Debian source index could be downloaded (${notes.join('; ')}). Check the network.`);
  }
  if (candidates.length === 0) {
    const owners = [...new Set(indexes.flatMap((index) => findSourcesOfBinary(index, spec.source)))];
    const hint = owners.length ? ` "${spec.source}" is a binary package built by the source ${owners.map((owner) => `debian:${owner}`).join(', ')}.` : ' Check the source package name (`apt-cache showsrc NAME` shows it on a machine with deb-src lines).';
    throw new EnvgenError('repo-unavailable', `Debian has no source package "${spec.source}" in ${searched}.${hint}`);
  }
  candidates.sort((a, b) => compareDebianVersions(b.version, a.version));
  if (identities.length === indexPaths.length) {
    const versions = candidates.map((candidate) => ({ version: candidate.version, aptPackages: selectTestPackages(candidate.stanza) }));
    await writeSourceRecord(options.home, spec.source, { format: 1, indexes: identities, versions });
  }
  const available = candidates.map((candidate) => candidate.version).join(', ');
  const chosen = spec.version === null ? candidates[0] : candidates.find((candidate) => candidate.version === spec.version);
  if (chosen === undefined) {
    throw new EnvgenError('repo-unavailable', `debian:${spec.source} has no version ${spec.version ?? ''} in ${searched}; available: ${available}. Use debian:${spec.source}=<version> with one of them, or no version for the newest.`);
  }

  const tag = tagForVersion(chosen.version);
  const base = { spec, owner: 'debian', name: spec.source, mirror, aptPackages: selectTestPackages(chosen.stanza), submodules: [] };
  const cached = await resolveCommit(mirror, tag);
  if (cached !== null) return { ...base, commit: cached, notes };

  const tarball = pickTarball(chosen.stanza);
  const directory = chosen.stanza['Directory'];
  if (tarball === null || directory === undefined) {
    throw new EnvgenError('repo-unavailable', `debian:${spec.source} ${chosen.version} lists no source tarball; try another version (${available}).`);
  }
  const label = `debian:${spec.source} ${chosen.version}`;
  const downloads = join(options.home, 'debian', 'downloads');
  await mkdir(downloads, { recursive: true });
  const work = await mkdtemp(join(downloads, `${sanitizeSegment(spec.source)}-`));
  try {
    const archivePath = join(work, tarball.name);
    logger.info('downloading Debian source tarball', { source: spec.source, version: chosen.version, file: tarball.name });
    await fetchVerified(`${chosen.archive.uri}/${directory}/${tarball.name}`, archivePath, tarball.sha256, label);
    const tree = join(work, 'tree');
    await mkdir(tree);
    await extractTarball(archivePath, tree);
    // refs/heads/main (the mirror's HEAD) follows the newest version acquired.
    const refs = chosen === candidates[0] ? [tag, 'refs/heads/main'] : [tag];
    const commit = await snapshotTree(tree, mirror, { message: `debian:${spec.source} ${chosen.version} (${tarball.name})`, refs });
    return { ...base, commit, notes: [...notes, `upstream tree of ${label} from ${tarball.name}`] };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
