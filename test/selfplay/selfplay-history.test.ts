import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createProgress, runSelfPlayCommand } from '@envgen/cli';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { SelfPlayTrajectory } from '@envgen/selfplay';
import { startScriptedOpenAI } from '../support/scripted-openai.js';
import type { ChatRequestBody, ScriptedOpenAI, ScriptedReply } from '../support/scripted-openai.js';
import { CLAMP_TEST, RA_PARSER, RA_SCRIPT, writeCalcRepo } from './calc-fixture.js';

const servers: ScriptedOpenAI[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const editor = (args: Record<string, unknown>) => ({ name: 'str_replace_editor', arguments: args });
const terminal = (command: string) => ({ name: 'terminal', arguments: { command } });

/** A history-aware injector: reads the log, reverts the last fix, deletes the test that catches it, writes its own script and parser. */
const INJECTOR: ScriptedReply[] = [
  { tool_calls: [terminal('git log --oneline')] },
  { tool_calls: [terminal('git revert --no-commit HEAD && mkdir -p _bundle && git diff HEAD -- calc.py > _bundle/bug_inject.diff && cat _bundle/bug_inject.diff')] },
  { tool_calls: [editor({ command: 'str_replace', path: '/tmp/repo/tests/test_calc.py', old_str: CLAMP_TEST, new_str: '' })] },
  {
    tool_calls: [
      terminal('git diff HEAD -- tests/test_calc.py > _bundle/test_weaken.diff && echo tests/test_calc.py > _bundle/test_files.txt'),
      editor({ command: 'create', path: '/tmp/repo/_bundle/test_script.sh', file_text: RA_SCRIPT }),
      editor({ command: 'create', path: '/tmp/repo/_bundle/test_parser.py', file_text: RA_PARSER }),
    ],
  },
  {
    tool_calls: [
      {
        name: 'submit',
        arguments: {
          'bug_inject.diff': '/tmp/repo/_bundle/bug_inject.diff',
          'test_weaken.diff': '_bundle/test_weaken.diff',
          'test_files.txt': '_bundle/test_files.txt',
          'test_script.sh': '_bundle/test_script.sh',
          'test_parser.py': '_bundle/test_parser.py',
        },
      },
    ],
  },
];

const SOLVER: ScriptedReply[] = [
  { tool_calls: [editor({ command: 'str_replace', path: '/tmp/repo/calc.py', old_str: 'return min(lo, max(x, hi))', new_str: 'return max(lo, min(x, hi))' })] },
  { tool_calls: [{ name: 'submit', arguments: {} }] },
];

function turnOf(request: ChatRequestBody): { injector: boolean; turn: number } {
  return { injector: String(request.messages[0]?.content ?? '').includes('bug injector'), turn: request.messages.filter((m) => m.role === 'assistant').length };
}

describe('envgen selfplay with a history-aware injector on a repo with git history', () => {
  it('accepts a bundle that reverts a past fix found in git log, and scores the injector -α when every repair succeeds', async () => {
    const repo = writeCalcRepo();
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    dirs.push(repo, home);
    const server = await startScriptedOpenAI((request) => {
      const { injector, turn } = turnOf(request);
      return (injector ? INJECTOR : SOLVER)[turn] ?? { content: 'done' };
    });
    servers.push(server);
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    const report = await runSelfPlayCommand(
      { repo, model: 'scripted-model', baseUrl: server.baseURL, strategies: ['history'], rounds: 1, group: 1, runId: 'history-e2e' },
      settings,
      silentLogger,
      createProgress({ quiet: true }),
    );
    const [round] = report.rounds;
    // Its task is built from the local repo's own git directory.
    expect(report.tasks).toMatchObject({ built: 1, failed: [] });
    expect(round).toMatchObject({ strategy: 'llm_history', checksPassed: true, failed: [], solverRewards: [1], solveRate: 1, injectorReward: -0.8 });

    const [solver, injector] = readFileSync(report.trajectories, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as SelfPlayTrajectory);
    expect(injector).toMatchObject({ role: 'injector', strategy: 'llm_history', reward: -0.8, solve_rate: 1 });
    expect(solver).toMatchObject({ role: 'solver', reward: 1, instance_id: round?.instanceId });
    // The injector saw the history and was told its strategy.
    const tools = injector?.messages.filter((m) => m.role === 'tool').map((m) => m.content) ?? [];
    expect(tools[0]).toMatch(/^[0-9a-f]{7,} fix clamp\n[0-9a-f]{7,} fixture\n/);
    expect(tools[1]).toContain('+    return min(lo, max(x, hi))');
    expect(injector?.messages[0]?.content).toContain('Strategy: history.');

    const pool = openPool(home);
    try {
      const instance = pool.getInstance(round?.instanceId ?? '');
      expect(instance).toMatchObject({ family: 'llm', FAIL_TO_PASS: ['tests/test_calc.py::test_clamp'], PASS_TO_PASS: ['tests/test_calc.py::test_area'] });
      expect(instance?.patch).toMatch(/^diff --git a\/calc\.py b\/calc\.py\n(.|\n)*- {4}return max\(lo, min\(x, hi\)\)\n\+ {4}return min\(lo, max\(x, hi\)\)\n/);
      expect(pool.readBundle(instance?.instance_id ?? '')['test_parser.py']).toBe(RA_PARSER);
    } finally {
      pool.close();
    }
  });
});
