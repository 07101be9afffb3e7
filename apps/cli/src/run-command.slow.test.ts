import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Trajectory } from '@envgen/agent';
import { resolveConfig } from '@envgen/config';
import { makeInstanceId, silentLogger } from '@envgen/core';
import type { Instance, Task } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { buildInstanceEnvironment } from '@envgen/tasks';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { hermesToolCalls, startScriptedOpenAI } from '../../../test/support/scripted-openai.js';
import type { ScriptedOpenAI } from '../../../test/support/scripted-openai.js';
import { createProgress } from './progress.js';
import { runRun } from './run-command.js';
import { runCli } from './run-cli.test-support.js';
import { readRuns } from './run-records.js';

const quiet = createProgress({ quiet: true });

/** A home whose pool holds two real instances of a fixture repo, with tasks and environments. */
async function makeHome(): Promise<{ home: string; tasks: Task[] }> {
  const repoDir = writeFixtureRepo(
    {
      'shop/__init__.py': '',
      'shop/cart.py': 'class Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return sum(price for price in self.items)\n',
      'shop/money.py': 'def format_money(value):\n    return f"{value:.2f} EUR"\n',
      'tests/test_shop.py': 'from shop.cart import Cart\n\ndef test_total():\n    assert Cart().total() == 0\n',
    },
    { git: true },
  );
  const commit = execFileSync('git', ['-C', repoDir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const bugs = [
    { file: 'shop/cart.py', from: 'for price in self.items)', to: 'for price in self.items) - 1', entity: 'Cart.total', module: 'Cart', statement: 'Cart().total() of an empty cart is -1, not 0 (tests/test_shop.py::test_total).' },
    { file: 'shop/money.py', from: ':.2f} EUR', to: ':.3f} EUR', entity: 'format_money', module: 'format_money', statement: 'format_money(2) gives "2.000 EUR": money is formatted with three decimals.' },
  ];
  const home = mkdtempSync(join(tmpdir(), 'envgen-run-home-'));
  const pool = openPool(home);
  const tasks: Task[] = [];
  try {
    for (const bug of bugs) {
      const path = join(repoDir, bug.file);
      const clean = readFileSync(path, 'utf8');
      writeFileSync(path, clean.replace(bug.from, bug.to));
      const patch = execFileSync('git', ['-C', repoDir, 'diff'], { encoding: 'utf8' });
      writeFileSync(path, clean);
      const instance: Instance = {
        instance_id: makeInstanceId({ owner: 'fixture', name: 'shop', commit, strategy: 'change_operator', patch }),
        repo: 'fixture/shop',
        base_commit: commit,
        patch,
        FAIL_TO_PASS: ['tests/test_shop.py::test_total'],
        PASS_TO_PASS: ['tests/test_shop.py::test_other'],
        strategy: 'change_operator',
        family: 'procedural',
        seed: 0,
        entities: [`${bug.file}:${bug.entity}`],
        description: `planted in ${bug.entity}`,
        created_at: '2025-01-01T00:00:00.000Z',
      };
      pool.addInstance(instance, { 'bug_inject.diff': patch, 'test_weaken.diff': '', 'test_files.txt': 'tests/test_shop.py\n', 'test_script.sh': 'true\n', 'test_parser.py': 'print("{}")\n' });
      const environment = await buildInstanceEnvironment({ home, repo: instance.repo, commit, sourceGitDir: join(repoDir, '.git'), submodules: [], instanceId: instance.instance_id, patch });
      const task: Task = {
        instance_id: instance.instance_id,
        file_changes: [{ file: bug.file, changes: { edited_entities: [`${bug.file}:${bug.entity}`], edited_modules: [`${bug.file}:${bug.module}`], added_entities: [], added_modules: [] } }],
        problem_statement: { kind: 'tests', text: bug.statement, created_at: instance.created_at },
        environment,
        image_name: 'envgen/python:bookworm',
      };
      pool.putTask(task);
      tasks.push(task);
    }
  } finally {
    pool.close();
  }
  tasks.sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1));
  return { home, tasks };
}

function readTrajectories(file: string): Trajectory[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Trajectory);
}

