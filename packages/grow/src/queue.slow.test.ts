import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EnvgenError, makeInstanceId } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { GrowthRound, Pool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask, scratchBase } from '../../pool/src/synthetic.test-support.js';
import { finishRound } from './finish-round.js';
import { planRound } from './plan-round.js';
import { enqueueRound, obliterateQueues, readQueueStatus, scheduleRounds, startHost, startWorker, waitForRound } from './queue.js';
import type { QueueConnection } from './queue.js';
import { outcomeKey } from './round-jobs.js';
import type { GrowServices, InjectJobData, RolloutsResult, StoredInstance } from './round-jobs.js';

// The queue's fault handling on a real Redis. The round's effects come from GrowServices,
// the port each process implements with its own home (the CLI's is tested end to end in
// test/grow); here a small implementation makes synthetic instances so that only BullMQ,
// the flow and the pool's writer are under test.

const homes: string[] = [];
const connections: QueueConnection[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

function freshPool(): Pool {
  const home = mkdtempSync(join(scratchBase(), 'envgen-grow-queue-'));
  homes.push(home);
  return openPool(home);
}

/** A connection with its own key prefix on the shared Redis, obliterated after the tests. */
function freshConnection(): QueueConnection {
  const connection = { url: 'redis://127.0.0.1:6379', prefix: `envgen-test-queue-${process.pid}-${Date.now()}-${connections.length}` };
  connections.push(connection);
  return connection;
}

/** Instances and tasks of a repo made from its inject shard; `broken` repos fail every inject with a transient error. */
function syntheticServices(broken: ReadonlySet<string>, calls: string[] = []): GrowServices {
  const made = (job: InjectJobData): StoredInstance[] =>
    Object.entries(job.quotas).flatMap(([strategy, count]) =>
      Array.from({ length: count }, (_, index) => {
        const [owner = '', name = ''] = job.repo.split('/');
        const line = job.shard * 100 + index + 1;
        const patch = `diff --git a/${name}/core.py b/${name}/core.py\n--- a/${name}/core.py\n+++ b/${name}/core.py\n@@ -${line},1 +${line},1 @@\n-    return x + 1\n+    return x - 1 # ${strategy}\n`;
        const commit = 'a'.repeat(40);
        const instance = makeSyntheticInstance(line, { repo: job.repo, strategy, patch, base_commit: commit, instance_id: makeInstanceId({ owner, name, commit, strategy, patch }) });
        return { instance, bundle: makeSyntheticBundle(instance) };
      }),
    );
  return {
    inject: async (job) => {
      calls.push(`inject ${job.repo} ${job.shard}`);
      if (broken.has(job.repo)) throw new EnvgenError('repo-unavailable', `${job.repo} cannot be cloned here`);
      const instances = made(job);
      const arms = Object.entries(job.quotas).map(([strategy, candidates]) => ({ repo: job.repo, strategy, candidates, kept: candidates, known: 0, rejected: 0 }));
      return { repo: job.repo, shard: job.shard, arms, instances, seconds: 0.1 };
    },
    buildTasks: async (_job, instances) => ({ tasks: instances.map((item) => makeSyntheticTask(item.instance)), failed: [] }),
    rollouts: async (job, items) => ({
      outcomes: items.flatMap((item) =>
        Array.from({ length: job.rollouts }, (_, attempt) => ({ key: outcomeKey(job.roundId, item.instance.instance_id, attempt), instanceId: item.instance.instance_id, reward: attempt, solved: attempt === 1 })),
      ),
      tokens: 0,
    }),
    localizeTask: async (_spec, _instance, task) => task,
  };
}

function plan(pool: Pool, roundId: string, repos: readonly string[]) {
  for (const repo of repos) pool.putRepo({ repo, spec: `${repo}@${'a'.repeat(40)}`, weight: 1 });
  return planRound(pool, { roundId, seed: 3, budget: 8, rollouts: 2, strategies: ['change_operator', 'remove_loop'], solver: { kind: 'baseline' }, shardCandidates: 2 });
}

/** Runs a host and a worker until the round is finished; resolves with the stored round. */
function finished(pool: Pool, connection: QueueConnection, services: GrowServices): Promise<GrowthRound> {
  return new Promise((resolve) => {
    const host = startHost({ connection, pool, services, lockDurationMs: 5_000, onRound: resolve });
    const worker = startWorker({ connection, services, lockDurationMs: 5_000, concurrency: 2 });
    cleanups.push(() => worker.close(true), () => host.close(true));
  });
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  for (const connection of connections) await obliterateQueues(connection).catch(() => undefined);
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

describe('growth rounds on BullMQ', () => {
  it('finishes the round when one repo keeps failing: its jobs fail after the bounded retries, with the reason, and the other repo is stored', async () => {
    const pool = freshPool();
    const connection = freshConnection();
    const calls: string[] = [];
    const services = syntheticServices(new Set(['acme/broken']), calls);
    const planned = plan(pool, 'round-broken', ['acme/broken', 'acme/fine']);
    await enqueueRound(planned, pool, connection, { attempts: 2, backoffMs: 50 });
    const round = await finished(pool, connection, services);

    expect(round.status).toBe('done');
    const broken = round.repos.find((entry) => entry.repo === 'acme/broken');
    const fine = round.repos.find((entry) => entry.repo === 'acme/fine');
    expect(broken?.failed).toContain('acme/broken cannot be cloned here');
    expect(broken?.newInstances).toBe(0);
    expect(fine).toMatchObject({ failed: null, newInstances: planned.repos.find((work) => work.repo === 'acme/fine')?.shards.reduce((sum, shard) => sum + Object.values(shard.quotas).reduce((a, b) => a + b, 0), 0) });
    expect(round.newInstances).toBe(fine?.newInstances);
    // Every inject shard of the broken repo was tried exactly twice (attempts: 2), no more.
    const shards = planned.repos.find((work) => work.repo === 'acme/broken')?.shards.length ?? 0;
    expect(shards).toBeGreaterThan(0);
    expect(calls.filter((call) => call.startsWith('inject acme/broken')).length).toBe(2 * shards);
    const status = await readQueueStatus(connection);
    expect(status.failed.filter((job) => job.repo === 'acme/broken' && job.name === 'inject').map((job) => job.attemptsMade)).toEqual(Array.from({ length: shards }, () => 2));
    expect(status.failed.every((job) => job.failedReason?.includes('cannot be cloned here'))).toBe(true);
    expect(status.rounds).toEqual([]);
    expect(pool.getRound('round-broken')).toMatchObject({ status: 'done', newInstances: round.newInstances });
  }, 60_000);

  it('writes a result delivered twice once: the same instances, tasks and outcomes, counted as duplicates', async () => {
    const pool = freshPool();
    const services = syntheticServices(new Set());
    const planned = plan(pool, 'round-twice', ['acme/fine']);
    const work = planned.repos[0];
    if (work === undefined) throw new Error('no repo planned');
    const shard = work.shards[0];
    if (shard === undefined) throw new Error('no shard planned');
    const injected = await services.inject({ kind: 'inject', roundId: 'round-twice', repo: work.repo, spec: work.spec, shard: 0, seed: 3, quotas: shard.quotas });
    const tasks = await services.buildTasks({ kind: 'tasks', roundId: 'round-twice', repo: work.repo, spec: work.spec }, injected.instances);
    const items = injected.instances.map((item, index) => ({ instance: item.instance, task: tasks.tasks[index] ?? makeSyntheticTask(item.instance) }));
    const run = await services.rollouts({ kind: 'rollouts', roundId: 'round-twice', repo: work.repo, spec: work.spec, rollouts: 2, solver: { kind: 'baseline' }, revisit: [] }, items);
    const result: RolloutsResult = { repo: work.repo, arms: injected.arms, instances: injected.instances, tasks: tasks.tasks, failedTasks: [], failedShards: [], injectSeconds: 0.1, ...run };
    const outcome = { repo: work.repo, spec: work.spec, result, failure: null };

    const first = await finishRound(planned.round, [outcome], pool, services);
    const second = await finishRound(planned.round, [outcome, outcome], pool, services);
    expect(first.newInstances).toBe(injected.instances.length);
    expect(first.duplicateOutcomes).toBe(0);
    expect(second.newInstances).toBe(0);
    expect(second.duplicateOutcomes).toBe(2 * run.outcomes.length);
    const entries = [...pool.listInstances({ repo: work.repo })];
    expect(entries.map((entry) => entry.instance.instance_id).sort()).toEqual(injected.instances.map((item) => item.instance.instance_id).sort());
    for (const entry of entries) {
      expect(entry.task).not.toBeNull();
      expect(entry.stats).toMatchObject({ attempts: 2, solved: 1 });
    }
  });

  it('tells a process that queued a round when it ends, whichever host wrote it, and at once when it has ended already', async () => {
    const pool = freshPool();
    const connection = freshConnection();
    const planned = plan(pool, 'round-elsewhere', ['acme/fine']);
    await enqueueRound(planned, pool, connection);
    const never = new Promise<void>(() => undefined);
    let waited = false;
    const waiting = waitForRound(connection, 'round-elsewhere', never).then(() => {
      waited = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(waited).toBe(false);
    const round = await finished(pool, connection, syntheticServices(new Set()));
    await waiting;
    expect(round.status).toBe('done');
    await waitForRound(connection, 'round-elsewhere', never);
  }, 60_000);

  it('registers one schedule however many processes ask, and updates it in place', async () => {
    const connection = freshConnection();
    const template = { budget: 4, rollouts: 1, strategies: ['change_operator'], solver: { kind: 'baseline' as const } };
    await Promise.all([scheduleRounds(connection, '0 2 * * *', template), scheduleRounds(connection, '0 2 * * *', template), scheduleRounds(connection, '0 2 * * *', template)]);
    let status = await readQueueStatus(connection);
    expect(status.schedule?.pattern).toBe('0 2 * * *');
    expect(status.counts['envgen-host']?.delayed).toBe(1);
    await scheduleRounds(connection, '30 3 * * *', template);
    status = await readQueueStatus(connection);
    expect(status.schedule?.pattern).toBe('30 3 * * *');
    expect(new Date(status.schedule?.next ?? 0).getUTCMinutes()).toBe(30);
    expect(status.counts['envgen-host']?.delayed).toBe(1);
  });

  it('resumes the round when Redis restarts mid-round (append-only file), with nothing lost or written twice', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(scratchBase(), 'envgen-redis-'));
    homes.push(dir);
    let redis = await startRedis(port, dir);
    // Runs last (cleanups run in reverse): the workers close while their Redis still answers.
    cleanups.push(async () => redis.kill('SIGKILL'));
    const pool = freshPool();
    const connection = { url: `redis://127.0.0.1:${port}`, prefix: 'envgen-test-restart' };
    const base = syntheticServices(new Set());
    let restarted = false;
    const services: GrowServices = {
      ...base,
      // The first inject job takes Redis down while it works, and brings it back before it returns.
      inject: async (job) => {
        if (!restarted) {
          restarted = true;
          const down = redis;
          down.kill('SIGKILL');
          await new Promise((resolve) => down.once('exit', resolve));
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          redis = await startRedis(port, dir);
        }
        return base.inject(job);
      },
    };
    const planned = plan(pool, 'round-restart', ['acme/one', 'acme/two']);
    await enqueueRound(planned, pool, connection, { attempts: 3, backoffMs: 200 });
    const round = await finished(pool, connection, services);
    expect(restarted).toBe(true);
    expect(round.status).toBe('done');
    const expected = planned.repos.flatMap((work) => work.shards).reduce((sum, shard) => sum + Object.values(shard.quotas).reduce((a, b) => a + b, 0), 0);
    expect(round.newInstances).toBe(expected);
    expect(round.repos.every((entry) => entry.failed === null)).toBe(true);
    const entries = [...pool.listInstances()];
    expect(entries).toHaveLength(expected);
    for (const entry of entries) expect(entry.stats.attempts).toBe(2);
  }, 90_000);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A private redis-server that keeps an append-only file in `dir`, so a restart keeps every key; resolves once it answers PING. */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', join(dir, 'redis.log'), '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start; see ${join(dir, 'redis.log')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.setTimeout(1_000, () => socket.destroy());
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}
