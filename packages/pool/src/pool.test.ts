import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLE_FILE_NAMES, isEnvgenError } from '@envgen/core';
import { hashPatch, openPool } from './pool.js';
import type { Pool } from './pool.js';
import { SCHEMA_VERSION } from './schema.js';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask, scratchBase } from './synthetic.test-support.js';

const homes: string[] = [];
const pools: Pool[] = [];

function freshPool(): { home: string; pool: Pool } {
  const home = mkdtempSync(join(scratchBase(), 'envgen-pool-'));
  homes.push(home);
  const pool = openPool(home);
  pools.push(pool);
  return { home, pool };
}

function addSynthetic(pool: Pool, count: number): void {
  for (let index = 0; index < count; index += 1) {
    const instance = makeSyntheticInstance(index);
    expect(pool.addInstance(instance, makeSyntheticBundle(instance))).toEqual({ status: 'added' });
  }
}

afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

describe('tasks', () => {
  it('stores a task per instance, replaces it on rebuild and lists entries with it', () => {
    const { pool } = freshPool();
    addSynthetic(pool, 3);
    const [first, second] = [makeSyntheticInstance(0), makeSyntheticInstance(1)];
    expect(pool.getTask(first.instance_id)).toBeUndefined();
    pool.putTask(makeSyntheticTask(first));
    const rebuilt = makeSyntheticTask(second, { problem_statement: { kind: 'issue', text: 'adding breaks', model: 'm', created_at: second.created_at } });
    pool.putTask(makeSyntheticTask(second));
    pool.putTask(rebuilt);
    expect(pool.getTask(second.instance_id)).toEqual(rebuilt);
    const entries = [...pool.listInstances()];
    expect(entries.map((entry) => entry.task?.problem_statement.kind ?? null)).toEqual(
      entries.map((entry) => (entry.instance.instance_id === first.instance_id ? 'tests' : entry.instance.instance_id === second.instance_id ? 'issue' : null)),
    );
    expect([...pool.listInstances({ hasTask: true })].map((entry) => entry.instance.instance_id).sort()).toEqual([first.instance_id, second.instance_id].sort());
    expect(pool.count({ hasTask: false })).toBe(1);
    expect(pool.countsBy('repo', { hasTask: true }).reduce((sum, group) => sum + group.count, 0)).toBe(2);
  });

  it('reports an id collision instead of taking another bug for a stored one', () => {
    const { pool } = freshPool();
    const stored = makeSyntheticInstance(0);
    pool.addInstance(stored, makeSyntheticBundle(stored));
    const other = { ...makeSyntheticInstance(3, { strategy: stored.strategy, repo: stored.repo, base_commit: stored.base_commit }), instance_id: stored.instance_id };
    expect(pool.addInstance(other, makeSyntheticBundle(other))).toEqual({ status: 'id-collision' });
    expect(pool.getInstance(stored.instance_id)?.patch).toBe(stored.patch);
  });

  it('refuses a task for an instance that is not stored', () => {
    const { pool } = freshPool();
    const stranger = makeSyntheticInstance(9);
    expect(() => pool.putTask(makeSyntheticTask(stranger))).toThrow(/not in the pool/);
  });
});

