import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openPool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask, scratchBase } from '@envgen/pool/test-support';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ID = makeSyntheticInstance(0).instance_id;

interface Served {
  child: ChildProcess;
  url: string;
  /** Parsed JSON log lines from stderr, as they arrive. */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
const homes: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function makeHome(): string {
  const home = mkdtempSync(join(scratchBase(), 'envgen-serve-e2e-'));
  homes.push(home);
  const pool = openPool(home);
  for (let index = 0; index < 2; index += 1) {
    const instance = makeSyntheticInstance(index);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    pool.putTask(makeSyntheticTask(instance));
  }
  pool.close();
  return home;
}

/** Starts `envgen serve --port 0 --json` from sources in its own process and waits for its URL. */
async function serve(home: string, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, ['--conditions=@envgen/source', '--import', 'tsx', join(ROOT, 'test/support/run-cli.ts'), 'serve', '--home', home, '--port', '0', '--json'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logs: Array<Record<string, unknown>> = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      logs.push({ unparsed: line });
    }
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    void exited.then((code) => reject(new Error(`envgen serve exited with ${code} before listening: ${JSON.stringify(logs)}`)));
  });
  return { child, url, logs, exited };
}

async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('envgen serve (its own process)', () => {
  it('finishes a request in flight when SIGTERM arrives, then exits 0 with the pool closed', async () => {
    const home = makeHome();
    const server = await serve(home);
    const body = JSON.stringify({ instance_id: ID, locations: [{ file: 'toolz/core.py', function_name: 'add' }] });
    const half = Math.floor(body.length / 2);
    const answer = new Promise<{ status: number; connection: string | undefined; text: string }>((resolve, reject) => {
      const request = httpRequest(`${server.url}/v1/outcomes`, { method: 'POST', headers: { 'content-length': Buffer.byteLength(body) } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, text }));
      });
      request.on('error', reject);
      request.write(body.slice(0, half));
      // Signal once the server has had time to accept the connection and read the headers.
      request.on('socket', (socket) => socket.once('connect', () => setTimeout(() => server.child.kill('SIGTERM'), 200)));
      // The rest of the body arrives once the server has begun shutting down.
      const finish = (): void => {
        if (server.logs.some((line) => line['msg'] === 'reward server shutting down: finishing in-flight requests')) request.end(body.slice(half));
        else setTimeout(finish, 10);
      };
      finish();
    });
    const { status, connection, text } = await answer;
    expect(status).toBe(200);
    expect(connection).toBe('close');
    expect(JSON.parse(text)).toMatchObject({ instance_id: ID, reward: 3, solved: true, stats: { attempts: 1, solved: 1 } });
    expect(await server.exited).toBe(0);
    expect(server.logs.map((line) => line['msg'])).toEqual([
      'reward server listening',
      'reward server got a signal',
      'reward server shutting down: finishing in-flight requests',
      'request',
      'reward server stopped',
    ]);
    expect(server.logs[3]).toMatchObject({ level: 'info', method: 'POST', path: '/v1/outcomes', status: 200, instance_id: ID, ms: expect.any(Number) });
    const pool = openPool(home, { busyTimeoutMs: 0 });
    expect(pool.recordAttempt(ID, { reward: 0, solved: false })).toMatchObject({ attempts: 2, solved: 1 });
    pool.close();
  });

  it('records outcomes from two servers on one pool exactly, and scores against a task rebuilt by another process', async () => {
    const home = makeHome();
    const [first, second] = await Promise.all([serve(home, { ENVGEN_SERVE_TOKEN: 'tok' }), serve(home, { ENVGEN_SERVE_TOKEN: 'tok' })]);
    if (first === undefined || second === undefined) throw new Error('servers did not start');
    const auth = { authorization: 'Bearer tok' };
    expect((await post(first.url, '/v1/outcomes', { instance_id: ID, reward: 1, solved: false })).status).toBe(401);

    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) => post(index % 2 === 0 ? first.url : second.url, '/v1/outcomes', { instance_id: ID, reward: index % 3, solved: index % 3 === 2 }, auth)),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const expectedReward = Array.from({ length: 200 }, (_, index) => index % 3).reduce((sum, reward) => sum + reward, 0);
    const stats = await fetch(`${second.url}/v1/instances/${ID}/stats`, { headers: auth }).then((response) => response.json() as Promise<Record<string, number>>);
    expect(stats).toMatchObject({ attempts: 200, solved: 66 });
    expect(stats['mean_reward']).toBeCloseTo(expectedReward / 200, 12);

    // Warm the first server's gold cache, rebuild the task elsewhere, score again.
    const locations = [{ file: 'toolz/core.py', function_name: 'add' }];
    expect((await post(first.url, '/v1/score', { instance_id: ID, locations }, auth)).body).toMatchObject({ reward: 3 });
    const pool = openPool(home);
    pool.putTask(
      makeSyntheticTask(makeSyntheticInstance(0), {
        file_changes: [{ file: 'toolz/core.py', changes: { edited_entities: ['toolz/core.py:Adder.add'], edited_modules: ['toolz/core.py:Adder'], added_entities: [], added_modules: [] } }],
      }),
    );
    pool.close();
    expect((await post(first.url, '/v1/score', { instance_id: ID, locations }, auth)).body).toMatchObject({ reward: 1, file: 1, module: 0, entity: 0, solved: false });

    first.child.kill('SIGINT');
    second.child.kill('SIGTERM');
    expect(await Promise.all([first.exited, second.exited])).toEqual([0, 0]);
  });
});
