import { hasSyntaxErrors } from '@envgen/python';
import { describe, expect, it } from 'vitest';
import { mutate, mutated } from './mutate-test-helpers.fixture.js';

describe('change_bool_or_compare_chain', () => {
  const source = `def f(a, b, c):
    return a and b and c or 0 < a <= b < c
`;

  it('drops one operand with its operator from a boolean or comparison chain', () => {
    expect(mutated('change_bool_or_compare_chain', source, 'f', 1)).toBe('def f(a, b, c):\n    return b and c or 0 < a <= b < c\n');
    expect(mutated('change_bool_or_compare_chain', source, 'f', 2)).toBe('def f(a, b, c):\n    return a and b and c or 0 <= b < c\n');
    expect(mutated('change_bool_or_compare_chain', source, 'f', 3)).toBe('def f(a, b, c):\n    return a and b and c or a <= b < c\n');
  });

  it('breaks arithmetic chains of one precedence level, not a lone binary operation', () => {
    const arithmetic = 'def g(a, b, c):\n    return a - b + c, a * b\n';
    const outs = new Set(Array.from({ length: 20 }, (_, seed) => mutated('change_bool_or_compare_chain', arithmetic, 'g', seed)));
    expect([...outs].sort()).toEqual([
      'def g(a, b, c):\n    return a + c, a * b\n',
      'def g(a, b, c):\n    return a - b, a * b\n',
      'def g(a, b, c):\n    return b + c, a * b\n',
    ]);
  });

  it('has no site without a chain', () => {
    expect(mutate('change_bool_or_compare_chain', 'def h(a):\n    return a < 1\n', 'h', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('change_constant', () => {
  const source = `def f(a):
    while True:
        a += 1.5
        if a > 10 or a == 0:
            return False
`;

  it('moves a number by one or flips a bool', () => {
    expect(mutated('change_constant', source, 'f', 1)).toBe(source.replace('a == 0', 'a == 1'));
    const outs = new Set(Array.from({ length: 40 }, (_, seed) => mutated('change_constant', source, 'f', seed)));
    expect([...outs].sort()).toEqual(
      [
        source.replace('1.5', '0.5'),
        source.replace('1.5', '2.5'),
        source.replace('> 10', '> 9'),
        source.replace('> 10', '> 11'),
        source.replace('a == 0', 'a == 1'),
        source.replace('return False', 'return True'),
      ].sort(),
    );
  });

  it('never flips the bool of a while condition, never writes a negative literal, keeps float form', () => {
    const text = 'def g(x=0, y=.5, z=2.):\n    while False:\n        pass\n    return 1_000\n';
    const outs = new Set(Array.from({ length: 40 }, (_, seed) => mutated('change_constant', text, 'g', seed)));
    expect([...outs].sort()).toEqual(
      [
        text.replace('x=0', 'x=1'),
        text.replace('y=.5', 'y=1.5'),
        text.replace('z=2.', 'z=1.'),
        text.replace('z=2.', 'z=3.'),
        text.replace('1_000', '999'),
        text.replace('1_000', '1001'),
      ].sort(),
    );
  });

  it("leaves the numbers of a check of the interpreter's version alone (nest_asyncio: `sys.version_info >= (3, 6, 0)`)", () => {
    const text = 'def v(loop):\n    if sys.version_info >= (3, 7, 0) or sys.version_info[0] == 2 or sys.version_info[:2] < (3, 12):\n        return loop + 1\n';
    const outs = new Set(Array.from({ length: 40 }, (_, seed) => mutated('change_constant', text, 'v', seed)));
    expect([...outs].sort()).toEqual([text.replace('loop + 1', 'loop + 0'), text.replace('loop + 1', 'loop + 2')].sort());
  });

  it('skips literals it cannot move safely (hex, exponent, imaginary, decorator arguments)', () => {
    const text = '@cache(maxsize=128)\ndef h():\n    return 0x1F + 1e3 + 2j\n';
    expect(mutate('change_constant', text, 'h', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

const FAMILIES = [
  ['+', '-'],
  ['*', '/', '//', '%'],
  ['<', '<=', '>', '>='],
  ['==', '!='],
  ['is', 'is not'],
  ['in', 'not in'],
  ['and', 'or'],
  ['&', '|', '^'],
  ['<<', '>>'],
  ['+=', '-='],
];

describe('change_operator', () => {
  it('replaces an operator with another of its family', () => {
    const source = 'def f(a, b):\n    return a + b * 2 if a is not b and a in b else a // b\n';
    expect(mutated('change_operator', source, 'f', 1)).toBe('def f(a, b):\n    return a + b * 2 if a is b and a in b else a // b\n');
  });

  it('stays within the family of the operator it changes', () => {
    for (const family of FAMILIES) {
      for (const before of family) {
        const source = family[0]?.endsWith('=') && family[0] !== '==' ? `def f(a, b):\n    a ${before} b\n` : `def f(a, b):\n    return a ${before} b\n`;
        const out = mutated('change_operator', source, 'f', family.length + before.length);
        const after = family.find((op) => op !== before && out === source.replace(` ${before} `, ` ${op} `));
        expect(after, `${before} → ${out}`).toBeDefined();
      }
    }
  });

  it('leaves operators without a family alone', () => {
    expect(mutate('change_operator', 'def g(a, b):\n    return -a ** b @ b\n', 'g', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('swap_operands', () => {
  it('swaps the operands of a binary operation, parenthesizing compound ones', () => {
    const source = 'def f(a, b, c):\n    return a - b - c\n';
    expect(mutated('swap_operands', source, 'f', 1)).toBe('def f(a, b, c):\n    return b - a - c\n');
    expect(mutated('swap_operands', source, 'f', 0)).toBe('def f(a, b, c):\n    return c - (a - b)\n');
  });

  it('swaps comparisons and boolean operations, never a comparison chain', () => {
    const source = 'def g(a, b, c):\n    return (a < b < c) or a in b\n';
    const outs = new Set(Array.from({ length: 20 }, (_, seed) => mutated('swap_operands', source, 'g', seed)));
    expect([...outs].sort()).toEqual([
      'def g(a, b, c):\n    return (a < b < c) or b in a\n',
      'def g(a, b, c):\n    return (a in b) or (a < b < c)\n',
    ].sort());
    for (const out of outs) expect(hasSyntaxErrors(out)).toBe(false);
  });

  it('has no site where the swap changes nothing: a symmetric comparison, a type annotation', () => {
    for (const body of ['x is None', 'x is not None', 'x == y', 'x  !=  y']) {
      expect(mutate('swap_operands', `def h(x, y):\n    return ${body}\n`, 'h', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
    }
    expect(mutate('swap_operands', 'def h(x: str | None, y: int | None) -> int | None:\n    z: int | None = None\n    return z\n', 'h', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
    expect(mutated('swap_operands', 'def h(x, y):\n    return x <= y\n', 'h', 1)).toBe('def h(x, y):\n    return y <= x\n');
  });

  it('has no site where both operands read the same', () => {
    expect(mutate('swap_operands', 'def h(x):\n    return x * x\n', 'h', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});