describe('openPool', () => {
  it('stores an instance with its five bundle files and reads both back', () => {
    const { pool } = freshPool();
    const instance = makeSyntheticInstance(0);
    const bundle = makeSyntheticBundle(instance);
    expect(pool.hasInstance(instance.instance_id)).toBe(false);
    expect(pool.addInstance(instance, bundle)).toEqual({ status: 'added' });
    expect(pool.hasInstance(instance.instance_id)).toBe(true);
    expect(pool.getInstance(instance.instance_id)).toEqual(instance);
    expect(pool.readBundle(instance.instance_id)).toEqual(bundle);
    expect(readdirSync(pool.bundleDir(instance.instance_id)).sort()).toEqual([...BUNDLE_FILE_NAMES].sort());
    expect(pool.getInstance('nobody__nothing.00000000.x__00000000')).toBeUndefined();
    expect(pool.stats(instance.instance_id)).toEqual({ attempts: 0, solved: 0, meanReward: null, solveRate: null });
  });

  it('answers exists for the same id and duplicate-patch for the same patch from another strategy', () => {
    const { pool } = freshPool();
    const first = makeSyntheticInstance(0, { strategy: 'change_operator' });
    pool.addInstance(first, makeSyntheticBundle(first));
    expect(pool.addInstance(first, makeSyntheticBundle(first))).toEqual({ status: 'exists' });
    const sameBug = makeSyntheticInstance(0, { strategy: 'remove_function_body' });
    expect(sameBug.instance_id).not.toBe(first.instance_id);
    expect(pool.addInstance(sameBug, makeSyntheticBundle(sameBug))).toEqual({ status: 'duplicate-patch', duplicateOf: first.instance_id });
    // The same patch on another commit is another bug.
    const otherCommit = { ...sameBug, base_commit: 'f'.repeat(40), instance_id: `${sameBug.instance_id}x` };
    expect(pool.addInstance(otherCommit, makeSyntheticBundle(otherCommit))).toEqual({ status: 'added' });
    expect(pool.count()).toBe(2);
    expect(readdirSync(join(pool.dir, 'bundles'))).toHaveLength(2);
  });

  it('lists in id order with filters, limit and offset across page boundaries, and counts', () => {
    const { pool } = freshPool();
    addSynthetic(pool, 600);
    const all = [...pool.listInstances()].map((entry) => entry.instance.instance_id);
    expect(all).toHaveLength(600);
    expect(all).toEqual([...all].sort());
    expect(new Set(all).size).toBe(600);

    const window = [...pool.listInstances({ offset: 250, limit: 300 })].map((entry) => entry.instance.instance_id);
    expect(window).toEqual(all.slice(250, 550));

    const toolzRemoval = [...pool.listInstances({ repo: 'pytoolz/toolz', family: 'removal' })];
    expect(toolzRemoval.length).toBe(pool.count({ repo: 'pytoolz/toolz', family: 'removal' }));
    expect(toolzRemoval.length).toBe(100);
    expect(toolzRemoval.every(({ instance }) => instance.repo === 'pytoolz/toolz' && instance.strategy === 'remove_function_body')).toBe(true);

    expect(pool.countsBy('repo')).toEqual([
      { key: 'pytoolz/toolz', count: 300 },
      { key: 'uiri/toml', count: 300 },
    ]);
    expect(pool.countsBy('strategy', { repo: 'uiri/toml' })).toEqual([
      { key: 'change_operator', count: 100 },
      { key: 'invert_if_else', count: 100 },
      { key: 'remove_function_body', count: 100 },
    ]);
    expect([...pool.listInstances({ strategy: 'no-such-strategy' })]).toEqual([]);
  });

  it('lets the caller use the pool while a listing is open', () => {
    const { pool } = freshPool();
    addSynthetic(pool, 260);
    let seen = 0;
    for (const { instance } of pool.listInstances()) {
      pool.recordAttempt(instance.instance_id, { reward: 1, solved: true });
      seen += 1;
    }
    expect(seen).toBe(260);
    expect([...pool.listInstances()].every(({ stats }) => stats.attempts === 1)).toBe(true);
  });

  it('records attempts as attempts, mean reward and solve rate', () => {
    const { pool } = freshPool();
    const instance = makeSyntheticInstance(0);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    pool.recordAttempt(instance.instance_id, { reward: 3, solved: true });
    pool.recordAttempt(instance.instance_id, { reward: 1, solved: false });
    expect(pool.recordAttempt(instance.instance_id, { reward: 0.5, solved: false })).toEqual({ attempts: 3, solved: 1, meanReward: 1.5, solveRate: 1 / 3 });
    expect(pool.stats(instance.instance_id)).toEqual({ attempts: 3, solved: 1, meanReward: 1.5, solveRate: 1 / 3 });
    expect(pool.recordAttempt('nobody__nothing.00000000.x__00000000', { reward: 1, solved: true })).toBeUndefined();
    expect(() => pool.recordAttempt(instance.instance_id, { reward: Number.NaN, solved: false })).toThrow(/finite number/);
  });

  it('remembers rejected candidates per repo, commit, profile and patch', () => {
    const { home, pool } = freshPool();
    const key = { repo: 'pytoolz/toolz', commit: 'a'.repeat(40), profileHash: 'p1', patchHash: hashPatch('--- a\n+++ b\n') };
    expect(pool.getRejection(key)).toBeUndefined();
    pool.markRejected(key, 'no-failing-test', 'all 212 covering tests passed');
    pool.close();
    pools.pop();
    const reopened = openPool(home);
    pools.push(reopened);
    expect(reopened.getRejection(key)).toMatchObject({ reason: 'no-failing-test', detail: 'all 212 covering tests passed' });
    expect(reopened.getRejection({ ...key, profileHash: 'p2' })).toBeUndefined();
  });

  it('keeps a clean run per repo, commit, profile and script, and forgets a row that holds none', () => {
    const { home, pool } = freshPool();
    const key = { repo: 'pytoolz/toolz', commit: 'a'.repeat(40), profileHash: 'p1', scriptHash: 's1' };
    expect(pool.getCleanRun(key)).toBeUndefined();
    pool.putCleanRun(key, { results: { 't.py::test_a': 'passed', 't.py::test_b': 'skipped' }, seconds: 1.5 });
    pool.close();
    pools.pop();
    const reopened = openPool(home);
    pools.push(reopened);
    expect(reopened.getCleanRun(key)).toMatchObject({ results: { 't.py::test_a': 'passed', 't.py::test_b': 'skipped' }, seconds: 1.5 });
    expect(reopened.getCleanRun({ ...key, scriptHash: 's2' })).toBeUndefined();
    const db = new Database(join(home, 'pool', 'index.sqlite'));
    db.prepare('UPDATE clean_runs SET body = ?').run('{"results": {"t.py::test_a": "ok"}, "seconds": 1}');
    db.close();
    expect(reopened.getCleanRun(key)).toBeUndefined();
  });

  it('refuses ids that are not one plain path segment', () => {
    const { pool } = freshPool();
    for (const instance_id of ['../escape', 'a/b', '.hidden', '..', '']) {
      const instance = makeSyntheticInstance(0, { instance_id });
      expect(() => pool.addInstance(instance, makeSyntheticBundle(instance))).toThrow(expect.objectContaining({ code: 'path-escape' }));
    }
    expect(readdirSync(join(pool.dir, 'bundles'))).toEqual([]);
  });

  it('says store-corrupt for an unknown instance and for a bundle changed or deleted behind its back', () => {
    const { pool } = freshPool();
    const instance = makeSyntheticInstance(0);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    expect(() => pool.readBundle('nobody__nothing.00000000.x__00000000')).toThrow(/envgen pool list/);
    const dir = pool.bundleDir(instance.instance_id);
    writeFileSync(join(dir, 'test_script.sh'), '#!/bin/sh\n');
    expect(() => pool.readBundle(instance.instance_id)).toThrow(/differs from what was stored/);
    rmSync(join(dir, 'test_parser.py'));
    expect(() => pool.readBundle(instance.instance_id)).toThrow(expect.objectContaining({ code: 'store-corrupt' }));
  });

  it('removes bundles without a row and staging dirs of dead writers on open, and keeps live ones', () => {
    const { home, pool } = freshPool();
    const kept = makeSyntheticInstance(0);
    pool.addInstance(kept, makeSyntheticBundle(kept));
    pool.close();
    pools.pop();
    const bundles = join(home, 'pool', 'bundles');
    // What a writer killed between its rename and its commit leaves behind.
    const orphan = makeSyntheticInstance(1);
    mkdirSync(join(bundles, orphan.instance_id));
    writeFileSync(join(bundles, orphan.instance_id, 'bug_inject.diff'), orphan.patch);
    // A writer killed while staging, and one still staging.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    mkdirSync(join(bundles, `.tmp-${deadPid}-abcdef`));
    mkdirSync(join(bundles, `.tmp-${process.pid}-123456`));

    const reopened = openPool(home);
    pools.push(reopened);
    expect(readdirSync(bundles).sort()).toEqual([`.tmp-${process.pid}-123456`, kept.instance_id].sort());
    expect(reopened.addInstance(orphan, makeSyntheticBundle(orphan))).toEqual({ status: 'added' });
    expect(reopened.readBundle(orphan.instance_id)).toEqual(makeSyntheticBundle(orphan));
  });

  it('refuses an index written by a newer envgen', () => {
    const { home, pool } = freshPool();
    pool.close();
    pools.pop();
    const db = new Database(join(home, 'pool', 'index.sqlite'));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    let caught: unknown;
    try {
      openPool(home);
    } catch (error) {
      caught = error;
    }
    expect(isEnvgenError(caught, 'store-version')).toBe(true);
    expect((caught as Error).message).toMatch(/upgrade envgen or use another --home/);
  });
});

