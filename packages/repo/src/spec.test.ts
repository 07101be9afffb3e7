import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRepoSpec } from './spec.js';

const cwd = mkdtempSync(join(tmpdir(), 'envgen-spec-'));
mkdirSync(join(cwd, 'project'));
mkdirSync(join(cwd, 'bare.git'));
mkdirSync(join(cwd, 'pytoolz', 'toolz'), { recursive: true });
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function specErrorOf(raw: string): string {
  try {
    parseRepoSpec(raw, { cwd });
  } catch (error) {
    expect(isEnvgenError(error, 'repo-spec-invalid')).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${raw} parsed`);
}

describe('parseRepoSpec', () => {
  it('reads GitHub owner/name with and without a ref', () => {
    expect(parseRepoSpec('pallets/markupsafe', { cwd })).toEqual({ kind: 'github', owner: 'pallets', name: 'markupsafe', ref: null, raw: 'pallets/markupsafe' });
    expect(parseRepoSpec('pallets/markupsafe.git@2.1.2', { cwd })).toMatchObject({ kind: 'github', name: 'markupsafe', ref: '2.1.2' });
    expect(parseRepoSpec('a/b@release/1.x', { cwd })).toMatchObject({ ref: 'release/1.x' });
  });

  it('reads git URLs with @ref only after .git and #ref everywhere', () => {
    expect(parseRepoSpec('https://example.org/x/y.git@v1', { cwd })).toMatchObject({ kind: 'git', url: 'https://example.org/x/y.git', ref: 'v1' });
    expect(parseRepoSpec('ssh://git@example.org/x/y', { cwd })).toMatchObject({ kind: 'git', url: 'ssh://git@example.org/x/y', ref: null });
    expect(parseRepoSpec('ssh://git@example.org/x/y#main', { cwd })).toMatchObject({ url: 'ssh://git@example.org/x/y', ref: 'main' });
    expect(parseRepoSpec('git@github.com:pytoolz/toolz.git@0.12.0', { cwd })).toMatchObject({ kind: 'git', url: 'git@github.com:pytoolz/toolz.git', ref: '0.12.0' });
    expect(parseRepoSpec('file:///srv/git/repo.git', { cwd })).toMatchObject({ kind: 'git', url: 'file:///srv/git/repo.git', ref: null });
  });

  it('reads local directories, relative or absolute, and a bare repo path as a git URL', () => {
    expect(parseRepoSpec('./project', { cwd })).toEqual({ kind: 'local', path: join(cwd, 'project'), raw: './project' });
    expect(parseRepoSpec('project', { cwd })).toMatchObject({ kind: 'local', path: join(cwd, 'project') });
    expect(parseRepoSpec(join(cwd, 'project'), { cwd })).toMatchObject({ kind: 'local' });
    expect(parseRepoSpec('pytoolz/toolz', { cwd })).toMatchObject({ kind: 'local', path: join(cwd, 'pytoolz', 'toolz') });
    expect(parseRepoSpec('bare.git', { cwd })).toMatchObject({ kind: 'git', url: join(cwd, 'bare.git') });
  });

  it('reads debian:SOURCE[=VERSION]', () => {
    expect(parseRepoSpec('debian:toolz', { cwd })).toEqual({ kind: 'debian', source: 'toolz', version: null, raw: 'debian:toolz' });
    expect(parseRepoSpec('debian:python-json-patch=1:1.32-2~bpo1', { cwd })).toMatchObject({ source: 'python-json-patch', version: '1:1.32-2~bpo1' });
  });

  it('rejects bad input with the valid forms', () => {
    expect(specErrorOf('')).toContain('debian:SOURCE');
    expect(specErrorOf('./missing')).toContain('does not exist');
    expect(specErrorOf('just-a-word')).toContain('owner/name');
    expect(specErrorOf('a/b@--upload-pack=evil')).toContain('not a valid git ref');
    expect(specErrorOf('a/b@x..y')).toContain('not a valid git ref');
    expect(specErrorOf('debian:Toolz')).toContain('not a Debian source package name');
    expect(specErrorOf('debian:toolz=latest')).toContain('not a Debian version');
    expect(specErrorOf('https://')).toContain('no path');
  });
});