const servers: ScriptedOpenAI[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

describe('envgen run', () => {
  it('runs the baseline offline on every task, records each outcome in the pool and writes the trajectories', async () => {
    const { home, tasks } = await makeHome();
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    // A temporary directory of this run's own: another envgen on the machine may hold checkouts in the shared one.
    const scratch = mkdtempSync(join(tmpdir(), 'envgen-run-tmp-'));
    const savedTmpdir = process.env['TMPDIR'];
    process.env['TMPDIR'] = scratch;
    let report: Awaited<ReturnType<typeof runRun>>;
    try {
      report = await runRun({ solver: 'baseline', attempts: 2 }, settings, silentLogger, quiet);
    } finally {
      if (savedTmpdir === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = savedTmpdir;
    }
    expect(report).toMatchObject({ solver: 'baseline', model: null, instances: 2, rollouts: 4, scored: 4, errors: 0, meanReward: 3, solveRate: 1 });
    expect(report.levels).toEqual({ file: 1, module: 1, entity: 1 });
    expect(readRuns(home, 'solver')).toEqual([expect.objectContaining({ runId: report.runId, solver: 'baseline', model: null, scored: 4, levels: report.levels })]);
    expect(report.trajectories).toBe(join(home, 'rollouts', `${report.runId}.jsonl`));
    const trajectories = readTrajectories(report.trajectories);
    expect(trajectories.map((t) => t.instance_id).sort()).toEqual([tasks[0]?.instance_id, tasks[0]?.instance_id, tasks[1]?.instance_id, tasks[1]?.instance_id].sort());
    for (const trajectory of trajectories) expect(trajectory).toMatchObject({ run_id: report.runId, solver: 'baseline', solved: true, reward: { reward: 3 } });
    const pool = openPool(home);
    for (const task of tasks) expect(pool.stats(task.instance_id)).toEqual({ attempts: 2, solved: 2, meanReward: 3, solveRate: 1 });
    pool.close();
    // The checkouts are gone.
    expect(readdirSync(scratch).filter((name) => name.startsWith('envgen-checkouts-'))).toEqual([]);
    rmSync(scratch, { recursive: true, force: true });
  });

  it('drives the agent through an OpenAI-compatible server, scores each episode, and leaves endpoint failures unrecorded', async () => {
    const { home, tasks } = await makeHome();
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    // The scripted model greps for the word of the statement it was given, then answers with what it found.
    const server = await startScriptedOpenAI((request) => {
      const issue = String(request.messages[1]?.content ?? '');
      const cart = issue.includes('Cart()');
      if (request.messages.length === 2) {
        return { tool_calls: [{ name: 'terminal', arguments: { command: `rg -l "${cart ? 'def total' : 'def format_money'}"` } }], usage: { prompt_tokens: 500, completion_tokens: 20 } };
      }
      const found = String(request.messages[3]?.content ?? '').split('\n')[0] ?? '';
      const location = cart ? { file: found, class_name: 'Cart', function_name: 'total' } : { file: found, function_name: 'wrong_guess' };
      return { content: hermesToolCalls([{ name: 'localization_finish', arguments: { locations: [location] } }]), usage: { prompt_tokens: 600, completion_tokens: 30 } };
    });
    servers.push(server);
    const out = mkdtempSync(join(tmpdir(), 'envgen-rollouts-'));
    const report = await runRun({ solver: 'agent', baseUrl: server.baseURL, model: 'OpenHands/CodeScout-1.7B', concurrency: 2, out, runId: 'fixed-run' }, settings, silentLogger, quiet, {});
    expect(report).toMatchObject({ runId: 'fixed-run', solver: 'agent', model: 'OpenHands/CodeScout-1.7B', rollouts: 2, scored: 2, errors: 0, trajectories: join(out, 'fixed-run.jsonl') });
    expect(report.usage).toEqual({ prompt_tokens: 2200, completion_tokens: 100, total_tokens: 2300 });
    // The cart episode is exact (3); the money one has the file and nothing else (1).
    expect(report.meanReward).toBe(2);
    expect(report.solveRate).toBe(0.5);
    expect(report.levels).toEqual({ file: 1, module: 0.5, entity: 0.5 });
    const byId = new Map(readTrajectories(report.trajectories).map((t) => [t.instance_id, t]));
    const cart = [...byId.values()].find((t) => t.locations?.[0]?.file === 'shop/cart.py');
    expect(cart?.messages[3]).toMatchObject({ role: 'tool', content: 'shop/cart.py\n[The command completed with exit code 0.]' });
    expect(server.requests[0]?.model).toBe('OpenHands/CodeScout-1.7B');
    const pool = openPool(home);
    expect(tasks.map((task) => pool.stats(task.instance_id)?.attempts)).toEqual([1, 1]);
    pool.close();

    // A server that fails every call: the rollouts end with reason error and leave the pool alone.
    const failing = await startScriptedOpenAI(() => ({ error: { status: 400, message: 'context length exceeded' } }));
    servers.push(failing);
    const broken = await runRun({ baseUrl: failing.baseURL, model: 'm', out }, settings, silentLogger, quiet);
    expect(broken).toMatchObject({ rollouts: 2, scored: 0, errors: 2, meanReward: null, finish: { error: 2 } });
    const after = openPool(home);
    expect(tasks.map((task) => after.stats(task.instance_id)?.attempts)).toEqual([1, 1]);
    after.close();
  });

  it('says what to do without a model, without a reachable server, and without tasks (exit 2 or 1)', async () => {
    const { home } = await makeHome();
    const noModel = await runCli(['run'], home);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/the agent needs a model: pass --model NAME and --base-url URL .* or run offline with --solver baseline/);
    const down = await runCli(['run', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1'], home);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/the model endpoint http:\/\/127\.0\.0\.1:9\/v1 failed: .*is the server running\?/);
    const empty = await runCli(['run', '--solver', 'baseline', '--repo', 'nobody/nothing'], home);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no instance with a task in the pool .* for repo nobody\/nothing; make some with: envgen inject/);
    const json = await runCli(['run', '--solver', 'baseline', '--limit', '1', '--json'], home);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ solver: 'baseline', instances: 1, rollouts: 1, meanReward: 3 });
    const badLevel = await runCli(['run', '--solver', 'baseline', '--solved-by', 'lines'], home);
    expect(badLevel.code).toBe(2);
    expect(badLevel.stderr).toMatch(/--solved-by lines is not a score; pass one of entity, module, file, total/);
    const byTotal = await runCli(['run', '--solver', 'baseline', '--limit', '1', '--solved-by', 'total', '--solved-threshold', '2.5', '--json'], home);
    expect(JSON.parse(byTotal.stdout)).toMatchObject({ rollouts: 1, solveRate: 1 });
    const text = await runCli(['run', '--solver', 'baseline'], home);
    expect(text.stdout).toMatch(/^run \S+-baseline-[0-9a-f]{6}: 2 baseline rollout\(s\) on 2 instance\(s\) in [\d.]+ s\n {2}mean reward {3}3\.000 of 3\n {2}solve rate {4}100\.0%/);
  });
});
