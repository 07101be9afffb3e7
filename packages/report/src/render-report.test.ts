import { describe, expect, it } from 'vitest';
import type { SpreadRow } from '@envgen/pool';
import { renderReport } from './render-report.js';
import type { ReportInput } from './report-input.js';

function row(key: string, instances: number, bands: [number, number, number, number]): SpreadRow {
  const [untried, tooHard, frontier, tooEasy] = bands;
  return { key, instances, untried, tooHard, frontier, tooEasy, attempts: 2 * (instances - untried), solved: frontier + 2 * tooEasy, meanReward: 1.25, meanSolveRate: 0.5 };
}

const emptyInput: ReportInput = {
  generatedAt: '2025-02-01T10:00:00.000Z',
  pool: '/home/me/.cache/envgen/pool',
  spread: { total: { key: 'all', instances: 0, untried: 0, tooHard: 0, frontier: 0, tooEasy: 0, attempts: 0, solved: 0, meanReward: null, meanSolveRate: null }, byRepo: [], byStrategy: [] },
  growth: { unit: 'day', rows: [] },
  solveRates: [0, 0, 0, 0],
  rejections: [],
  injectRuns: [],
  solverRuns: [],
  rounds: [],
  frontier: { total: 0, shown: [] },
};

const input: ReportInput = {
  ...emptyInput,
  spread: { total: row('all', 10, [2, 3, 4, 1]), byRepo: [row('a/b', 6, [1, 2, 2, 1]), row('c/d', 4, [1, 1, 2, 0])], byStrategy: [row('change_operator', 10, [2, 3, 4, 1])] },
  growth: {
    unit: 'day',
    rows: [
      { period: '2025-01-01', family: 'procedural', band: 'frontier', count: 3 },
      { period: '2025-01-02', family: 'procedural', band: 'too-hard', count: 3 },
      { period: '2025-01-02', family: 'removal', band: 'frontier', count: 4 },
    ],
  },
  solveRates: [3, 2, 2, 1],
  rejections: [{ repo: 'a/b', reason: 'timeout', count: 2 }],
  injectRuns: [
    { finishedAt: '2025-01-01T02:00:00.000Z', repo: 'a/b', seed: 1, tried: 10, kept: 6, known: 1, rejected: { timeout: 3 }, byStrategy: { change_operator: { tried: 10, kept: 6, known: 1, rejected: 3 } }, seconds: 3, secondsPerKept: 0.5 },
  ],
  solverRuns: [{ finishedAt: '2025-01-02T00:00:00.000Z', runId: 'r', solver: 'baseline', model: null, scored: 8, meanReward: 1.5, solveRate: 0.25, levels: { file: 0.75, module: 0.5, entity: 0.25 }, seconds: 2 }],
  rounds: [
    { id: 'r1', started: '2025-01-01T00:00:00.000Z', plan: [{ repo: 'a/b', strategy: 'change_operator', candidates: 30, reason: 'exploration floor' }, { repo: 'c/d', strategy: 'change_operator', candidates: 10, reason: 'new repo' }], candidates: 40, kept: 25, secondsPerKept: 0.4 },
  ],
  frontier: { total: 4, shown: [{ instanceId: 'a__b.1.change_operator__2', repo: 'a/b', strategy: 'change_operator', attempts: 4, solveRate: 0.25, meanReward: 1, show: 'a__b.1.change_operator__2\n-    return x < 1' }] },
};

function marksOf(html: string, chart: string): Array<[string, string, number]> {
  const svg = new RegExp(`<svg class="chart"[^>]*aria-label="${chart}"[\\s\\S]*?</svg>`).exec(html)?.[0] ?? '';
  return [...svg.matchAll(/data-series="([^"]*)" data-category="([^"]*)" data-value="([^"]*)"/g)].map((match) => [match[1] ?? '', match[2] ?? '', Number(match[3])]);
}

describe('renderReport', () => {
  it('is one page that asks for nothing outside itself', () => {
    const html = renderReport(input);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    for (const match of html.matchAll(/\b(?:href|src)="([^"]*)"/g)) expect(match[1]).toMatch(/^#/);
  });

  it('shows the spread figures in tables and band charts', () => {
    const html = renderReport(input);
    expect(html).toContain('<tr data-group="byRepo" data-key="a/b"><td>a/b</td><td class="num" data-field="instances" data-value="6">6</td>');
    expect(html).toContain('data-field="meanReward" data-value="1.25">1.250</td>');
    expect(html).toContain('<tr data-group="total" data-key="all">');
    expect(marksOf(html, 'Bands per repo')).toEqual([
      ['too hard', 'a/b', 2],
      ['frontier', 'a/b', 2],
      ['too easy', 'a/b', 1],
      ['untried', 'a/b', 1],
      ['too hard', 'c/d', 1],
      ['frontier', 'c/d', 2],
      ['untried', 'c/d', 1],
    ]);
    expect(html).toMatch(/<div class="tile" data-tile="frontier"><div class="tile-value">4<\/div>[\s\S]*?50% of the tried instances/);
  });

  it('accumulates the pool size per period, by family and by band', () => {
    const html = renderReport(input);
    expect(marksOf(html, 'Pool size by strategy family')).toEqual([
      ['procedural', '2025-01-01', 3],
      ['procedural', '2025-01-02', 6],
      ['removal', '2025-01-02', 4],
    ]);
    expect(marksOf(html, 'Pool size by band')).toEqual([
      ['frontier', '2025-01-01', 3],
      ['too hard', '2025-01-02', 3],
      ['frontier', '2025-01-02', 7],
    ]);
  });

  it('charts yield, solvers, rounds and validation speed from their records', () => {
    const html = renderReport(input);
    expect(marksOf(html, 'Yield per strategy')).toEqual([
      ['kept', 'change_operator (70%)', 6],
      ['already in the pool', 'change_operator (70%)', 1],
      ['rejected', 'change_operator (70%)', 3],
    ]);
    expect(marksOf(html, 'Mean F1 per localization level, per solver')).toEqual([
      ['file F1', 'baseline', 0.75],
      ['module F1', 'baseline', 0.5],
      ['entity F1', 'baseline', 0.25],
    ]);
    expect(marksOf(html, 'Candidates per arm, per round')).toEqual([
      ['a/b · change_operator', 'r1', 30],
      ['c/d · change_operator', 'r1', 10],
    ]);
    expect(html).toContain('<td>exploration floor</td>');
    expect(marksOf(html, 'Seconds per kept instance, per inject run')).toEqual([['s per kept', '2025-01-01 02:00 a/b', 0.5]]);
    expect(html).toContain('<details class="instance" data-instance="a__b.1.change_operator__2">');
    expect(html).toContain('-    return x &lt; 1');
    expect(html).toContain('the hardest 1 of 4');
  });

  it('says what is missing instead of drawing empty charts', () => {
    const html = renderReport(emptyInput);
    expect(html).not.toContain('<svg');
    expect(html).toContain('no growth rounds yet');
    expect(html).toContain('no inject run recorded yet');
    expect(html).toContain('no solver run recorded yet');
    expect(html).toContain('no outcomes recorded yet');
    expect(html).toContain('no instance on the frontier yet');
  });
});