describe('spread', () => {
  it('counts untried, too hard, frontier and too easy instances per repo and strategy, with attempts and mean reward', () => {
    const { pool } = freshPool();
    addSynthetic(pool, 6);
    // Index i: repo toolz for even i, toml for odd; strategy cycles over three.
    const id = (index: number): string => makeSyntheticInstance(index).instance_id;
    const record = (index: number, ...outcomes: Array<[number, boolean]>): void => {
      for (const [reward, solved] of outcomes) pool.recordAttempt(id(index), { reward, solved });
    };
    record(0, [0, false], [1, false]); // toolz, change_operator: too hard
    record(1, [3, true], [1, false]); // toml, invert_if_else: frontier (1/2)
    record(2, [3, true]); // toolz, remove_function_body: too easy
    record(3, [3, true], [3, true], [0, false]); // toml, change_operator: frontier (2/3)
    // 4 (toolz, invert_if_else) and 5 (toml, remove_function_body): untried.

    expect(pool.spread('repo')).toEqual([
      // toolz: attempts 3, rewards 0 + 1 + 3 = 4; solve rates 0 and 1 → mean 1/2.
      { key: 'pytoolz/toolz', instances: 3, untried: 1, tooHard: 1, frontier: 0, tooEasy: 1, attempts: 3, solved: 1, meanReward: 4 / 3, meanSolveRate: 0.5 },
      // toml: attempts 5, rewards 3 + 1 + 3 + 3 + 0 = 10; solve rates 1/2 and 2/3 → mean 7/12.
      { key: 'uiri/toml', instances: 3, untried: 1, tooHard: 0, frontier: 2, tooEasy: 0, attempts: 5, solved: 3, meanReward: 2, meanSolveRate: expect.closeTo(7 / 12, 12) },
    ]);
    const byStrategy = pool.spread('strategy');
    expect(byStrategy.map((row) => [row.key, row.untried, row.tooHard, row.frontier, row.tooEasy, row.attempts])).toEqual([
      ['change_operator', 0, 1, 1, 0, 5],
      ['invert_if_else', 1, 0, 1, 0, 2],
      ['remove_function_body', 1, 0, 0, 1, 1],
    ]);
    expect(pool.spread(null)).toEqual([
      { key: 'all', instances: 6, untried: 2, tooHard: 1, frontier: 2, tooEasy: 1, attempts: 8, solved: 4, meanReward: 14 / 8, meanSolveRate: expect.closeTo((0 + 0.5 + 1 + 2 / 3) / 4, 12) },
    ]);
    // Filters narrow the selection; a strategy's rows per repo.
    expect(pool.spread('repo', { strategy: 'change_operator' }).map((row) => [row.key, row.tooHard, row.frontier])).toEqual([
      ['pytoolz/toolz', 1, 0],
      ['uiri/toml', 0, 1],
    ]);
  });

  it('is one zero row on an empty selection and no groups', () => {
    const { pool } = freshPool();
    expect(pool.spread('repo')).toEqual([]);
    expect(pool.spread(null)).toEqual([
      { key: 'all', instances: 0, untried: 0, tooHard: 0, frontier: 0, tooEasy: 0, attempts: 0, solved: 0, meanReward: null, meanSolveRate: null },
    ]);
  });
});

