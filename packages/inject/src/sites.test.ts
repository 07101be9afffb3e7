import { describe, expect, it } from 'vitest';
import { baselineOf, GEOMETRY, sourceFile } from './inject-fixtures.fixture.js';
import { FILE_COST, RAN_AT_COLLECTION_WEIGHT, selectSites } from './sites.js';
import type { SourceFile } from './sites.js';

const file = sourceFile('geo.py', GEOMETRY);

describe('selectSites', () => {
  it('keeps entities covered by non-flaky passing tests and counts the rest as skipped', () => {
    const baseline = baselineOf(
      {
        't.py::test_square': { outcome: 'passed', duration: 0.01 },
        't.py::test_total': { outcome: 'passed', duration: 1 },
        't.py::test_flaky': { outcome: 'passed', duration: 0.01 },
        't.py::test_broken': { outcome: 'failed', duration: 0.01 },
      },
      {
        'geo.py:Square.__init__': ['t.py::test_square', 't.py::test_total'],
        'geo.py:Square.area': ['t.py::test_square', 't.py::test_total'],
        'geo.py:total_area': ['t.py::test_total'],
        'geo.py:Shape.describe': ['t.py::test_flaky'],
        'geo.py:unused': ['t.py::test_broken'],
      },
      ['t.py::test_flaky'],
    );
    const { sites, skippedUncovered } = selectSites([file], baseline);
    expect(sites.map((site) => site.key).sort()).toEqual(['geo.py:Square', 'geo.py:Square.__init__', 'geo.py:Square.area', 'geo.py:total_area']);
    // Shape, Shape.area, Shape.describe (flaky only) and unused (failing only) are skipped.
    expect(skippedUncovered).toBe(4);
    const square = sites.find((site) => site.key === 'geo.py:Square');
    expect(square?.tests).toEqual(['t.py::test_square', 't.py::test_total']);
    const init = sites.find((site) => site.key === 'geo.py:Square.__init__');
    const total = sites.find((site) => site.key === 'geo.py:total_area');
    // One test in one file; two tests in one file.
    expect(total?.cost).toBe(1 + FILE_COST);
    expect(init?.cost).toBe(2 + FILE_COST);
    // Fewer covering tests and files weigh more; timings do not matter (they vary run to run).
    const cheap = selectSites(
      [file],
      baselineOf(
        { 'a.py::x': { outcome: 'passed', duration: 5 }, 'b.py::y': { outcome: 'passed', duration: 0.01 }, 'c.py::z': { outcome: 'passed', duration: 0.01 } },
        { 'geo.py:unused': ['a.py::x'], 'geo.py:total_area': ['b.py::y', 'c.py::z'] },
      ),
    ).sites;
    const weight = (key: string) => cheap.find((site) => site.key === key)?.weight ?? 0;
    expect(weight('geo.py:unused')).toBeGreaterThan(weight('geo.py:total_area'));
  });

  it("puts no bug in a source module's own tests (patsy defines them beside its code), a class's through the class", () => {
    const inline = sourceFile('lib.py', `def area(side):\n    return side * side\n\n\ndef test_area():\n    assert area(2) == 4\n\n\nclass TestArea:\n    def test_one(self):\n        assert area(1) == 1\n`);
    const baseline = baselineOf(
      { 'lib.py::test_area': { outcome: 'passed', duration: 0.01 }, 'lib.py::TestArea::test_one[x::y]': { outcome: 'passed', duration: 0.01 } },
      { 'lib.py:area': ['lib.py::test_area', 'lib.py::TestArea::test_one[x::y]'], 'lib.py:test_area': ['lib.py::test_area'], 'lib.py:TestArea.test_one': ['lib.py::TestArea::test_one[x::y]'] },
    );
    expect(selectSites([inline], baseline).sites.map((site) => site.key)).toEqual(['lib.py:area']);
    // A module's own doctest is named by the module, as a function of the same name may be (python-tabulate's `tabulate`).
    const named = sourceFile('pkg/tabulate.py', 'def tabulate(rows):\n    return rows\n');
    const doctested = baselineOf({ 'pkg/tabulate.py::tabulate': { outcome: 'passed', duration: 0.01 }, 't.py::test_t': { outcome: 'passed', duration: 0.01 } }, { 'pkg/tabulate.py:tabulate': ['t.py::test_t'] });
    expect(selectSites([named], doctested).sites.map((site) => site.key)).toEqual(['pkg/tabulate.py:tabulate']);
  });

  it('draws entities that ran at collection a quarter as often, a class through its methods', () => {
    const results = { 't.py::a': { outcome: 'passed' as const, duration: 0.01 }, 't.py::b': { outcome: 'passed' as const, duration: 0.01 } };
    const coverage = { 'geo.py:Square.area': ['t.py::a'], 'geo.py:total_area': ['t.py::b'] };
    const weights = (ranAtCollection?: string[]) =>
      Object.fromEntries(selectSites([file], { ...baselineOf(results, coverage), ...(ranAtCollection ? { ranAtCollection } : {}) }).sites.map((site) => [site.key, site.weight]));
    const before = weights();
    const after = weights(['geo.py:Square.area']);
    expect(after['geo.py:Square.area']).toBeCloseTo((before['geo.py:Square.area'] ?? 0) * RAN_AT_COLLECTION_WEIGHT);
    expect(after['geo.py:Square']).toBeCloseTo((before['geo.py:Square'] ?? 0) * RAN_AT_COLLECTION_WEIGHT);
    expect(after['geo.py:total_area']).toBe(before['geo.py:total_area']);
  });

  it('puts the bugs of an entity that ran at collection on the lines that ran only in tests, where it has any', () => {
    const DECORATED = ['import functools', '', '', 'def logged(fn):', '    calls = []', '', '    @functools.wraps(fn)', '    def wrapper(*args):', '        calls.append(args)', '        return fn(*args)', '', '    return wrapper', '', '', 'def plain(x):', '    return x', ''].join('\n');
    const executedLines = new Set([1, 4, 5, 7, 8, 9, 10, 12, 15, 16]);
    // The decorator ran when a test module imported it; the wrapper it returned, in tests.
    const collectionLines = new Set([1, 4, 5, 7, 8, 12, 15, 16]);
    const results = { 't.py::a': { outcome: 'passed' as const, duration: 0.01 } };
    const coverage = { 'deco.py:logged': ['t.py::a'], 'deco.py:plain': ['t.py::a'] };
    const baseline = { ...baselineOf(results, coverage), ranAtCollection: ['deco.py:logged', 'deco.py:plain'] };
    const sites = (file: SourceFile) => Object.fromEntries(selectSites([file], baseline).sites.map((site) => [site.key, site]));
    const known = sites({ ...sourceFile('deco.py', DECORATED), executedLines, collectionLines });
    expect([...(known['deco.py:logged']?.executedLines ?? [])].sort((a, b) => a - b)).toEqual([9, 10]);
    // Every line of plain ran at collection too: it keeps the file's lines.
    expect(known['deco.py:plain']?.executedLines).toBeUndefined();
    // Bugs in logged go where the import does not reach: drawn as often as if it had not run at collection.
    expect(known['deco.py:logged']?.weight).toBeCloseTo((known['deco.py:plain']?.weight ?? 0) / RAN_AT_COLLECTION_WEIGHT);
    // Without the collection's lines, as in baselines made before envgen recorded them: the file's lines.
    expect(sites({ ...sourceFile('deco.py', DECORATED), executedLines })['deco.py:logged']?.executedLines).toBeUndefined();
  });
});
