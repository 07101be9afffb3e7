import { describe, expect, it } from 'vitest';
import type { Trajectory } from '@envgen/agent';
import { formatRunReport, summarizeRun } from './run-command.js';

function trajectory(reward: [number, number, number], solved: boolean, reason: Trajectory['finish']['reason'], tokens = 0): Trajectory {
  const [file, module, entity] = reward;
  return {
    instance_id: 'i',
    run_id: 'r',
    solver: 'agent',
    model: 'm',
    messages: [],
    tools: [],
    locations: null,
    finish: { reason },
    reward: { reward: file + module + entity, file, module, entity, valid: reason === 'localization_finish' },
    solved,
    usage: { prompt_tokens: tokens, completion_tokens: tokens / 2, total_tokens: tokens * 1.5 },
    turns: 1,
    tool_calls: 1,
    timing: { started_at: '2025-01-01T00:00:00.000Z', duration_ms: 1, model_ms: 0, tool_ms: 0 },
  };
}

describe('summarizeRun', () => {
  it('averages rewards, levels and solves over scored rollouts only, and counts every token and ending', () => {
    const report = summarizeRun(
      'r',
      'agent',
      'm',
      '/out/r.jsonl',
      3,
      [
        trajectory([1, 1, 1], true, 'localization_finish', 100),
        trajectory([1, 0.5, 0], false, 'localization_finish', 200),
        trajectory([0, 0, 0], false, 'max_turns', 400),
        trajectory([0, 0, 0], false, 'error', 40),
      ],
      12.5,
    );
    expect(report).toMatchObject({ rollouts: 4, scored: 3, errors: 1, instances: 3, solveRate: 1 / 3, finish: { localization_finish: 2, max_turns: 1, error: 1 } });
    expect(report.meanReward).toBeCloseTo(4.5 / 3, 12);
    expect(report.levels).toEqual({ file: 2 / 3, module: 0.5, entity: 1 / 3 });
    expect(report.usage).toEqual({ prompt_tokens: 740, completion_tokens: 370, total_tokens: 1110 });
    expect(formatRunReport(report)).toBe(
      [
        'run r: 4 agent rollout(s) on 3 instance(s) with m in 12.5 s',
        '  mean reward   1.500 of 3',
        '  solve rate    33.3%',
        '  F1 per level  file 0.667  module 0.500  entity 0.333',
        '  episodes      2 answered, 1 out of turns, 1 model errors (not recorded)',
        '  tokens        1110 (740 prompt, 370 completion)',
        '  trajectories  /out/r.jsonl',
      ].join('\n'),
    );
  });

  it('reports no means when nothing was scored', () => {
    const report = summarizeRun('r', 'baseline', null, '/f', 1, [trajectory([0, 0, 0], false, 'error')], 1);
    expect(report).toMatchObject({ scored: 0, meanReward: null, solveRate: null, levels: null });
    expect(formatRunReport(report)).toContain('  mean reward   – of 3\n  solve rate    –\n  F1 per level  file –  module –  entity –');
  });
});
