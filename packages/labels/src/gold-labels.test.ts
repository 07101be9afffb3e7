import { describe, expect, it } from 'vitest';
import { computeGoldLabels } from './gold-labels.js';
import type { LocalizationChanges } from './types.js';

const PATH = 'pkg/shapes.py';

/** The clean module the bugs below are injected into. */
const CLEAN = [
  '"""Shapes."""', //                                     1
  'import math', //                                       2
  '', //                                                  3
  'UNIT = 1.0', //                                        4
  '', //                                                  5
  '', //                                                  6
  'def scale(value, factor):', //                         7
  '    def clamp(x):', //                                 8
  '        return max(x, 0)', //                          9
  '    return clamp(value) * factor', //                 10
  '', //                                                 11
  '', //                                                 12
  'async def load(name):', //                            13
  '    return await fetch(name)', //                     14
  '', //                                                 15
  '', //                                                 16
  'class Circle(Shape):', //                             17
  '    sides = 0', //                                    18
  '', //                                                 19
  '    def __init__(self, r):', //                       20
  '        self.r = r', //                               21
  '', //                                                 22
  '    @property', //                                    23
  '    def area(self):', //                              24
  '        # pi r squared', //                           25
  '        return math.pi * self.r ** 2', //             26
  '', //                                                 27
  '    @staticmethod', //                                28
  '    def unit():', //                                  29
  '        return Circle(UNIT)', //                      30
  '', //                                                 31
  '    class Meta:', //                                  32
  '        def describe(self):', //                      33
  '            return "circle"', //                      34
  '', //                                                 35
  '', //                                                 36
  'def main():', //                                      37
  '    print(Circle(2).area)', //                        38
  '', //                                                 39
].join('\n');

/** Labels of a bug that turns `from` into `to` in CLEAN (the fix reverses it). */
function labelBug(from: string, to: string): LocalizationChanges {
  expect(CLEAN).toContain(from);
  const buggy = CLEAN.replace(from, to);
  const [result, ...rest] = computeGoldLabels([{ path: PATH, before: buggy, after: CLEAN }]);
  expect(rest).toEqual([]);
  expect(result?.file).toBe(PATH);
  return result?.changes as LocalizationChanges;
}

const EMPTY: LocalizationChanges = { edited_entities: [], edited_modules: [], added_entities: [], added_modules: [] };
const at = (...names: string[]): string[] => names.map((name) => `${PATH}:${name}`);

