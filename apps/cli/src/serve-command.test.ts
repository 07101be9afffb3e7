import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { fillSyntheticPool, makeSyntheticBundle, makeSyntheticInstance, scratchBase } from '@envgen/pool/test-support';
import { main } from './main.js';
import { readServeFlags, runServe } from './serve-command.js';

const homes: string[] = [];

afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function makeHome(): string {
  const home = mkdtempSync(join(scratchBase(), 'envgen-cli-serve-'));
  homes.push(home);
  fillSyntheticPool(home, 1);
  return home;
}

describe('runServe', () => {
  it('serves the pool under the home with the token and solve criterion given', async () => {
    const home = makeHome();
    const settings = resolveConfig({ env: { HOME: home }, flags: { home } });
    const server = await runServe({ ...readServeFlags({ port: '0', token: 'tok', solvedBy: 'file' }, {}), handleSignals: false }, settings, silentLogger);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(401);
      const response = await fetch(`${server.url}/v1/score`, {
        method: 'POST',
        headers: { authorization: 'Bearer tok' },
        body: JSON.stringify({ instance_id: makeSyntheticInstance(0).instance_id, locations: [{ file: 'toolz/core.py' }] }),
      });
      // File F1 1 is "solved" under --solved-by file; module and entity score 0.
      expect(await response.json()).toMatchObject({ reward: 1, file: 1, entity: 0, solved: true });
    } finally {
      await server.close();
    }
  });

  it('takes the token from ENVGEN_SERVE_TOKEN when no flag gives one', async () => {
    const home = makeHome();
    const settings = resolveConfig({ env: { HOME: home }, flags: { home } });
    const server = await runServe({ ...readServeFlags({ port: '0' }, { ENVGEN_SERVE_TOKEN: 'from-env' }), handleSignals: false }, settings, silentLogger);
    try {
      expect((await fetch(`${server.url}/v1/health`)).status).toBe(401);
      expect((await fetch(`${server.url}/v1/health`, { headers: { authorization: 'Bearer from-env' } })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('GET /report', () => {
  it('serves the pool report as it is now, behind the token, with a policy that forbids requests', async () => {
    const home = makeHome();
    const settings = resolveConfig({ env: { HOME: home }, flags: { home } });
    const server = await runServe({ ...readServeFlags({ port: '0', token: 'tok' }, {}), handleSignals: false }, settings, silentLogger);
    const auth = { authorization: 'Bearer tok' };
    try {
      expect((await fetch(`${server.url}/report`)).status).toBe(401);
      const response = await fetch(`${server.url}/report`, { headers: auth });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; img-src data:");
      expect(await response.text()).toContain('<td class="num" data-field="instances" data-value="1">1</td>');
      // A new instance shows on the next request.
      const pool = openPool(home);
      const instance = makeSyntheticInstance(1);
      pool.addInstance(instance, makeSyntheticBundle(instance));
      pool.close();
      expect(await (await fetch(`${server.url}/report`, { headers: auth })).text()).toContain('<tr data-group="total" data-key="all"><td>all</td><td class="num" data-field="instances" data-value="2">2</td>');
      const post = await fetch(`${server.url}/report`, { method: 'POST', headers: auth, body: '{}' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET');
      expect(((await (await fetch(`${server.url}/nothing`, { headers: auth })).json()) as { error: { message: string } }).error.message).toMatch(/GET \/report$/);
    } finally {
      await server.close();
    }
  });
});

describe('envgen serve', () => {
  it('shows examples in --help and exits 2 on a bad flag', async () => {
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text), env: {} };
    expect(await main(['serve', '--help'], io)).toBe(0);
    expect(stdout).toMatch(/--token <secret>/);
    expect(stdout).toMatch(/\$ envgen serve/);
    expect(await main(['serve', '--port', 'x'], io)).toBe(2);
    expect(stderr).toMatch(/--port x is not a port number/);
    expect(await main(['serve', '--solved-by', 'line'], io)).toBe(2);
    expect(stderr).toMatch(/--solved-by line is not a score; pass one of entity, module, file, total/);
  });
});
