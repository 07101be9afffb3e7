import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '@envgen/core';
import type { FileChanges } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask, scratchBase } from '@envgen/pool/test-support';
import { startRewardServer } from './http-server.js';
import type { RewardServer, RewardServerOptions } from './http-server.js';

const homes: string[] = [];
const servers: RewardServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** Gold of instance 0: method C.m in a.py and function f in b.py. */
const GOLD: FileChanges[] = [
  { file: 'pkg/a.py', changes: { edited_entities: ['pkg/a.py:C.m'], edited_modules: ['pkg/a.py:C'], added_entities: [], added_modules: [] } },
  { file: 'pkg/b.py', changes: { edited_entities: ['pkg/b.py:f'], edited_modules: ['pkg/b.py:f'], added_entities: ['pkg/b.py:g'], added_modules: [] } },
];
const WITH_TASK = makeSyntheticInstance(0).instance_id;
const WITHOUT_TASK = makeSyntheticInstance(1).instance_id;
const OTHER = makeSyntheticInstance(2).instance_id;
const UNKNOWN = 'nobody__nothing.00000000.x__00000000';

/** A pool of three instances: 0 with GOLD, 1 without a task, 2 with the synthetic task. */
function makeHome(): string {
  const home = mkdtempSync(join(scratchBase(), 'envgen-reward-server-'));
  homes.push(home);
  const pool = openPool(home);
  for (let index = 0; index < 3; index += 1) {
    const instance = makeSyntheticInstance(index);
    pool.addInstance(instance, makeSyntheticBundle(instance));
  }
  pool.putTask(makeSyntheticTask(makeSyntheticInstance(0), { file_changes: GOLD }));
  pool.putTask(makeSyntheticTask(makeSyntheticInstance(2)));
  pool.close();
  return home;
}

async function start(options: Partial<RewardServerOptions> = {}): Promise<{ server: RewardServer; home: string; lines: string[] }> {
  const home = options.home ?? makeHome();
  const lines: string[] = [];
  const server = await startRewardServer({ home, port: 0, logger: createLogger({ format: 'json', write: (line) => lines.push(line) }), ...options });
  servers.push(server);
  return { server, home, lines };
}

interface Answer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
  body: any;
}

