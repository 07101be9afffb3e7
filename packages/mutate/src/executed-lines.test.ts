import { createRng } from '@envgen/core';
import { extractEntities, parsePython } from '@envgen/python';
import { describe, expect, it } from 'vitest';
import { applyStrategy } from './apply-strategy.js';
import { bodyRan, ranInTests } from './entity-node.js';
import { STRATEGIES } from './registry.js';

// A method with a branch no test takes (strict=True) and an error path never hit, as a
// suite that only calls parse("abc") leaves them; and a method nothing calls.
const source = `class Parser:
    def parse(self, text, strict=False):
        if not text:
            raise ValueError("empty")
        count = len(text) + 1
        if strict:
            count = count * 2 - 1
            for ch in text:
                count += ord(ch) > 127
        else:
            count = count - 1
        return count

    def unused(self):
        return 0
`;
// What Python's line events report for parse("abc"): the class and def lines at import, then
// the lines parse ran (no event for \`else:\`).
const executed: ReadonlySet<number> = new Set([1, 2, 3, 5, 6, 11, 12, 14]);
const entities = extractEntities(source, 'mod.py').entities;

/** The original lines an edit changed: from the first differing line to the last, 1-based. */
function changedLines(before: string, after: string): number[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let first = 0;
  while (first < a.length && a[first] === b[first]) first++;
  let lastA = a.length - 1;
  let lastB = b.length - 1;
  while (lastA > first && lastB > first && a[lastA] === b[lastB]) {
    lastA--;
    lastB--;
  }
  return Array.from({ length: lastA - first + 1 }, (_, index) => first + index + 1);
}

/** Every kept edit of every strategy on every entity over `seeds` seeds, with or without the lines that ran. */
function edits(seeds: number, executedLines?: ReadonlySet<number>): { strategy: string; lines: number[]; newSource: string }[] {
  const found: { strategy: string; lines: number[]; newSource: string }[] = [];
  for (const strategy of Object.values(STRATEGIES)) {
    for (const entity of entities) {
      for (let seed = 0; seed < seeds; seed++) {
        const outcome = applyStrategy(strategy, { source, entity, path: 'mod.py', rng: createRng(seed), ...(executedLines ? { executedLines } : {}) });
        if (outcome.status === 'kept') found.push({ strategy: strategy.name, lines: changedLines(source, outcome.edit.newSource), newSource: outcome.edit.newSource });
      }
    }
  }
  return found;
}

describe('sites among the lines the clean suite ran', () => {
  it('changes only code that ran, with every strategy that still has a site there', () => {
    const all = edits(40);
    const unexecuted = all.filter((edit) => !edit.lines.some((line) => executed.has(line)));
    // Without the lines, strategies do pick code no test runs (a mutant there cannot be proven).
    expect(unexecuted.length).toBeGreaterThan(0);
    const filtered = edits(40, executed);
    expect(filtered.filter((edit) => !edit.lines.some((line) => executed.has(line)))).toEqual([]);
    // What ran still gets changed by operators, removals and class strategies alike.
    expect(new Set(filtered.map((edit) => edit.strategy))).toEqual(
      new Set(['change_operator', 'change_constant', 'swap_operands', 'remove_assignment', 'remove_conditional', 'invert_if_else', 'shuffle_statements', 'remove_block', 'remove_function_body', 'remove_class_methods']),
    );
  });

  it('never deletes an if whose branch never ran, though its condition did', () => {
    const removed = edits(40, executed).filter((edit) => edit.strategy === 'remove_conditional');
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.every((edit) => edit.newSource.includes('if not text:') && !edit.newSource.includes('if strict:'))).toBe(true);
  });

  it('never removes a method no test calls, though its def line ran at import', () => {
    const removed = edits(40, executed).filter((edit) => edit.strategy === 'remove_class_methods');
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.every((edit) => edit.newSource.includes('def unused') && !edit.newSource.includes('def parse'))).toBe(true);
  });

  it('counts an expression by its whole statement, a definition or a deleted compound statement by its body, and unknown lines as ran', () => {
    const tree = parsePython('def f(a):\n    return (a +\n            1)\n');
    const plus = tree.rootNode.descendantForIndex('def f(a):\n    return (a '.length);
    // The operator sits on line 2, and only line 2 reported a line event.
    expect(ranInTests(new Set([2]), plus)).toBe(true);
    const constant = tree.rootNode.descendantForIndex('def f(a):\n    return (a +\n            '.length);
    expect(constant.text).toBe('1');
    expect(ranInTests(new Set([2]), constant)).toBe(true);
    expect(ranInTests(new Set([1]), constant)).toBe(false);
    const definition = tree.rootNode.namedChildren[0];
    if (definition === undefined) throw new Error('no definition');
    expect(ranInTests(new Set([1]), definition)).toBe(false);
    expect(ranInTests(new Set([3]), definition)).toBe(true);
    expect(ranInTests(undefined, constant)).toBe(true);
    const loop = parsePython('for x in xs:\n    total(x)\n').rootNode.namedChildren[0];
    if (loop === undefined) throw new Error('no loop');
    expect(bodyRan(new Set([1]), loop)).toBe(false);
    expect(bodyRan(new Set([1, 2]), loop)).toBe(true);
    expect(ranInTests(new Set([1]), loop)).toBe(true);
  });
});
