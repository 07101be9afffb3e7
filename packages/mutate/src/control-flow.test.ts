import { describe, expect, it } from 'vitest';
import { mutate, mutated } from './mutate-test-helpers.fixture.js';

describe('invert_if_else', () => {
  const source = `def f(x):
    if x > 0:
        y = 1
        z = 2
    else:
      y = -1
    return y
`;

  it('swaps the branches under the same condition, each re-indented to its new place', () => {
    expect(mutated('invert_if_else', source, 'f', 1)).toBe(`def f(x):
    if x > 0:
        y = -1
    else:
      y = 1
      z = 2
    return y
`);
  });

  it('swaps inline branches verbatim', () => {
    const inline = `def g(a):
    if not a: return 1
    else: return 2
`;
    expect(mutated('invert_if_else', inline, 'g', 1)).toBe(`def g(a):
    if not a: return 2
    else: return 1
`);
  });

  it('keeps multi-line string content as it is while re-indenting a branch', () => {
    const text = `def h(a):
    if a:
        s = """one
two"""
    else:
            s = "x"
    return s
`;
    expect(mutated('invert_if_else', text, 'h', 1)).toBe(`def h(a):
    if a:
        s = "x"
    else:
            s = """one
two"""
    return s
`);
  });

  it('has no site in an if/elif chain or an if without else', () => {
    const chain = `def k(a):
    if a:
        return 1
    elif a is None:
        return 2
    else:
        return 3
    if a:
        return 4
`;
    expect(mutate('invert_if_else', chain, 'k', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('shuffle_statements', () => {
  const source = `def f(a):
    """Doc."""
    b = a + 1
    c = b * 2
    d = c - 3
    return d
`;

  it('reorders a window of adjacent statements of one block', () => {
    expect(mutated('shuffle_statements', source, 'f', 1)).toBe(`def f(a):
    """Doc."""
    b = a + 1
    d = c - 3
    c = b * 2
    return d
`);
  });

  it('only permutes lines, never moves the docstring, and always changes the order', () => {
    const original = source.split('\n').sort();
    for (let seed = 0; seed < 40; seed++) {
      const out = mutated('shuffle_statements', source, 'f', seed);
      expect(out).not.toBe(source);
      expect(out.split('\n').sort()).toEqual(original);
      expect(out.split('\n')[1]).toBe('    """Doc."""');
    }
  });

  it('keeps global declarations in place and skips statements sharing a line', () => {
    const pinned = `def g():
    global COUNT
    COUNT += 1; print(COUNT)
    return COUNT
`;
    expect(mutate('shuffle_statements', pinned, 'g', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});
