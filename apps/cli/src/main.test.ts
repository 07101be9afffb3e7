import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, main } from './main.js';

function capture(env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
  return { out, err, io: { stdout: (text: string) => out.push(text), stderr: (text: string) => err.push(text), env: { ENVGEN_HOME: home, ...env } } };
}

describe('envgen main', () => {
  it('prints help with examples and exits 0', async () => {
    const { out, io } = capture();
    expect(await main(['inject', '--help'], io)).toBe(EXIT.ok);
    expect(out.join('')).toContain('$ envgen inject --repo debian:toolz -n 100 --seed 7');
  });

  it('exits 2 on usage errors: a missing option, a bad value, a bad repo spec, a bad setting', async () => {
    const missing = capture();
    expect(await main(['env'], missing.io)).toBe(EXIT.usage);
    expect(missing.err.join('')).toContain("required option '--repo <repo>'");
    expect(await main(['inject', '--repo', 'debian:toolz', '-n', 'many'], capture().io)).toBe(EXIT.usage);
    const spec = capture();
    expect(await main(['env', '--repo', 'not a repo'], spec.io)).toBe(EXIT.usage);
    expect(spec.err.join('')).toMatch(/debian:SOURCE/);
    const setting = capture({ ENVGEN_SANDBOX: 'vm' });
    expect(await main(['pool', 'list'], setting.io)).toBe(EXIT.usage);
    expect(setting.err.join('')).toMatch(/ENVGEN_\* variables[\s\S]*sandbox/);
  });

  it('exits 1 with a message that says what to try when a repo cannot be had', async () => {
    const { err, io } = capture();
    expect(await main(['env', '--repo', 'file:///nonexistent-envgen/project.git'], io)).toBe(EXIT.failed);
    expect(err.join('')).toMatch(/nonexistent-envgen\/project\.git/);
  });

  it('lists an empty pool as JSON', async () => {
    const { out, io } = capture();
    expect(await main(['pool', 'list', '--json'], io)).toBe(EXIT.ok);
    expect(JSON.parse(out.join(''))).toMatchObject({ total: 0, instances: [] });
  });
});
