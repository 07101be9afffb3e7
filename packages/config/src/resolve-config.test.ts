import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isEnvgenError } from '@envgen/core';
import { resolveConfig } from './resolve-config.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'envgen-config-'));
}

describe('resolveConfig', () => {
  it('uses defaults under the user cache dir when nothing is set', () => {
    const cwd = tempDir();
    const settings = resolveConfig({ env: { HOME: '/home/u' }, cwd });
    expect(settings.home).toBe('/home/u/.cache/envgen');
    expect(settings.sandbox).toBe('local');
    expect(settings.configFile).toBeNull();
  });

  it('applies flags over environment over config file over defaults', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'envgen.config.json'), JSON.stringify({ sandbox: 'docker', githubUrl: 'https://git.example.com', home: 'from-file' }));
    const fileOnly = resolveConfig({ env: { HOME: '/h' }, cwd });
    expect(fileOnly).toMatchObject({ sandbox: 'docker', githubUrl: 'https://git.example.com', home: join(cwd, 'from-file') });
    const withEnv = resolveConfig({ env: { HOME: '/h', ENVGEN_SANDBOX: 'none', ENVGEN_HOME: '/env-home' }, cwd });
    expect(withEnv).toMatchObject({ sandbox: 'none', home: '/env-home', githubUrl: 'https://git.example.com' });
    const withFlags = resolveConfig({ env: { HOME: '/h', ENVGEN_SANDBOX: 'none' }, cwd, flags: { sandbox: 'local', home: undefined } });
    expect(withFlags.sandbox).toBe('local');
    expect(withFlags.configFile).toBe(join(cwd, 'envgen.config.json'));
  });

  it('names the bad key and its source', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'envgen.config.json'), JSON.stringify({ sandbox: 'vm', colour: 'blue' }));
    try {
      resolveConfig({ env: {}, cwd });
      expect.unreachable();
    } catch (error) {
      expect(isEnvgenError(error, 'config-invalid')).toBe(true);
      expect((error as Error).message).toContain(join(cwd, 'envgen.config.json'));
      expect((error as Error).message).toMatch(/sandbox/);
      expect((error as Error).message).toMatch(/colour/);
    }
    expect(() => resolveConfig({ env: { ENVGEN_SANDBOX: 'vm' }, cwd: tempDir() })).toThrow(/ENVGEN_\* variables[\s\S]*sandbox/);
    expect(() => resolveConfig({ env: {}, cwd: tempDir(), configFile: 'missing.json' })).toThrow(/does not exist/);
  });

  it('splits ENVGEN_PROFILES_DIRS on the path delimiter', () => {
    const settings = resolveConfig({ env: { ENVGEN_PROFILES_DIRS: '/a:/b' }, cwd: tempDir() });
    expect(settings.profilesDirs).toEqual(['/a', '/b']);
  });
});
