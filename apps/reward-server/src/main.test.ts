import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillSyntheticPool, makeSyntheticInstance, scratchBase } from '@envgen/pool/test-support';
import type { RewardServer } from '@envgen/reward-service';
import { main } from './main.js';

const homes: string[] = [];

afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function makeHome(): string {
  const home = mkdtempSync(join(scratchBase(), 'envgen-reward-app-'));
  homes.push(home);
  fillSyntheticPool(home, 1);
  return home;
}

function capture(): { stdout: string[]; stderr: string[]; write: { stdout: (text: string) => void; stderr: (text: string) => void } } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, write: { stdout: (text) => void stdout.push(text), stderr: (text) => void stderr.push(text) } };
}

describe('envgen-reward-server', () => {
  it('serves the pool under --home, prints its URL, logs JSON lines and exits 0 once closed', async () => {
    const home = makeHome();
    const out = capture();
    let listening: RewardServer | undefined;
    const exit = main(['--home', home, '--port', '0', '--solved-by', 'file'], {
      ...out.write,
      env: { HOME: home, ENVGEN_SERVE_TOKEN: 'tok' },
      handleSignals: false,
      onListening: (server) => {
        listening = server;
      },
    });
    await expect.poll(() => listening).toBeDefined();
    const server = listening as RewardServer;
    expect(JSON.parse(out.stdout.join(''))).toEqual({ url: server.url, home });
    const answer = await fetch(`${server.url}/v1/score`, {
      method: 'POST',
      headers: { authorization: 'Bearer tok' },
      body: JSON.stringify({ instance_id: makeSyntheticInstance(0).instance_id, locations: [{ file: 'toolz/core.py' }] }),
    });
    expect(await answer.json()).toMatchObject({ reward: 1, solved: true });
    await server.close();
    expect(await exit).toBe(0);
    const lines = out.stderr.join('').trim().split('\n').map((line) => JSON.parse(line) as { msg: string; status?: number });
    expect(lines.map((line) => line.msg)).toEqual(['reward server listening', 'request', 'reward server shutting down: finishing in-flight requests', 'reward server stopped']);
  });

  it('prints help, and exits 2 on unknown or bad flags', async () => {
    const help = capture();
    expect(await main(['--help'], { ...help.write, env: {} })).toBe(0);
    expect(help.stdout.join('')).toMatch(/--solved-by <level>\s+entity, module, file, total/);
    const unknown = capture();
    expect(await main(['--nope'], { ...unknown.write, env: {} })).toBe(2);
    expect(unknown.stderr.join('')).toMatch(/Unknown option '--nope'/);
    const bad = capture();
    expect(await main(['--port', 'http'], { ...bad.write, env: { HOME: makeHome() } })).toBe(2);
    expect(bad.stderr.join('')).toMatch(/--port http is not a port number/);
  });
});