describe('computeGoldLabels', () => {
  it('labels a method edit with the method and its class', () => {
    expect(labelBug('self.r = r', 'self.r = -r')).toEqual({ ...EMPTY, edited_entities: at('Circle.__init__'), edited_modules: at('Circle') });
  });

  it('labels a top-level function edit with the function as entity and module', () => {
    expect(labelBug('return clamp(value) * factor', 'return clamp(value) + factor')).toEqual({
      ...EMPTY,
      edited_entities: at('scale'),
      edited_modules: at('scale'),
    });
  });

  it('gives a nested function edit to its outer function', () => {
    expect(labelBug('return max(x, 0)', 'return min(x, 0)')).toEqual({ ...EMPTY, edited_entities: at('scale'), edited_modules: at('scale') });
  });

  it('labels a class attribute with the class module only', () => {
    expect(labelBug('sides = 0', 'sides = 1')).toEqual({ ...EMPTY, edited_modules: at('Circle') });
  });

  it('labels a changed class base with the class module only', () => {
    expect(labelBug('class Circle(Shape):', 'class Circle(object):')).toEqual({ ...EMPTY, edited_modules: at('Circle') });
  });

  it('gives a method decorator to the class, not the method', () => {
    expect(labelBug('    @staticmethod\n', '    @classmethod\n')).toEqual({ ...EMPTY, edited_modules: at('Circle') });
  });

  it('labels a property body with the property method', () => {
    expect(labelBug('return math.pi * self.r ** 2', 'return math.pi * self.r * 2')).toEqual({
      ...EMPTY,
      edited_entities: at('Circle.area'),
      edited_modules: at('Circle'),
    });
  });

  it('labels an async def edit', () => {
    expect(labelBug('return await fetch(name)', 'return fetch(name)')).toEqual({ ...EMPTY, edited_entities: at('load'), edited_modules: at('load') });
  });

  it('labels a method of a nested class with qualified names', () => {
    expect(labelBug('return "circle"', 'return "square"')).toEqual({
      ...EMPTY,
      edited_entities: at('Circle.Meta.describe'),
      edited_modules: at('Circle.Meta'),
    });
  });

  it('keeps module-level code, imports, comments and docstrings at file level', () => {
    expect(labelBug('UNIT = 1.0', 'UNIT = 2.0')).toEqual(EMPTY);
    expect(labelBug('import math', 'import cmath as math')).toEqual(EMPTY);
    expect(labelBug('"""Shapes."""', '"""Shapes and sizes."""')).toEqual(EMPTY);
    expect(labelBug('\n\n\ndef main', '\n# entry point\n\ndef main')).toEqual(EMPTY);
  });

  it('labels a comment inside a method with that method', () => {
    expect(labelBug('# pi r squared', '# area')).toEqual({ ...EMPTY, edited_entities: at('Circle.area'), edited_modules: at('Circle') });
  });

  it('counts a fix that only inserts lines inside a function as editing it', () => {
    // The bug deletes the middle line of main's body: the fix inserts it back.
    const clean = 'def main():\n    a = 1\n    b = 2\n    return a + b\n';
    const buggy = 'def main():\n    a = 1\n    return a + b\n';
    const [result] = computeGoldLabels([{ path: 'm.py', before: buggy, after: clean }]);
    expect(result?.changes).toEqual({ ...EMPTY, edited_entities: ['m.py:main'], edited_modules: ['m.py:main'] });
  });

  it('edits the old function around an insertion even when the inserted lines start a new one', () => {
    // The fix splits the tail of main into helper: only `def helper():` is inserted, inside main.
    const buggy = 'def main():\n    a = 1\n    return a\n';
    const clean = 'def main():\n    a = 1\ndef helper():\n    return a\n';
    const [result] = computeGoldLabels([{ path: 'm.py', before: buggy, after: clean }]);
    expect(result?.changes).toEqual({
      edited_entities: ['m.py:main'],
      edited_modules: ['m.py:main'],
      added_entities: ['m.py:helper'],
      added_modules: ['m.py:helper'],
    });
  });

  it('labels a function the fix recreates as added, and a recreated method as added in an edited class', () => {
    expect(labelBug('\n\ndef main():\n    print(Circle(2).area)\n', '\n')).toEqual({
      ...EMPTY,
      added_entities: at('main'),
      added_modules: at('main'),
    });
    expect(labelBug('    @staticmethod\n    def unit():\n        return Circle(UNIT)\n\n', '')).toEqual({
      ...EMPTY,
      edited_modules: at('Circle'),
      added_entities: at('Circle.unit'),
    });
  });

  it('labels an entity the fix deletes as edited', () => {
    const buggy = 'def main():\n    return 1\n\n\ndef extra():\n    return 2\n';
    const [result] = computeGoldLabels([{ path: 'm.py', before: buggy, after: 'def main():\n    return 1\n' }]);
    expect(result?.changes).toEqual({ ...EMPTY, edited_entities: ['m.py:extra'], edited_modules: ['m.py:extra'] });
  });

  it('labels several files, sorted by path, leaving unchanged files out', () => {
    const results = computeGoldLabels([
      { path: 'z/last.py', before: 'def f():\n    return 0\n', after: 'def f():\n    return 1\n' },
      { path: 'same.py', before: 'x = 1\n', after: 'x = 1\n' },
      { path: 'a/first.py', before: 'class K:\n    v = 0\n', after: 'class K:\n    v = 1\n' },
    ]);
    expect(results).toEqual([
      { file: 'a/first.py', changes: { ...EMPTY, edited_modules: ['a/first.py:K'] } },
      { file: 'z/last.py', changes: { ...EMPTY, edited_entities: ['z/last.py:f'], edited_modules: ['z/last.py:f'] } },
    ]);
  });

  it('labels a file the fix creates as all added and one it deletes as all edited', () => {
    const source = 'import os\n\nclass A:\n    def run(self):\n        pass\n\ndef go():\n    pass\n';
    const [created, deleted] = computeGoldLabels([
      { path: 'new.py', before: null, after: source },
      { path: 'old.py', before: source, after: null },
    ]);
    expect(created).toEqual({
      file: 'new.py',
      changes: { ...EMPTY, added_entities: ['new.py:A.run', 'new.py:go'], added_modules: ['new.py:A', 'new.py:go'] },
    });
    expect(deleted).toEqual({
      file: 'old.py',
      changes: { ...EMPTY, edited_entities: ['old.py:A.run', 'old.py:go'], edited_modules: ['old.py:A', 'old.py:go'] },
    });
  });

  it('names no entities in a non-Python file', () => {
    expect(computeGoldLabels([{ path: 'setup.cfg', before: 'a = 1\n', after: 'a = 2\n' }])).toEqual([{ file: 'setup.cfg', changes: EMPTY }]);
  });

  it('maps lines by UTF-8-safe line numbers when non-ASCII text precedes the change', () => {
    const before = '# ünïcödé 😀\nNAME = "naïve"\n\ndef f():\n    return "é"\n';
    const [result] = computeGoldLabels([{ path: 'u.py', before, after: before.replace('"é"', '"ê"') }]);
    expect(result?.changes).toEqual({ ...EMPTY, edited_entities: ['u.py:f'], edited_modules: ['u.py:f'] });
  });
});
