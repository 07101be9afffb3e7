import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProfileOverrides, shippedProfilesDir, validateProfileOverrides } from './profile-overrides.js';

const root = mkdtempSync(join(tmpdir(), 'envgen-overrides-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function messageOf(data: unknown): string {
  try {
    validateProfileOverrides(data, 'profile file x.json');
  } catch (error) {
    expect(isEnvgenError(error, 'config-invalid')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('profile overrides', () => {
  it('accepts the documented keys', () => {
    const values = { comment: 'why', python: '/usr/bin/python3', env: { A: '1' }, aptPackages: ['p'], install: ['make'], testArgs: ['t'], testGlobs: ['t/*.py'], deselect: ['t/a.py::b'], timeoutMs: 1000 };
    const { comment: _comment, ...expected } = values;
    expect(validateProfileOverrides(values, 'src')).toEqual({ source: 'src', values: expected });
  });

  it('names the bad key', () => {
    expect(messageOf({ testargs: [] })).toContain('unknown key "testargs"');
    expect(messageOf({ deselect: 'a' })).toContain('"deselect" must be an array of strings');
    expect(messageOf({ timeoutMs: -1 })).toContain('"timeoutMs" must be a positive integer');
    expect(messageOf({ env: { A: 1 } })).toContain('"env" must be an object of string values');
    expect(messageOf([])).toContain('JSON object');
    expect(messageOf({ project: '../elsewhere' })).toContain('"project" must be a directory inside the repo');
  });

  it('takes the project to test as a directory of the repo', () => {
    expect(validateProfileOverrides({ project: './libs/core/' }, 'src').values).toEqual({ project: 'libs/core' });
    expect(validateProfileOverrides({ project: '.' }, 'src').values).toEqual({ project: '.' });
  });

  it('loads matching files from each directory in order', async () => {
    const first = join(root, 'a');
    const second = join(root, 'b');
    mkdirSync(first);
    mkdirSync(second);
    writeFileSync(join(first, 'acme__w.json'), '{"timeoutMs": 5}');
    writeFileSync(join(second, 'acme__w.json'), '{"deselect": ["t.py::x"]}');
    writeFileSync(join(second, 'acme__broken.json'), '{');
    const found = await loadProfileOverrides('acme', 'w', { profilesDirs: [first, join(root, 'missing'), second] });
    expect(found).toEqual([
      { source: `profile file ${join(first, 'acme__w.json')}`, values: { timeoutMs: 5 } },
      { source: `profile file ${join(second, 'acme__w.json')}`, values: { deselect: ['t.py::x'] } },
    ]);
    const error = await loadProfileOverrides('acme', 'broken', { profilesDirs: [second] }).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'config-invalid')).toBe(true);
  });

  it('ships only valid profile files', async () => {
    const names = readdirSync(shippedProfilesDir()).filter((name) => name.endsWith('.json'));
    expect(names).toContain('debian__python-toml.json');
    for (const name of names) {
      const [owner, repo] = name.replace(/\.json$/, '').split('__') as [string, string];
      expect(await loadProfileOverrides(owner, repo, { profilesDirs: [shippedProfilesDir()] })).toHaveLength(1);
    }
  });
});
