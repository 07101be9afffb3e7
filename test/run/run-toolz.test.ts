import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBaselineRollout } from '@envgen/agent';
import type { Trajectory } from '@envgen/agent';
import { createProgress, runInject, runRun } from '@envgen/cli';
import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import type { Task } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { acquireRepo, createWorktree, parseRepoSpec } from '@envgen/repo';
import { freshHomeFromCorpus } from '../support/corpus.js';
import { hermesToolCalls, startScriptedOpenAI } from '../support/scripted-openai.js';
import type { ScriptedOpenAI, ScriptedReply } from '../support/scripted-openai.js';

const quiet = createProgress({ quiet: true });
let home: string;
let settings: Settings;
let tasks: Task[];
const servers: ScriptedOpenAI[] = [];

beforeAll(async () => {
  home = freshHomeFromCorpus();
  settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
  await runInject({ repo: 'debian:toolz', count: 8, seed: 3, combine: 0, tasks: { statement: 'tests' } }, settings, silentLogger, quiet);
  const pool = openPool(home);
  tasks = [...pool.listInstances({ hasTask: true })].flatMap((entry) => (entry.task === null ? [] : [entry.task]));
  pool.close();
}, 600_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  rmSync(home, { recursive: true, force: true });
});

function readTrajectories(file: string): Trajectory[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Trajectory);
}

/** The gold of a task as `localization_finish` locations: one per edited entity, else per file. */
function goldLocations(task: Task): Array<{ file: string; class_name?: string; function_name?: string }> {
  return task.file_changes.flatMap((file) => {
    if (file.changes.edited_entities.length === 0) return [{ file: file.file }];
    return file.changes.edited_entities.map((entity) => {
      const name = entity.slice(entity.indexOf(':') + 1);
      const dot = name.lastIndexOf('.');
      return dot < 0 ? { file: file.file, function_name: name } : { file: file.file, class_name: name.slice(0, dot), function_name: name.slice(dot + 1) };
    });
  });
}

describe('envgen run on real toolz instances', () => {
  it('has tasks to run on', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(3);
  });

  it('runs the BM25 baseline over every task, scores it above zero and records each attempt', async () => {
    const report = await runRun({ solver: 'baseline' }, settings, silentLogger, quiet);
    expect(report).toMatchObject({ instances: tasks.length, rollouts: tasks.length, scored: tasks.length, errors: 0 });
    expect(report.meanReward).toBeGreaterThan(0.5);
    expect(report.levels?.file).toBeGreaterThan(0.5);
    const trajectories = readTrajectories(report.trajectories);
    expect(new Set(trajectories.map((t) => t.instance_id))).toEqual(new Set(tasks.map((task) => task.instance_id)));
    expect(report.solveRate).toBe(trajectories.filter((t) => t.solved).length / tasks.length);
    const pool = openPool(home);
    for (const trajectory of trajectories) {
      expect(pool.stats(trajectory.instance_id)).toMatchObject({ attempts: 1, solved: trajectory.solved ? 1 : 0, meanReward: trajectory.reward.reward });
    }
    pool.close();
  });

  it('drives the real agent loop on each leak-free checkout through a scripted server, native and Hermes style', async () => {
    const byStatement = (issue: string): Task => {
      const task = tasks.find((candidate) => issue.includes(candidate.problem_statement.text.trim()));
      if (task === undefined) throw new Error('no task matches the issue sent');
      return task;
    };
    const server = await startScriptedOpenAI((request): ScriptedReply => {
      const task = byStatement(String(request.messages[1]?.content ?? ''));
      const hermes = tasks.indexOf(task) % 2 === 1;
      const gold = goldLocations(task);
      const first = gold[0];
      if (request.messages.length === 2) {
        // Parallel calls: find the definition, and look at the history the checkout carries.
        const calls = [
          { name: 'terminal', arguments: { command: `rg -n "def ${first?.function_name ?? 'frequencies'}\\b" toolz | head -5` } },
          { name: 'terminal', arguments: { command: 'git log --oneline | wc -l; git status --short | wc -l' } },
        ];
        return hermes ? { content: hermesToolCalls(calls, 'Searching for the definition.') } : { content: 'Searching for the definition.', tool_calls: calls };
      }
      const finish = [{ name: 'localization_finish', arguments: { locations: gold } }];
      return hermes ? { content: hermesToolCalls(finish) } : { tool_calls: finish };
    });
    servers.push(server);
    const report = await runRun({ solver: 'agent', baseUrl: server.baseURL, model: 'OpenHands/CodeScout-1.7B', concurrency: 2 }, settings, silentLogger, quiet);
    expect(report).toMatchObject({ rollouts: tasks.length, scored: tasks.length, meanReward: 3, solveRate: 1, finish: { localization_finish: tasks.length } });
    for (const trajectory of readTrajectories(report.trajectories)) {
      const task = tasks.find((candidate) => candidate.instance_id === trajectory.instance_id) as Task;
      expect(trajectory.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool']);
      const [rg, history] = trajectory.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      const fnName = goldLocations(task)[0]?.function_name;
      if (fnName !== undefined) expect(rg).toContain(`def ${fnName}`);
      // One commit, nothing changed: the checkout holds the bug and no trace of the fix.
      expect(history).toBe('1\n0\n[The command completed with exit code 0.]');
    }
    const pool = openPool(home);
    for (const task of tasks) expect(pool.stats(task.instance_id)?.attempts).toBe(2);
    pool.close();
  });

  it('the baseline finds a function planted with a bug in the real toolz source', async () => {
    const repo = await acquireRepo(parseRepoSpec('debian:toolz'), { home });
    const worktree = await createWorktree(repo, { home });
    try {
      const path = join(worktree.path, 'toolz', 'itertoolz.py');
      const source = readFileSync(path, 'utf8');
      expect(source).toContain('        d[item] += 1\n');
      writeFileSync(path, source.replace('        d[item] += 1\n', '        d[item] += 2\n'));
      const trajectory = await runBaselineRollout({
        checkout: worktree.path,
        runId: 'planted',
        task: {
          instance_id: 'debian__toolz.planted',
          problem_statement: {
            kind: 'tests',
            text: 'These tests fail and should pass:\n- toolz/tests/test_itertoolz.py::test_frequencies\n\n```python\ndef test_frequencies():\n    assert (frequencies(["cat", "pig", "cat", "eel", "pig", "dog", "dog", "dog"]) ==\n            {"cat": 2, "eel": 1, "pig": 2, "dog": 3})\n    assert frequencies([]) == {}\n    assert frequencies("onomatopoeia") == {"a": 2, "e": 1, "i": 1, "m": 1, "o": 4, "n": 1, "p": 1, "t": 1}\n```\nE   AssertionError',
            created_at: '2025-01-01T00:00:00.000Z',
          },
          file_changes: [
            { file: 'toolz/itertoolz.py', changes: { edited_entities: ['toolz/itertoolz.py:frequencies'], edited_modules: ['toolz/itertoolz.py:frequencies'], added_entities: [], added_modules: [] } },
          ],
        },
      });
      expect(trajectory.locations).toEqual([{ file: 'toolz/itertoolz.py', class_name: null, function_name: 'frequencies' }]);
      expect(trajectory.reward.reward).toBe(3);
    } finally {
      await worktree.remove();
    }
  });
});