describe('report queries', () => {
  /** Six instances made an hour apart (0 at 2025-01-01T00, …), outcomes as in the spread test, tasks for 1 and 3. */
  function reportPool(): Pool {
    const { pool } = freshPool();
    for (let index = 0; index < 6; index += 1) {
      const instance = makeSyntheticInstance(index, { created_at: new Date(Date.UTC(2025, 0, 1, index)).toISOString() });
      pool.addInstance(instance, makeSyntheticBundle(instance));
    }
    const id = (index: number): string => makeSyntheticInstance(index).instance_id;
    const record = (index: number, ...outcomes: boolean[]): void => {
      for (const solved of outcomes) pool.recordAttempt(id(index), { reward: solved ? 3 : 0, solved });
    };
    record(0, false, false); // too hard
    record(1, true, false); // frontier 1/2
    record(2, true); // too easy
    record(3, true, true, false); // frontier 2/3
    record(4, true, false, false, false); // frontier 1/4, the hardest
    pool.putTask(makeSyntheticTask(makeSyntheticInstance(1)));
    pool.putTask(makeSyntheticTask(makeSyntheticInstance(3)));
    return pool;
  }

  it('counts instances per creation period, family and current band', () => {
    const pool = reportPool();
    expect(pool.createdRange()).toEqual({ first: '2025-01-01T00:00:00.000Z', last: '2025-01-01T05:00:00.000Z' });
    expect(pool.growth(10)).toEqual([
      { period: '2025-01-01', family: 'procedural', band: 'frontier', count: 3 },
      { period: '2025-01-01', family: 'procedural', band: 'too-hard', count: 1 },
      { period: '2025-01-01', family: 'removal', band: 'too-easy', count: 1 },
      { period: '2025-01-01', family: 'removal', band: 'untried', count: 1 },
    ]);
    expect(pool.growth(13).map((row) => [row.period, row.band])).toEqual([
      ['2025-01-01T00', 'too-hard'],
      ['2025-01-01T01', 'frontier'],
      ['2025-01-01T02', 'too-easy'],
      ['2025-01-01T03', 'frontier'],
      ['2025-01-01T04', 'frontier'],
      ['2025-01-01T05', 'untried'],
    ]);
    expect(pool.growth(10, { repo: 'uiri/toml' }).map((row) => [row.band, row.count])).toEqual([
      ['frontier', 2],
      ['untried', 1],
    ]);
  });

  it('bins the solve rates of tried instances, 1 in the last bin', () => {
    const pool = reportPool();
    // Rates 0, 1/2, 1, 2/3, 1/4.
    expect(pool.solveRateHistogram(4)).toEqual([1, 1, 2, 1]);
    expect(pool.solveRateHistogram(2, { repo: 'pytoolz/toolz' })).toEqual([2, 1]);
  });

  it('lists the frontier hardest first, with stats and tasks', () => {
    const pool = reportPool();
    const frontier = pool.listFrontier(10);
    expect(frontier.map((entry) => [entry.instance.instance_id, entry.stats.solveRate])).toEqual([
      [makeSyntheticInstance(4).instance_id, 0.25],
      [makeSyntheticInstance(1).instance_id, 0.5],
      [makeSyntheticInstance(3).instance_id, 2 / 3],
    ]);
    expect(frontier.map((entry) => entry.task !== null)).toEqual([false, true, true]);
    expect(pool.listFrontier(1).map((entry) => entry.instance.instance_id)).toEqual([makeSyntheticInstance(4).instance_id]);
    expect(pool.listFrontier(10, { hasTask: true }).map((entry) => entry.stats.solveRate)).toEqual([0.5, 2 / 3]);
  });

  it('counts remembered rejections per repo and reason', () => {
    const { pool } = freshPool();
    const reject = (repo: string, patchHash: string, reason: 'timeout' | 'no-failing-test') => pool.markRejected({ repo, commit: 'c', profileHash: 'p', patchHash }, reason, 'd');
    reject('a/b', '1', 'timeout');
    reject('a/b', '2', 'no-failing-test');
    reject('a/b', '3', 'no-failing-test');
    reject('c/d', '1', 'timeout');
    expect(pool.rejectionCounts()).toEqual([
      { repo: 'a/b', reason: 'no-failing-test', count: 2 },
      { repo: 'a/b', reason: 'timeout', count: 1 },
      { repo: 'c/d', reason: 'timeout', count: 1 },
    ]);
  });
});