async function call(server: RewardServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const post = (server: RewardServer, path: string, body: unknown, headers?: Record<string, string>) => call(server, 'POST', path, body, headers);

describe('reward server: scoring', () => {
  it('scores hand-computed localizations by instance id', async () => {
    const { server } = await start();
    const score = (locations: unknown[]) => post(server, '/v1/score', { instance_id: WITH_TASK, locations });

    // Exact: every level 1.
    expect((await score([{ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 'pkg/b.py', function_name: 'f' }])).body).toEqual({
      instance_id: WITH_TASK,
      reward: 3,
      file: 1,
      module: 1,
      entity: 1,
      valid: true,
      solved: true,
    });
    // files {a,c} vs {a,b}: 2·1/4 = 1/2; modules {a:C, c:g} vs {a:C, b:f}: 1/2; entities likewise 1/2.
    const half = await score([{ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 'pkg/c.py', function_name: 'g' }]);
    expect(half).toMatchObject({ status: 200, body: { file: 0.5, module: 0.5, entity: 0.5, valid: true, solved: false } });
    expect(half.body.reward).toBeCloseTo(1.5, 12);
    // Class only: files {a} vs {a,b}: 2/3; modules {a:C} vs {a:C, b:f}: 2/3; no entity: 0.
    const classOnly = await score([{ file: './pkg/a.py', class_name: 'C' }]);
    expect(classOnly.body).toMatchObject({ file: 2 / 3, module: 2 / 3, entity: 0, solved: false });
    expect(classOnly.body.reward).toBeCloseTo(4 / 3, 12);
    // The added entity pkg/b.py:g is not scored: predicting it only adds a wrong entity.
    // files {b} vs {a,b}: 2/3; modules {b:g} vs {a:C, b:f}: 0; entities 0.
    expect((await score([{ file: 'pkg/b.py', function_name: 'g' }])).body).toMatchObject({ file: 2 / 3, module: 0, entity: 0 });
  });

  it('scores inline gold, raw localization_finish arguments, and an invalid call as 0', async () => {
    const { server } = await start();
    const inline = await post(server, '/v1/score', { gold: GOLD, locations: [{ file: 'pkg/b.py', function_name: 'f' }] });
    // files {b} vs {a,b}: 2/3; modules {b:f} vs {a:C,b:f}: 2/3; entities {b:f} vs {a:C.m,b:f}: 2/3.
    expect(inline.body).toMatchObject({ file: 2 / 3, module: 2 / 3, entity: 2 / 3, valid: true, solved: false });
    expect(inline.body.reward).toBeCloseTo(2, 12);
    expect(inline.body.instance_id).toBeUndefined();

    const raw = JSON.stringify({ locations: [{ file: '/srv/checkout/pkg/a.py', function_name: 'C.m' }, { file: 'pkg/b.py', function_name: 'f' }] });
    expect((await post(server, '/v1/score', { instance_id: WITH_TASK, arguments: raw, repo_root: '/srv/checkout' })).body).toMatchObject({ reward: 3, solved: true });

    for (const [args, reason] of [
      [null, /^no localization_finish call$/],
      ['{"locations": [', /must be JSON/],
      [{ locations: [{ file: 'pkg/a.py' }, { file: 9 }] }, /^locations\[1\]\.file is missing or not a string$/],
    ] as const) {
      const answer = await post(server, '/v1/score', { instance_id: WITH_TASK, arguments: args });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ reward: 0, file: 0, module: 0, entity: 0, valid: false, solved: false, reason: expect.stringMatching(reason) });
    }
  });

  it('scores a batch item by item, with errors per item', async () => {
    const { server } = await start();
    const answer = await post(server, '/v1/score/batch', {
      items: [
        { instance_id: WITH_TASK, locations: [{ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 'pkg/b.py', function_name: 'f' }] },
        { instance_id: UNKNOWN, locations: [{ file: 'a.py' }] },
        { instance_id: WITH_TASK, locations: [{ file: 'a.py' }, { file: 'b.py', class_name: 5 }] },
        { gold: GOLD, arguments: null },
        { instance_id: WITHOUT_TASK, arguments: null },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body.scored).toBe(2);
    expect(answer.body.failed).toBe(3);
    expect(answer.body.results).toEqual([
      { ok: true, instance_id: WITH_TASK, reward: 3, file: 1, module: 1, entity: 1, valid: true, solved: true },
      { ok: false, error: { status: 404, code: 'unknown-instance', message: expect.stringMatching(/not in the pool/) } },
      { ok: false, error: { status: 400, code: 'invalid-request', field: 'items[2].locations[1].class_name', message: 'items[2].locations[1].class_name must be a string or null' } },
      { ok: true, reward: 0, file: 0, module: 0, entity: 0, valid: false, reason: 'no localization_finish call', solved: false },
      { ok: false, error: { status: 409, code: 'no-task', message: expect.stringMatching(/envgen tasks/) } },
    ]);
    // A bare array works too; an empty batch is a 400.
    expect((await post(server, '/v1/score/batch', [{ gold: GOLD, locations: [{ file: 'pkg/a.py' }] }])).body.scored).toBe(1);
    expect((await post(server, '/v1/score/batch', { items: [] })).body.error).toMatchObject({ field: 'items' });
  });

  it('computes the injector reward inline and from an instance solve rate', async () => {
    const { server } = await start();
    expect((await post(server, '/v1/injector-reward', { checks_passed: false })).body).toEqual({ reward: -1, alpha: 0.8, checks_passed: false, solve_rate: null });
    expect((await post(server, '/v1/injector-reward', { checks_passed: true, solve_rate: 0 })).body.reward).toBe(-0.8);
    expect((await post(server, '/v1/injector-reward', { checks_passed: true, solve_rate: 0.25, alpha: 1 })).body.reward).toBe(0.5);
    const untried = await post(server, '/v1/injector-reward', { instance_id: WITH_TASK });
    expect(untried).toMatchObject({ status: 409, body: { error: { code: 'untried' } } });
    for (const solved of [true, false, false, false]) await post(server, '/v1/outcomes', { instance_id: WITH_TASK, reward: solved ? 3 : 1, solved });
    // s = 1/4: 1 - 1.8·0.25 = 0.55.
    const fromPool = await post(server, '/v1/injector-reward', { instance_id: WITH_TASK });
    expect(fromPool.body).toMatchObject({ alpha: 0.8, checks_passed: true, solve_rate: 0.25, attempts: 4, instance_id: WITH_TASK });
    expect(fromPool.body.reward).toBeCloseTo(0.55, 12);
    expect((await post(server, '/v1/injector-reward', { instance_id: UNKNOWN })).status).toBe(404);
  });
});

describe('reward server: outcomes', () => {
  it('records outcomes given or scored, and reports stats with the difficulty band', async () => {
    const { server } = await start();
    const statsPath = `/v1/instances/${encodeURIComponent(WITH_TASK)}/stats`;
    expect((await call(server, 'GET', statsPath)).body).toEqual({ instance_id: WITH_TASK, attempts: 0, solved: 0, mean_reward: null, solve_rate: null, band: 'untried' });

    const given = await post(server, '/v1/outcomes', { instance_id: WITH_TASK, reward: 1, solved: false });
    expect(given.body).toEqual({
      instance_id: WITH_TASK,
      reward: 1,
      solved: false,
      stats: { instance_id: WITH_TASK, attempts: 1, solved: 0, mean_reward: 1, solve_rate: 0, band: 'too-hard' },
    });
    const scored = await post(server, '/v1/outcomes', { instance_id: WITH_TASK, locations: [{ file: 'pkg/a.py', function_name: 'C.m' }, { file: 'pkg/b.py', function_name: 'f' }] });
    expect(scored.body).toMatchObject({ reward: 3, solved: true, score: { reward: 3, entity: 1, valid: true }, stats: { attempts: 2, solved: 1, mean_reward: 2, solve_rate: 0.5, band: 'frontier' } });
    const viaScore = await post(server, '/v1/score', { instance_id: WITH_TASK, arguments: null, record: true });
    expect(viaScore.body).toMatchObject({ reward: 0, valid: false, stats: { attempts: 3, solved: 1, mean_reward: 4 / 3 } });
    expect((await call(server, 'GET', statsPath)).body).toMatchObject({ attempts: 3, solved: 1, band: 'frontier' });

    expect((await post(server, '/v1/outcomes', { instance_id: UNKNOWN, reward: 1, solved: true })).status).toBe(404);
    expect((await call(server, 'GET', `/v1/instances/${UNKNOWN}/stats`)).status).toBe(404);
    // A task-less instance can take given outcomes but cannot be scored.
    expect((await post(server, '/v1/outcomes', { instance_id: WITHOUT_TASK, reward: 0, solved: false })).status).toBe(200);
    expect((await post(server, '/v1/outcomes', { instance_id: WITHOUT_TASK, arguments: null })).status).toBe(409);
  });

  it('records 200 concurrent outcomes exactly', async () => {
    const { server, home } = await start();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        index % 2 === 0
          ? post(server, '/v1/outcomes', { instance_id: OTHER, reward: index % 4 === 0 ? 3 : 2, solved: index % 4 === 0 })
          : post(server, '/v1/score', { instance_id: OTHER, locations: [{ file: 'toolz/core.py', function_name: 'add' }], record: true }),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    // 100 given (50 solved at 3, 50 unsolved at 2) + 100 scored at 3, solved.
    const stats = (await call(server, 'GET', `/v1/instances/${OTHER}/stats`)).body;
    expect(stats).toMatchObject({ attempts: 200, solved: 150, solve_rate: 0.75 });
    expect(stats.mean_reward).toBeCloseTo((50 * 3 + 50 * 2 + 100 * 3) / 200, 12);
    const attemptsSeen = answers.map((answer) => (answer.body.stats ?? answer.body).attempts as number).sort((a, b) => a - b);
    expect(attemptsSeen).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
    await server.close();
    const pool = openPool(home);
    expect(pool.stats(OTHER)).toMatchObject({ attempts: 200, solved: 150 });
    pool.close();
  });

  it('takes the solved criterion from its options', async () => {
    const { server } = await start({ solve: { by: 'total', threshold: 1.5 } });
    // Reward 1.5 (see the hand-computed case above) meets total ≥ 1.5.
    const answer = await post(server, '/v1/score', { instance_id: WITH_TASK, locations: [{ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 'pkg/c.py', function_name: 'g' }] });
    expect(answer.body).toMatchObject({ entity: 0.5, solved: true });
    expect((await call(server, 'GET', '/v1/health')).body.solved_when).toEqual({ by: 'total', threshold: 1.5 });
  });
});

describe('reward server: HTTP behaviour', () => {
  it('reports health', async () => {
    const { server, home } = await start();
    expect((await call(server, 'GET', '/v1/health')).body).toEqual({
      status: 'ok',
      pool: join(home, 'pool'),
      instances: 3,
      tasks: 2,
      solved_when: { by: 'entity', threshold: 1 },
      uptime_s: expect.any(Number),
    });
  });

  it('answers 400 naming the field, bad JSON, unknown paths, wrong methods and unknown instances as JSON errors', async () => {
    const { server } = await start();
    const bad = await post(server, '/v1/score', { instance_id: WITH_TASK, locations: [{ file: 'a.py' }, { file: 'b.py' }, { file: null }] });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'invalid-request', field: 'locations[2].file', message: 'locations[2].file is missing or not a string' } } });
    expect((await post(server, '/v1/outcomes', { instance_id: WITH_TASK, reward: 'high', solved: true })).body.error).toMatchObject({ field: 'reward' });
    expect((await post(server, '/v1/injector-reward', { checks_passed: true, solve_rate: 2 })).body.error).toMatchObject({ field: 'solve_rate' });
    expect((await post(server, '/v1/score', '{"instance_id": ')).body.error).toMatchObject({ code: 'invalid-json', message: expect.stringMatching(/not valid JSON/) });
    expect((await post(server, '/v1/score', '')).body.error).toMatchObject({ code: 'invalid-json', message: expect.stringMatching(/empty/) });
    expect((await post(server, '/v1/score', '[1]')).body.error).toMatchObject({ code: 'invalid-request', field: '' });
    expect(await post(server, '/v1/score', { instance_id: UNKNOWN, locations: [{ file: 'a.py' }] })).toMatchObject({ status: 404, body: { error: { code: 'unknown-instance' } } });
    expect(await post(server, '/v1/score', { instance_id: WITHOUT_TASK, locations: [{ file: 'a.py' }] })).toMatchObject({ status: 409, body: { error: { code: 'no-task' } } });
    expect(await call(server, 'GET', '/v2/score')).toMatchObject({ status: 404, body: { error: { code: 'not-found' } } });
    const wrongMethod = await call(server, 'GET', '/v1/score');
    expect(wrongMethod).toMatchObject({ status: 405, body: { error: { code: 'method-not-allowed' } } });
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect((await call(server, 'DELETE', `/v1/instances/${WITH_TASK}/stats`)).headers.get('allow')).toBe('GET');
    expect((await call(server, 'GET', '/v1/instances/%E0%A4%A/stats')).body.error).toMatchObject({ code: 'invalid-request', field: 'id' });
  });

  it('refuses bodies over the limit with 413, declared or streamed', async () => {
    const { server } = await start({ maxBodyBytes: 1000 });
    const large = JSON.stringify({ gold: GOLD, locations: Array.from({ length: 100 }, () => ({ file: 'pkg/a.py' })) });
    expect(large.length).toBeGreaterThan(1000);
    const declared = await post(server, '/v1/score', large);
    expect(declared).toMatchObject({ status: 413, body: { error: { code: 'payload-too-large' } } });
    // Chunked, so only counting the bytes finds it.
    const streamed = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(`${server.url}/v1/score`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      });
      request.on('error', reject);
      for (let offset = 0; offset < large.length; offset += 200) request.write(large.slice(offset, offset + 200));
      request.end();
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ error: { code: 'payload-too-large' } });
    // The server still answers.
    expect((await call(server, 'GET', '/v1/health')).status).toBe(200);
  });

  it('needs the bearer token when one is set', async () => {
    const { server } = await start({ token: 's3cret-token' });
    const missing = await call(server, 'GET', '/v1/health');
    expect(missing).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await call(server, 'GET', '/v1/health', undefined, { authorization: 'Bearer s3cret-tokeN' })).status).toBe(401);
    expect((await call(server, 'GET', '/v1/health', undefined, { authorization: 's3cret-token' })).status).toBe(401);
    expect((await call(server, 'GET', '/v1/health', undefined, { authorization: 'Bearer s3cret-token-and-more' })).status).toBe(401);
    expect((await post(server, '/v1/outcomes', { instance_id: WITH_TASK, reward: 1, solved: true })).status).toBe(401);
    expect((await call(server, 'GET', '/v1/health', undefined, { authorization: 'Bearer s3cret-token' })).status).toBe(200);
    expect((await call(server, 'GET', '/v1/health', undefined, { authorization: 'bearer s3cret-token' })).status).toBe(200);
    // Nothing was recorded without the token.
    expect((await call(server, 'GET', `/v1/instances/${WITH_TASK}/stats`, undefined, { authorization: 'Bearer s3cret-token' })).body.attempts).toBe(0);
  });

  it('logs one JSON line per request with method, path, status, ms and instance id', async () => {
    const { server, lines } = await start();
    await post(server, '/v1/score', { instance_id: WITH_TASK, locations: [{ file: 'pkg/a.py' }] });
    await post(server, '/v1/score', { instance_id: UNKNOWN, locations: [{ file: 'pkg/a.py' }] });
    await post(server, '/v1/score/batch', { items: [{ gold: GOLD, arguments: null }, { gold: GOLD, arguments: null }] });
    await call(server, 'GET', '/v1/health');
    const requests = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'request');
    expect(requests).toEqual([
      { time: expect.any(String), level: 'info', msg: 'request', method: 'POST', path: '/v1/score', status: 200, ms: expect.any(Number), instance_id: WITH_TASK },
      { time: expect.any(String), level: 'info', msg: 'request', method: 'POST', path: '/v1/score', status: 404, ms: expect.any(Number), instance_id: UNKNOWN },
      { time: expect.any(String), level: 'info', msg: 'request', method: 'POST', path: '/v1/score/batch', status: 200, ms: expect.any(Number), items: 2 },
      { time: expect.any(String), level: 'info', msg: 'request', method: 'GET', path: '/v1/health', status: 200, ms: expect.any(Number) },
    ]);
  });

  it('finishes an in-flight request on shutdown, refuses new connections, then closes the pool', async () => {
    const { server, home, lines } = await start();
    const body = JSON.stringify({ instance_id: WITH_TASK, reward: 2, solved: false });
    const half = Math.floor(body.length / 2);
    const inFlight = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const request = httpRequest(`${server.url}/v1/outcomes`, { method: 'POST', headers: { 'content-length': Buffer.byteLength(body) } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, body: text }));
      });
      request.on('error', reject);
      request.write(body.slice(0, half));
      // The rest arrives after shutdown began.
      setTimeout(() => request.end(body.slice(half)), 300);
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Not closed while the request is in flight; and no longer accepting connections.
    expect(closed).toBe(false);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(server.port, server.host);
      socket.on('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ stats: { attempts: 1 } });
    await closing;
    expect(closed).toBe(true);
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['reward server listening', 'reward server shutting down: finishing in-flight requests', 'request', 'reward server stopped']);
    // The outcome committed and the pool was closed (another writer gets the lock at once).
    const pool = openPool(home, { busyTimeoutMs: 0 });
    expect(pool.stats(WITH_TASK)).toMatchObject({ attempts: 1, meanReward: 2 });
    pool.recordAttempt(WITH_TASK, { reward: 0, solved: false });
    pool.close();
  });

  it('lets go of a request whose client left before the end of its body', async () => {
    const { server, lines } = await start();
    await new Promise<void>((resolve) => {
      const socket = connect(server.port, server.host, () => {
        socket.write('POST /v1/outcomes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"instance_id": ');
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    await expect.poll(() => lines.some((line) => line.includes('"status":400') && line.includes('/v1/outcomes'))).toBe(true);
    expect((await call(server, 'GET', `/v1/instances/${WITH_TASK}/stats`)).body.attempts).toBe(0);
    // Shutdown does not wait for it.
    await server.close();
  });

  it('says which port is taken', async () => {
    const { server, home } = await start();
    await expect(startRewardServer({ home, port: server.port })).rejects.toThrow(/port \d+ on 127.0.0.1 is in use; pass another --port/);
  });
});
