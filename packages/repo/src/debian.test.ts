import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AptSource } from './apt-sources.js';
import { acquireDebianSource } from './debian.js';
import { parseRepoSpec } from './spec.js';

// A tiny Debian archive served over real HTTP: dists/stable/main/source/Sources.xz and pool/.
const root = mkdtempSync(join(tmpdir(), 'envgen-debian-'));
const archiveDir = join(root, 'archive');
let server: Server;
let archive: AptSource;
let requests: string[] = [];

function tarball(name: string, members: Record<string, string>): { file: string; sha256: string; size: number } {
  const path = join(archiveDir, 'pool', 'main', 'd', 'demo', name);
  mkdirSync(dirname(path), { recursive: true });
  const script = `import io, json, sys, tarfile
with tarfile.open(sys.argv[1], 'w:gz') as tar:
    for name, text in json.loads(sys.argv[2]).items():
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mtime = 0
        tar.addfile(info, io.BytesIO(data))
`;
  execFileSync('/usr/bin/python3', ['-c', script, path, JSON.stringify(members)]);
  const bytes = readFileSync(path);
  return { file: name, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
}

function stanza(source: string, version: string, file: { file: string; sha256: string; size: number }, buildDepends: string): string {
  return [
    `Package: ${source}`,
    `Binary: python3-${source}`,
    `Version: ${version}`,
    `Build-Depends: ${buildDepends}`,
    'Checksums-Sha256:',
    ` ${file.sha256} ${file.size} ${file.file}`,
    ` ${'0'.repeat(64)} 100 ${source}_${version}.debian.tar.xz`,
    `Directory: pool/main/d/demo`,
    '',
  ].join('\n');
}

beforeAll(async () => {
  const v1 = tarball('demo_1.0.orig.tar.gz', { 'demo-1.0/demo.py': 'V = 1\n', 'demo-1.0/test_demo.py': 'def test_v(): pass\n' });
  const v2 = tarball('demo_2.0.orig.tar.gz', { 'demo-2.0/demo.py': 'V = 2\n', 'demo-2.0/test_demo.py': 'def test_v(): pass\n' });
  const evil = tarball('evil_1.0.orig.tar.gz', { 'evil-1.0/ok.py': '', 'evil-1.0/../../escaped.py': '' });
  const tampered = { ...v1, sha256: 'f'.repeat(64) };
  const sources = [
    stanza('demo', '1.0-1', v1, 'debhelper-compat (= 13), dh-python, python3-all, python3-yaml'),
    stanza('demo', '2.0-1', v2, 'debhelper-compat (= 13), python3-setuptools, python3-yaml, python3-requests [!hurd-any] <!nocheck>'),
    stanza('evil', '1.0-1', evil, 'python3-all'),
    stanza('tampered', '1.0-1', tampered, 'python3-all'),
  ].join('\n');
  const index = join(archiveDir, 'dists', 'stable', 'main', 'source', 'Sources');
  mkdirSync(dirname(index), { recursive: true });
  writeFileSync(index, sources);
  execFileSync('xz', ['-f', index]);
  server = createServer((request, response) => {
    requests.push(request.url ?? '');
    try {
      response.end(readFileSync(join(archiveDir, (request.url ?? '').replace(/\.\./g, ''))));
    } catch {
      response.statusCode = 404;
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  archive = { uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, suite: 'stable', components: ['main'] };
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

function spec(raw: string): Extract<ReturnType<typeof parseRepoSpec>, { kind: 'debian' }> {
  const parsed = parseRepoSpec(raw);
  if (parsed.kind !== 'debian') throw new Error(raw);
  return parsed;
}

describe('acquireDebianSource over HTTP', () => {
  const home = join(root, 'home');

  it('takes the highest version, its test packages, and caches index and snapshot', async () => {
    requests = [];
    const repo = await acquireDebianSource(spec('debian:demo'), { home, aptSources: [archive] });
    expect(repo).toMatchObject({ owner: 'debian', name: 'demo', aptPackages: ['python3-pytest', 'python3-requests', 'python3-yaml'] });
    expect(execFileSync('git', ['--git-dir', repo.mirror, 'show', `${repo.commit}:demo.py`], { encoding: 'utf8' })).toBe('V = 2\n');
    expect(execFileSync('git', ['--git-dir', repo.mirror, 'log', '-1', '--format=%s', 'HEAD'], { encoding: 'utf8' }).trim()).toBe('debian:demo 2.0-1 (demo_2.0.orig.tar.gz)');
    expect(requests).toEqual(['/dists/stable/main/source/Sources.xz', '/pool/main/d/demo/demo_2.0.orig.tar.gz']);

    requests = [];
    const again = await acquireDebianSource(spec('debian:demo'), { home, aptSources: [archive] });
    expect(again.commit).toBe(repo.commit);
    expect(requests).toEqual([]);
  });

  it('answers a repeat from the per-source record until the index changes', async () => {
    const recordPath = join(home, 'debian', 'sources', 'demo.json');
    const record = JSON.parse(readFileSync(recordPath, 'utf8')) as { versions: { version: string; aptPackages: string[] }[] };
    expect(record.versions.map((entry) => entry.version)).toEqual(['2.0-1', '1.0-1']);
    // A marker only the record holds: seeing it proves the index was not read.
    record.versions[0] = { version: '2.0-1', aptPackages: ['marker'] };
    writeFileSync(recordPath, JSON.stringify({ ...record }));
    requests = [];
    expect((await acquireDebianSource(spec('debian:demo'), { home, aptSources: [archive] })).aptPackages).toEqual(['marker']);
    expect((await acquireDebianSource(spec('debian:demo=2.0-1'), { home, aptSources: [archive] })).aptPackages).toEqual(['marker']);
    expect(requests).toEqual([]);

    const indexDir = join(home, 'debian', 'indexes');
    const [host] = readdirSync(indexDir);
    const index = join(indexDir, host ?? '', 'stable', 'main', 'Sources');
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(index, earlier, earlier);
    const reread = await acquireDebianSource(spec('debian:demo'), { home, aptSources: [archive] });
    expect(reread.aptPackages).toEqual(['python3-pytest', 'python3-requests', 'python3-yaml']);
    expect(requests).toEqual([]);
    expect(readFileSync(recordPath, 'utf8')).not.toContain('marker');
  });

  it('takes a pinned older version', async () => {
    const repo = await acquireDebianSource(spec('debian:demo=1.0-1'), { home, aptSources: [archive] });
    expect(execFileSync('git', ['--git-dir', repo.mirror, 'show', `${repo.commit}:demo.py`], { encoding: 'utf8' })).toBe('V = 1\n');
    expect(repo.aptPackages).toEqual(['python3-pytest', 'python3-yaml']);
  });

  it('refuses a tarball whose members escape', async () => {
    const error = await acquireDebianSource(spec('debian:evil'), { home, aptSources: [archive] }).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'path-escape')).toBe(true);
    expect((error as Error).message).toContain('evil-1.0/../../escaped.py');
  });

  it('refuses a tarball whose checksum does not match', async () => {
    const error = await acquireDebianSource(spec('debian:tampered'), { home, aptSources: [archive] }).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
    expect((error as Error).message).toContain('SHA256');
  });

  it('falls back to the cached index when a refresh fails, and says why when there is none', async () => {
    await new Promise((resolve) => server.close(resolve));
    const stale = await acquireDebianSource(spec('debian:demo'), { home, aptSources: [archive], debianIndexMaxAgeMs: 0 });
    expect(stale.notes.some((note) => note.includes('using the cached copy'))).toBe(true);
    const error = await acquireDebianSource(spec('debian:demo'), { home: join(root, 'empty-home'), aptSources: [archive] }).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
    expect((error as Error).message).toContain('no Debian source index could be downloaded');
  });
});
