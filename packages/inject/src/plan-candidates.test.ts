import { describe, expect, it } from 'vitest';
import { STRATEGIES, selectStrategies } from '@envgen/mutate';
import { hasSyntaxErrors } from '@envgen/python';
import { applyPatch } from '@envgen/patch';
import { baselineOf, GEOMETRY, sourceFile } from './inject-fixtures.fixture.js';
import { changesAny, planCandidates } from './plan-candidates.js';
import type { PlannedCandidate } from './plan-candidates.js';
import { selectSites } from './sites.js';

const file = sourceFile('geo.py', GEOMETRY);
const everyTest = { 't::a': { outcome: 'passed' as const, duration: 0.1 } };
const baseline = baselineOf(everyTest, Object.fromEntries(file.entities.filter((e) => e.kind !== 'class').map((e) => [`geo.py:${e.qualifiedName}`, ['t::a']])));
const { sites } = selectSites([file], baseline);
const strategies = Object.values(STRATEGIES);

function take(seed: number, count: number): PlannedCandidate[] {
  const planned: PlannedCandidate[] = [];
  for (const item of planCandidates({ files: [file], sites, strategies, seed })) {
    if (item.kind === 'candidate') planned.push(item);
    if (planned.length === count) break;
  }
  return planned;
}

describe('planCandidates', () => {
  it('proposes the same candidates for the same seed and others for another seed', () => {
    const first = take(7, 20).map((item) => item.candidate.patch);
    expect(take(7, 20).map((item) => item.candidate.patch)).toEqual(first);
    expect(take(8, 20).map((item) => item.candidate.patch)).not.toEqual(first);
    expect(new Set(first).size).toBe(first.length);
  });

  it('yields patches that apply to the clean file and give parseable buggy code', () => {
    for (const { candidate, files } of take(3, 30)) {
      expect(candidate.entities[0]).toMatch(/^geo\.py:/);
      const applied = applyPatch((path) => (path === 'geo.py' ? GEOMETRY : null), candidate.patch);
      expect(applied.ok && applied.files[0]?.after).toBe(files[0]?.after);
      expect(hasSyntaxErrors(files[0]?.after ?? '')).toBe(false);
    }
  });

  it('lets every strategy that has a site take turns', () => {
    const used = new Set(take(11, 60).map((item) => item.candidate.strategy));
    expect(used.size).toBeGreaterThanOrEqual(8);
  });

  it('changes only lines the baseline saw run when it knows them', () => {
    // Odd lines only: a site on an even line is code no test ran.
    const executedLines = new Set(GEOMETRY.split('\n').map((_, index) => index + 1).filter((line) => line % 2 === 1));
    const changedLine = (after: string): number => GEOMETRY.split('\n').findIndex((line, index) => line !== after.split('\n')[index]) + 1;
    const planned: PlannedCandidate[] = [];
    for (const item of planCandidates({ files: [{ ...file, executedLines }], sites, strategies: selectStrategies(['change_constant', 'change_operator']), seed: 5 })) {
      if (item.kind === 'candidate') planned.push(item);
    }
    expect(planned.length).toBeGreaterThanOrEqual(2);
    for (const { files } of planned) expect(changedLine(files[0]?.after ?? '') % 2).toBe(1);
    // Without them, the same seed does change even lines.
    expect(take(5, 40).some(({ candidate, files }) => ['change_constant', 'change_operator'].includes(candidate.strategy) && changedLine(files[0]?.after ?? '') % 2 === 0)).toBe(true);
  });

  it('changes no line that ran at collection in an entity whose other lines ran only in tests', () => {
    // A loop header and an if that collection ran (the import's first call), bodies that only tests reached.
    const source = ['def build(rules, extra):', '    out = []', '    for rule in rules:', '        if rule.startswith("#"):', '            out.append(rule[1:] + extra)', '            continue', '        out.append(rule * 2)', '    return out', ''].join('\n');
    const executedLines = new Set([1, 2, 3, 4, 5, 6, 7, 8]);
    const collectionLines = new Set([1, 2, 3, 4, 7, 8]);
    const loaded = { ...sourceFile('rules.py', source), executedLines, collectionLines };
    const results = { 't.py::a': { outcome: 'passed' as const, duration: 0.01 } };
    const confined = selectSites([loaded], { ...baselineOf(results, { 'rules.py:build': ['t.py::a'] }), ranAtCollection: ['rules.py:build'] }).sites;
    const planned: PlannedCandidate[] = [];
    let dropped = 0;
    for (const item of planCandidates({ files: [loaded], sites: confined, strategies, seed: 3 })) {
      if (item.kind === 'candidate') planned.push(item);
      else if (item.reason === 'ran-at-collection') dropped += 1;
    }
    expect(planned.length).toBeGreaterThan(0);
    for (const { files } of planned) expect(changesAny(source, files[0]?.after ?? '', collectionLines)).toBe(false);
    // Removing the loop or the if, whose headers ran at collection, was proposed and dropped.
    expect(dropped).toBeGreaterThan(0);
  });

  it('tells which lines an edit changes', () => {
    const before = 'a\nb\nc\nd\n';
    expect(changesAny(before, 'a\nB\nc\nd\n', new Set([2]))).toBe(true);
    expect(changesAny(before, 'a\nB\nc\nd\n', new Set([1, 3]))).toBe(false);
    expect(changesAny(before, 'a\nd\n', new Set([3]))).toBe(true);
    expect(changesAny(before, 'a\nb\nx\nc\nd\n', new Set([1, 3]))).toBe(false);
    expect(changesAny(before, 'a\nb\nx\nc\nd\n', new Set([2]))).toBe(true);
  });

  it('stops when no site is left rather than looping', () => {
    const none = [...planCandidates({ files: [file], sites: [], strategies, seed: 1 })];
    expect(none).toEqual([]);
  });
});
