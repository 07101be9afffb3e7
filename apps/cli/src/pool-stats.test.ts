import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openPool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, scratchBase } from '@envgen/pool/test-support';
import type { PoolStatsReport } from './pool-stats.js';
import { runCli } from './run-cli.test-support.js';

const homes: string[] = [];

afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function freshHome(): string {
  const home = mkdtempSync(join(scratchBase(), 'envgen-cli-stats-'));
  homes.push(home);
  return home;
}

/**
 * Six instances (even index: pytoolz/toolz, odd: uiri/toml; strategies cycle over
 * change_operator, invert_if_else, remove_function_body) with outcomes:
 * 0 too hard, 1 frontier (1/2), 2 too easy, 3 frontier (2/3), 4 and 5 untried.
 */
function makeStatsHome(): string {
  const home = freshHome();
  const pool = openPool(home);
  for (let index = 0; index < 6; index += 1) {
    const instance = makeSyntheticInstance(index);
    pool.addInstance(instance, makeSyntheticBundle(instance));
  }
  const record = (index: number, outcomes: Array<[number, boolean]>): void => {
    for (const [reward, solved] of outcomes) pool.recordAttempt(makeSyntheticInstance(index).instance_id, { reward, solved });
  };
  record(0, [[0, false], [1, false]]);
  record(1, [[3, true], [1, false]]);
  record(2, [[3, true]]);
  record(3, [[3, true], [3, true], [0, false]]);
  pool.close();
  return home;
}

describe('envgen pool stats', () => {
  it('prints the spread per repo, per strategy and in total', async () => {
    const home = makeStatsHome();
    const { code, stdout } = await runCli(['pool', 'stats'], home);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^ {2}repo\s+instances\s+untried\s+too hard\s+frontier\s+too easy\s+attempts\s+mean reward\s+solve rate$/);
    // toolz: 3 instances, untried 1, too hard 1, frontier 0, too easy 1, 3 attempts, rewards 4/3, solve rates {0, 1}.
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}pytoolz\/toolz\s+3\s+1\s+1\s+0\s+1\s+3\s+1\.333\s+0\.500$/));
    // toml: frontier 2, 5 attempts, rewards 10/5, solve rates {1/2, 2/3}.
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}uiri\/toml\s+3\s+1\s+0\s+2\s+0\s+5\s+2\.000\s+0\.583$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}change_operator\s+2\s+0\s+1\s+1\s+0\s+5\s+/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}all\s+6\s+2\s+1\s+2\s+1\s+8\s+1\.750\s+0\.542$/));
    expect(stdout).toContain('frontier 2 of 4 tried instances (50%)');
  });

  it('filters by repo and strategy and prints the report as JSON', async () => {
    const home = makeStatsHome();
    const { code, stdout } = await runCli(['pool', 'stats', '--repo', 'uiri/toml', '--json'], home);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as PoolStatsReport;
    expect(report.filter).toEqual({ repo: 'uiri/toml' });
    expect(report.total).toMatchObject({ key: 'all', instances: 3, untried: 1, frontier: 2, attempts: 5, solved: 3, meanReward: 2 });
    expect(report.byRepo.map((row) => row.key)).toEqual(['uiri/toml']);
    expect(report.byStrategy.map((row) => [row.key, row.frontier])).toEqual([
      ['change_operator', 1],
      ['invert_if_else', 1],
      ['remove_function_body', 0],
    ]);
    const none = await runCli(['pool', 'stats', '--strategy', 'nothing'], home);
    expect(none.stdout).toBe(`no instance of strategy nothing in the pool at ${join(home, 'pool')}\n`);
  });

  it('says how to fill an empty pool and an untried one', async () => {
    const empty = freshHome();
    expect((await runCli(['pool', 'stats'], empty)).stdout).toMatch(/is empty; add instances with: envgen inject/);
    const untried = freshHome();
    const pool = openPool(untried);
    const instance = makeSyntheticInstance(0);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    pool.close();
    expect((await runCli(['pool', 'stats'], untried)).stdout).toMatch(/no outcomes recorded yet for the 1 instances; score rollouts through envgen serve/);
  });
});
