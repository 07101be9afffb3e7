import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obliterateQueues, readQueueStatus } from '@envgen/grow';
import type { QueueConnection } from '@envgen/grow';
import { openPool } from '@envgen/pool';
import type { GrowthRound } from '@envgen/pool';
import { freshHomeFromCorpus } from '../support/corpus.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REPOS = ['debian:toolz', 'debian:python-json-patch'];
/** A small round: 3 arms per repo, 12 candidates, 3 inject shards per repo, 2 baseline rollouts per instance. */
const ROUND = ['--budget', '12', '--rollouts', '2', '--seed', '5', '--strategies', 'change_operator,change_constant,remove_assignment', '--shard-candidates', '2'];
const REDIS = 'redis://127.0.0.1:6379';

const homes: string[] = [];
const children: ChildProcess[] = [];
const connection: QueueConnection = { url: REDIS, prefix: `envgen-test-grow-${process.pid}-${Date.now()}` };

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `envgen <args>` from source in its own process group (so a kill takes its sandboxes too). */
function startCli(args: string[]): { child: ChildProcess; done: Promise<Ran>; stderr: () => string } {
  const child = spawn(process.execPath, ['--conditions=@envgen/source', '--import', 'tsx', join(ROOT, 'test/support/run-cli.ts'), ...args], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<Ran>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stderr: () => stderr };
}

function instanceIds(home: string): string[] {
  const pool = openPool(home);
  try {
    return [...pool.listInstances()].map((entry) => entry.instance.instance_id);
  } finally {
    pool.close();
  }
}

/** Every instance of the pool has its task and the round's two rollouts recorded once. */
function expectTasksAndAttempts(home: string): void {
  const pool = openPool(home);
  try {
    for (const entry of pool.listInstances()) {
      expect(entry.task).not.toBeNull();
      expect(entry.stats.attempts).toBe(2);
    }
  } finally {
    pool.close();
  }
}

async function registerRepos(home: string): Promise<void> {
  for (const repo of REPOS) {
    const ran = await startCli(['repos', 'add', repo, '--home', home]).done;
    expect(ran.code, ran.stderr).toBe(0);
  }
}

let reference: { home: string; round: GrowthRound; ids: string[] };

beforeAll(async () => {
  const home = freshHomeFromCorpus();
  homes.push(home);
  await registerRepos(home);
  const ran = await startCli(['grow', '--once', ...ROUND, '--json', '--home', home]).done;
  expect(ran.code, ran.stderr).toBe(0);
  reference = { home, round: JSON.parse(ran.stdout) as GrowthRound, ids: instanceIds(home) };
}, 1_200_000);

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  await obliterateQueues(connection);
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

describe('envgen grow in one process', () => {
  it('runs a round over both repos: plan per arm, new instances with tasks and banded outcomes, stored and listed', async () => {
    const { round, ids, home } = reference;
    expect(round.status).toBe('done');
    expect(round.plan).toHaveLength(6);
    expect(round.plan.reduce((sum, arm) => sum + arm.candidates, 0)).toBe(12);
    for (const arm of round.plan) expect(arm.reason).toMatch(/^new arm; floor \d+/);
    expect(round.repos.map((repo) => [repo.repo, repo.failed])).toEqual([
      ['debian/python-json-patch', null],
      ['debian/toolz', null],
    ]);
    expect(round.newInstances).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(4);
    expect(round.rolloutsRun).toBe(2 * ids.length);
    expect(Object.values(round.bands).reduce((a, b) => a + b, 0)).toBe(ids.length);
    expect(round.bands.untried).toBe(0);

    expectTasksAndAttempts(home);
    const listed = await startCli(['rounds', '--json', '--home', home]).done;
    expect((JSON.parse(listed.stdout) as GrowthRound[]).map((stored) => stored.roundId)).toEqual([round.roundId]);
    const out = join(home, 'export');
    const exported = await startCli(['export', '--format', 'swesmith', '--out', out, '--band', 'too-hard,frontier,too-easy', '--min-attempts', '2', '--json', '--home', home]).done;
    expect((JSON.parse(exported.stdout) as { matching: number }).matching).toBe(ids.length);
    const none = await startCli(['export', '--format', 'swesmith', '--out', out, '--band', 'untried', '--min-attempts', '2', '--json', '--home', home]).done;
    expect(none.code).toBe(1);
  });
});

describe('envgen grow on BullMQ', () => {
  it('the pool host and two workers with their own homes make the same instances though one worker is SIGKILLed mid-inject', async () => {
    const host = freshHomeFromCorpus();
    const workerHomes = [freshHomeFromCorpus(), freshHomeFromCorpus()];
    homes.push(host, ...workerHomes);
    await registerRepos(host);
    const queue = ['--redis', REDIS, '--queue-prefix', connection.prefix ?? '', '--lock-seconds', '4'];
    const hostRun = startCli(['grow', '--once', ...ROUND, ...queue, '--local-workers', '0', '--json', '--home', host]);
    const [victim, survivor] = workerHomes.map((home) => startCli(['worker', ...queue, '--home', home])) as [ReturnType<typeof startCli>, ReturnType<typeof startCli>];

    // Kill the first worker two seconds into its first inject job: its baseline or validation is under way.
    const deadline = Date.now() + 300_000;
    while (!/job \S+\.inject-\d+: inject/.test(victim.stderr())) {
      if (Date.now() > deadline) throw new Error(`the worker never took an inject job:\n${victim.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    process.kill(-(victim.child.pid as number), 'SIGKILL');
    const killed = await victim.done;
    expect(killed.code).toBeNull();

    const ran = await hostRun.done;
    expect(ran.code, ran.stderr).toBe(0);
    const round = JSON.parse(ran.stdout) as GrowthRound;
    expect(round.status).toBe('done');
    expect(round.repos.every((repo) => repo.failed === null)).toBe(true);
    // Exactly the uninterrupted round's instances, each once, with its task and outcomes.
    const ids = instanceIds(host);
    expect(ids).toEqual(reference.ids);
    expect(round.newInstances).toBe(reference.round.newInstances);
    expect(round.bands).toEqual(reference.round.bands);
    expectTasksAndAttempts(host);

    const status = await readQueueStatus(connection);
    expect(status.active).toEqual([]);
    expect(status.failed).toEqual([]);
    expect(status.rounds).toEqual([]);
    survivor.child.kill('SIGTERM');
    expect((await survivor.done).code).toBe(0);
  });
});
