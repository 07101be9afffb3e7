import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeInstanceId } from '@envgen/core';
import type { Instance } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { runCli } from './run-cli.test-support.js';
import type { PoolListReport } from './pool-command.js';

const homes: string[] = [];

afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function makeInstance(repo: string, strategy: string, line: number): Instance {
  const [owner = '', name = ''] = repo.split('/');
  const commit = 'c0ffee00'.repeat(5);
  const patch = `--- a/${name}/core.py\n+++ b/${name}/core.py\n@@ -${line},1 +${line},1 @@\n-    return a < b\n+    return a <= b\n`;
  return {
    instance_id: makeInstanceId({ owner, name, commit, strategy, patch }),
    repo,
    base_commit: commit,
    patch,
    FAIL_TO_PASS: ['tests/test_core.py::test_less', 'tests/test_core.py::test_sort'],
    PASS_TO_PASS: ['tests/test_core.py::test_other', 'tests/test_core.py::test_more', 'tests/test_core.py::test_rest'],
    strategy,
    family: 'procedural',
    seed: 7,
    entities: [`${name}/core.py:less`],
    description: 'changed < to <=',
    created_at: '2025-03-04T05:06:07.000Z',
  };
}

function makePoolHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'envgen-cli-pool-'));
  homes.push(home);
  const pool = openPool(home);
  const instances = [
    makeInstance('pytoolz/toolz', 'change_operator', 1),
    makeInstance('pytoolz/toolz', 'change_operator', 2),
    makeInstance('pytoolz/toolz', 'invert_if_else', 3),
    makeInstance('uiri/toml', 'change_operator', 4),
  ];
  for (const instance of instances) {
    pool.addInstance(instance, {
      'bug_inject.diff': instance.patch,
      'test_weaken.diff': '',
      'test_files.txt': 'tests/test_core.py\n',
      'test_script.sh': 'python -m pytest -rA\n',
      'test_parser.py': 'print("{}")\n',
    });
  }
  pool.close();
  return home;
}


describe('envgen pool list', () => {
  it('prints a table of instances and the counts per repo and strategy', async () => {
    const home = makePoolHome();
    const { code, stdout } = await runCli(['pool', 'list'], home);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(/^ {2}instance\s+repo\s+strategy\s+F2P\s+P2P\s+created$/);
    expect(lines.filter((line) => /^ {2}\S+__\S+\s+\S+\/\S+\s+\S+\s+2\s+3\s+2025-03-04 05:06$/.test(line))).toHaveLength(4);
    expect(stdout).toContain('per repo      pytoolz/toolz 3 · uiri/toml 1');
    expect(stdout).toContain('per strategy  change_operator 3 · invert_if_else 1');
    expect(stdout).toContain(`4 instances (pool of 4 at ${join(home, 'pool')})`);
  });

  it('filters by repo and strategy, limits the rows, and prints one JSON object with --json', async () => {
    const home = makePoolHome();
    const { code, stdout } = await runCli(['pool', 'list', '--repo', 'pytoolz/toolz', '--strategy', 'change_operator', '--limit', '1', '--json'], home);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as PoolListReport;
    expect(report).toMatchObject({
      filter: { repo: 'pytoolz/toolz', strategy: 'change_operator' },
      total: 4,
      matching: 2,
      byRepo: [{ key: 'pytoolz/toolz', count: 2 }],
      byStrategy: [{ key: 'change_operator', count: 2 }],
    });
    expect(report.instances).toEqual([
      expect.objectContaining({ repo: 'pytoolz/toolz', strategy: 'change_operator', failToPass: 2, passToPass: 3, attempts: 0, solveRate: null }),
    ]);
    const human = await runCli(['pool', 'list', '--repo', 'pytoolz/toolz', '--limit', '2'], home);
    expect(human.stdout).toContain('showing 2 of 3 instances of repo pytoolz/toolz; --limit 0 shows all');
  });

  it('says how to fill an empty pool, and rejects a bad --limit as usage', async () => {
    const home = mkdtempSync(join(tmpdir(), 'envgen-cli-pool-'));
    homes.push(home);
    const empty = await runCli(['pool', 'list'], home);
    expect(empty).toMatchObject({ code: 0, stdout: `the pool at ${join(home, 'pool')} is empty; add instances with: envgen inject --repo <repo>\n` });
    const bad = await runCli(['pool', 'list', '--limit', 'many'], home);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--limit.*non-negative integer/);
  });

  it('shows examples in --help', async () => {
    const home = mkdtempSync(join(tmpdir(), 'envgen-cli-pool-'));
    homes.push(home);
    const help = await runCli(['pool', 'list', '--help'], home);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('$ envgen pool list --repo pytoolz/toolz --strategy change_operator --limit 0');
  });
});