describe('dataVersion', () => {
  it("changes when another connection commits, not for this connection's own writes", () => {
    const { home, pool } = freshPool();
    addSynthetic(pool, 1);
    const id = makeSyntheticInstance(0).instance_id;
    const before = pool.dataVersion();
    pool.recordAttempt(id, { reward: 1, solved: false });
    expect(pool.dataVersion()).toBe(before);
    const other = openPool(home);
    pools.push(other);
    other.putTask(makeSyntheticTask(makeSyntheticInstance(0)));
    const after = pool.dataVersion();
    expect(after).not.toBe(before);
    expect(pool.dataVersion()).toBe(after);
  });
});

describe('growth tables', () => {
  it('records an outcome delivered twice once, and never for an unknown instance', () => {
    const { pool } = freshPool();
    addSynthetic(pool, 1);
    const id = makeSyntheticInstance(0).instance_id;
    expect(pool.recordAttemptOnce('r1/x/0', id, { reward: 3, solved: true })).toEqual({ status: 'recorded', stats: { attempts: 1, solved: 1, meanReward: 3, solveRate: 1 } });
    expect(pool.recordAttemptOnce('r1/x/0', id, { reward: 3, solved: true })).toEqual({ status: 'duplicate' });
    expect(pool.recordAttemptOnce('r1/x/1', id, { reward: 0, solved: false }).status).toBe('recorded');
    expect(pool.recordAttemptOnce('r1/y/0', 'nope', { reward: 0, solved: false })).toEqual({ status: 'unknown-instance' });
    expect(pool.stats(id)).toMatchObject({ attempts: 2, solved: 1 });
  });

  it('filters by band after a minimum number of attempts and counts outcomes per arm', () => {
    const { pool } = freshPool();
    addSynthetic(pool, 4);
    const ids = [0, 1, 2, 3].map((index) => makeSyntheticInstance(index).instance_id);
    const record = (id: string, solved: boolean[]) => solved.forEach((s) => pool.recordAttempt(id, { reward: s ? 3 : 0, solved: s }));
    record(ids[0] as string, [true, false]);
    record(ids[1] as string, [false, false]);
    record(ids[2] as string, [true]);
    const select = (bands: Parameters<Pool['count']>[0]) => [...pool.listInstances(bands)].map((entry) => ids.indexOf(entry.instance.instance_id)).sort();
    expect(select({ bands: ['frontier'] })).toEqual([0]);
    expect(select({ bands: ['too-hard', 'too-easy'] })).toEqual([1, 2]);
    expect(select({ bands: ['untried'], minAttempts: 2 })).toEqual([2, 3]);
    expect(pool.count({ bands: [] })).toBe(0);
    const outcomes = pool.armOutcomes();
    expect(outcomes.reduce((sum, group) => sum + group.instances, 0)).toBe(4);
    expect(outcomes.find((group) => group.attempts === 2 && group.solved === 1)?.instances).toBe(1);
  });

  it('registers, updates and removes repos, and stores rounds', () => {
    const { pool } = freshPool();
    expect(pool.putRepo({ repo: 'debian/toolz', spec: 'debian:toolz', weight: 1 })).toBe(true);
    expect(pool.putRepo({ repo: 'debian/toolz', spec: 'debian:toolz', weight: 2 })).toBe(false);
    pool.putRepo({ repo: 'a/b', spec: 'a/b@v1', weight: 1 });
    expect(pool.listRepos().map((repo) => [repo.repo, repo.weight])).toEqual([['a/b', 1], ['debian/toolz', 2]]);
    expect(pool.removeRepo('a/b@v1')).toBe(true);
    expect(pool.removeRepo('a/b')).toBe(false);
    const round = {
      roundId: 'r1', seed: 1, status: 'running' as const, startedAt: '2026-01-01T00:00:00Z', finishedAt: null, budget: 10, rollouts: 2, minAttempts: 2, solver: 'baseline',
      plan: [], arms: [], repos: [], bands: { untried: 0, 'too-hard': 0, frontier: 0, 'too-easy': 0 }, newInstances: 0, revisited: 0, rolloutsRun: 0, duplicateOutcomes: 0, tokens: 0, seconds: 0, secondsPerKept: null,
    };
    pool.putRound(round);
    pool.putRound({ ...round, status: 'done' });
    expect(pool.listRounds()).toEqual([{ ...round, status: 'done' }]);
    expect(pool.getRound('r1')?.status).toBe('done');
  });
});
