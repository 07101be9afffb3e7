import { describe, expect, it } from 'vitest';
import { createRng } from '@envgen/core';
import { editHasSyntaxErrors } from './edit-syntax.js';
import { hasSyntaxErrors, parsePython } from './parse.js';

const MODULE = [
  '"""Tests of a small module."""',
  'import unittest',
  '',
  'VALUES = [',
  '    1,',
  '    2,',
  ']',
  '',
  '',
  '@decorate(',
  '    "x",',
  ')',
  'class TestThing(unittest.TestCase):',
  '    """Doc."""',
  '',
  '    def test_one(self):',
  '        self.assertEqual(f(1), 2)',
  '',
  '    # a comment between methods',
  '    def test_two(self):',
  '        text = """',
  'def not_code(:',
  '"""',
  '        self.assertTrue(text)',
  '',
  '',
  'def test_three():',
  '    assert g(',
  '        3,',
  '    ) == 4',
  '',
  '',
  'def test_four():',
  '    for x in VALUES:',
  '        assert x',
  '',
].join('\n');

describe('editHasSyntaxErrors', () => {
  const root = parsePython(MODULE).rootNode;
  const rows = MODULE.split('\n');
  const edit = (from: number, count: number, ...insert: string[]): string => {
    const copy = [...rows];
    copy.splice(from, count, ...insert);
    return copy.join('\n');
  };

  it('finds what a parse of the whole file finds, for seeded deletions, insertions and replacements', () => {
    const rng = createRng('edit-syntax');
    let broken = 0;
    for (let round = 0; round < 500; round++) {
      const copy = [...rows];
      for (let change = 1 + rng.int(3); change > 0; change--) {
        const at = rng.int(copy.length + 1);
        const kind = rng.int(3);
        if (kind === 0) copy.splice(at, 1 + rng.int(5));
        else if (kind === 1) copy.splice(at, 0, ['    pass', 'x = (', '"""', '    return 1', 'y = 2', ''][rng.int(6)] ?? '');
        else copy.splice(at, 1, '        pass');
      }
      const after = copy.join('\n');
      const whole = hasSyntaxErrors(after);
      if (whole) broken += 1;
      expect(editHasSyntaxErrors(MODULE, root, after)).toBe(whole);
    }
    // Both answers occur, so the comparison means something.
    expect(broken).toBeGreaterThan(50);
    expect(broken).toBeLessThan(450);
  });

  it('sees a method deleted whole as fine, and one left with a call open as broken', () => {
    expect(editHasSyntaxErrors(MODULE, root, edit(15, 3))).toBe(false);
    expect(editHasSyntaxErrors(MODULE, root, edit(16, 1, '        self.assertEqual(f(1), 2'))).toBe(true);
  });

  it('sees an edit that leaves a bracket open into the statements after it', () => {
    expect(editHasSyntaxErrors(MODULE, root, edit(6, 1))).toBe(true);
    expect(editHasSyntaxErrors(MODULE, root, edit(29, 1))).toBe(true);
  });

  it('sees code appended at the end, and no edit at all', () => {
    expect(editHasSyntaxErrors(MODULE, root, `${MODULE}\nfor name in []:\n    pass\n`)).toBe(false);
    expect(editHasSyntaxErrors(MODULE, root, `${MODULE}\nfor name in [:\n    pass\n`)).toBe(true);
    expect(editHasSyntaxErrors(MODULE, root, MODULE)).toBe(false);
  });
});
