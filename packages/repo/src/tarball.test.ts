import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, describe, expect, it } from 'vitest';
import { countWrapperComponents, extractTarball, findEscapingMembers } from './tarball.js';

const root = mkdtempSync(join(tmpdir(), 'envgen-tar-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes a tar.gz whose members have exactly the given names (Python's tarfile allows any name). */
function makeTarball(name: string, members: Record<string, string>): string {
  const path = join(root, name);
  const script = `import io, json, sys, tarfile
members = json.loads(sys.argv[2])
with tarfile.open(sys.argv[1], 'w:gz') as tar:
    for name, text in members.items():
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
`;
  execFileSync('/usr/bin/python3', ['-c', script, path, JSON.stringify(members)]);
  return path;
}

describe('extractTarball', () => {
  it('strips the single wrapper directory', async () => {
    const archive = makeTarball('ok.tar.gz', { 'proj-1.0/setup.py': 's', 'proj-1.0/pkg/__init__.py': 'p' });
    const dest = join(root, 'ok');
    mkdirSync(dest);
    await extractTarball(archive, dest);
    expect(readdirSync(dest).sort()).toEqual(['pkg', 'setup.py']);
    expect(readFileSync(join(dest, 'pkg', '__init__.py'), 'utf8')).toBe('p');
  });

  it.each([
    ['dotdot.tar.gz', { 'proj/ok.py': 'x', 'proj/../../evil.py': 'x' }],
    ['absolute.tar.gz', { '/tmp/envgen-evil.py': 'x' }],
  ])('refuses members that escape (%s) before writing anything', async (name, members) => {
    const dest = join(root, name.replace(/\..*$/, ''));
    mkdirSync(dest);
    const error = await extractTarball(makeTarball(name, members), dest).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'path-escape')).toBe(true);
    expect(readdirSync(dest)).toEqual([]);
    expect(existsSync(join(root, 'evil.py'))).toBe(false);
  });

  it('reports an unreadable archive', async () => {
    const archive = join(root, 'broken.tar.gz');
    writeFileSync(archive, 'not a tarball');
    const error = await extractTarball(archive, root).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
  });
});

describe('tar member checks', () => {
  it('finds escaping names and wrapper dirs', () => {
    expect(findEscapingMembers(['a/b', '/etc/passwd', 'a/../../x', 'a/..b'])).toEqual(['/etc/passwd', 'a/../../x']);
    expect(countWrapperComponents(['p-1/', 'p-1/a.py', './p-1/b/c.py'])).toBe(1);
    expect(countWrapperComponents(['a.py', 'b/c.py'])).toBe(0);
    expect(countWrapperComponents(['only/'])).toBe(0);
  });
});
