import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgress, runInject, runRepairRun } from '@envgen/cli';
import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import type { Instance } from '@envgen/core';
import { parsePatch, isPatchProblem } from '@envgen/patch';
import { openPool } from '@envgen/pool';
import type { SelfPlayTrajectory } from '@envgen/selfplay';
import { freshHomeFromCorpus } from '../support/corpus.js';
import { startScriptedOpenAI } from '../support/scripted-openai.js';
import type { ScriptedOpenAI, ScriptedReply } from '../support/scripted-openai.js';

const quiet = createProgress({ quiet: true });
let home: string;
let settings: Settings;
let instance: Instance;
const servers: ScriptedOpenAI[] = [];

beforeAll(async () => {
  home = freshHomeFromCorpus();
  settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
  await runInject({ repo: 'debian:toolz', count: 6, seed: 3, combine: 0, strategies: ['change_operator', 'remove_assignment'], tasks: null }, settings, silentLogger, quiet);
  const pool = openPool(home);
  const singleFile = [...pool.listInstances()].filter((entry) => {
    const parsed = parsePatch(entry.instance.patch);
    return !isPatchProblem(parsed) && parsed.files.length === 1;
  });
  pool.close();
  if (singleFile[0] === undefined) throw new Error('no single-file toolz instance');
  instance = singleFile[0].instance;
}, 600_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  rmSync(home, { recursive: true, force: true });
});

function bugFile(): string {
  const parsed = parsePatch(instance.patch);
  if (isPatchProblem(parsed)) throw new Error(parsed.message);
  return parsed.files[0]?.newPath ?? '';
}

function readTrajectories(file: string): SelfPlayTrajectory[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as SelfPlayTrajectory);
}

describe('envgen run --task repair on procedural toolz instances, against a scripted model', () => {
  it('scores a real fix +1 and a wrong edit -1 in a fresh sandbox, and records both attempts', async () => {
    const submit = { name: 'submit', arguments: {} };
    const replies: ScriptedReply[] = [
      // Rollout 1: reverts the bug with git in the terminal (the checkout has one commit: bug + weakening).
      { tool_calls: [{ name: 'terminal', arguments: { command: 'git log --oneline | wc -l && git status --short' } }] },
      { tool_calls: [{ name: 'terminal', arguments: { command: `git apply -R <<'ENVGEN_EOF'\n${instance.patch}ENVGEN_EOF` } }, submit] },
      // Rollout 2: a harmless edit with the editor that fixes nothing.
      { tool_calls: [{ name: 'str_replace_editor', arguments: { command: 'insert', path: `/tmp/repo/${bugFile()}`, insert_line: 0, new_str: '# looked here' } }, submit] },
    ];
    const server = await startScriptedOpenAI(replies);
    servers.push(server);
    const report = await runRepairRun(
      { repo: 'debian:toolz', model: 'scripted-model', baseUrl: server.baseURL, strategy: instance.strategy, limit: 1, attempts: 2, concurrency: 1, runId: 'repair-e2e' },
      settings,
      silentLogger,
      quiet,
    );
    expect(report).toMatchObject({ instances: 1, rollouts: 2, scored: 2, errors: 0, solveRate: 0.5, meanReward: 0, failures: { 'tests-fail': 1 } });
    const [fixed, wrong] = readTrajectories(report.trajectories);
    expect(fixed).toMatchObject({ role: 'solver', instance_id: instance.instance_id, reward: 1, finish: { reason: 'submit' }, order: 1, parent: null });
    expect(fixed?.evaluation).toMatchObject({ failure: null, failing: [], missing: [] });
    // The checkout had no history: one commit, and a clean status.
    const log = fixed?.messages.find((message) => message.role === 'tool')?.content ?? '';
    expect(log).toMatch(/^1\n\[The command/);
    // The fix is the bug reversed: every line the bug added, it removes.
    const added = instance.patch.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++'));
    for (const line of added) expect(fixed?.patch).toContain(`\n-${line.slice(1)}\n`);
    expect(wrong).toMatchObject({ reward: -1, evaluation: { failure: { kind: 'tests-fail' } } });
    expect(wrong?.evaluation?.failing.length).toBeGreaterThan(0);
    expect(wrong?.patch).toContain('+# looked here');
    expect(wrong?.tools.map((tool) => tool.function.name)).toEqual(['terminal', 'str_replace_editor', 'submit']);
    // The statement is the self-play kind: the reversed weakening.
    expect(server.requests[0]?.messages[1]?.content).toContain('The diff below restores tests that were removed');
    const pool = openPool(home);
    expect(pool.stats(instance.instance_id)).toMatchObject({ attempts: 2, solved: 1 });
    pool.close();
  });
});
