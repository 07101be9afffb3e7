import { createRng } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import { describe, expect, it } from 'vitest';
import { mutate, mutated } from './mutate-test-helpers.fixture.js';
import { removeBlock } from './removal.js';

describe('remove_function_body', () => {
  it('keeps the docstring and returns None where the function returned a value', () => {
    const source = 'def f(a):\n    """Doc."""\n    b = a + 1\n    return b\n\n\ndef g():\n    print(1)\n';
    expect(mutated('remove_function_body', source, 'f', 1)).toBe('def f(a):\n    """Doc."""\n    return None\n\n\ndef g():\n    print(1)\n');
    expect(mutated('remove_function_body', source, 'g', 1)).toBe('def f(a):\n    """Doc."""\n    b = a + 1\n    return b\n\n\ndef g():\n    pass\n');
  });

  it('keeps a generator a generator, in sync and async functions, and handles one-line bodies', () => {
    expect(mutated('remove_function_body', 'def g(n):\n    for i in range(n):\n        yield i\n', 'g', 1)).toBe('def g(n):\n    return\n    yield\n');
    expect(mutated('remove_function_body', 'async def g(n):\n    yield n\n', 'g', 1)).toBe('async def g(n):\n    return\n    yield\n');
    expect(mutated('remove_function_body', 'def h(): return [x for x in range(3)]\n', 'h', 1)).toBe('def h(): return None\n');
    expect(mutated('remove_function_body', 'def k():\n    def inner():\n        yield 1\n    return inner\n', 'k', 1)).toBe('def k():\n    return None\n');
  });

  it('has no site when the body already does nothing', () => {
    for (const body of ['pass', '...', 'return', 'return None', 'raise NotImplementedError("subclass")', '"""Only a docstring."""']) {
      expect(mutate('remove_function_body', `def f():\n    ${body}\n`, 'f', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
    }
  });
});

describe('remove_block', () => {
  const source = `def f(a, b):
    """Doc."""
    total = a
    total += b
    if total > 3:
        total = 3
    log(total)
    return total
`;

  it('deletes a contiguous run of at least 30% of a block', () => {
    expect(mutated('remove_block', source, 'f', 1)).toBe(`def f(a, b):
    """Doc."""
    total = a
    log(total)
    return total
`);
  });

  it('never deletes a binding that later code still reads, nor the whole body', () => {
    const entity = extractEntities(source, 'mod.py').entities[0];
    if (entity === undefined) throw new Error('fixture has no entity');
    for (let seed = 0; seed < 60; seed++) {
      const edit = removeBlock.apply({ source, entity, path: 'mod.py', rng: createRng(seed) });
      expect(edit).not.toBeNull();
      // `total = a` is the only binding before the reads: it must survive every run.
      expect(edit?.newSource).toContain('    total = a\n');
      expect(edit?.newSource).toMatch(/\n {4}\S/);
    }
  });

  it('deletes from nested blocks too, leaving pass in an emptied one', () => {
    const nested = 'def g(xs):\n    for x in xs:\n        print(x)\n        log(x)\n    return xs\n';
    const outs = new Set(Array.from({ length: 30 }, (_, seed) => mutated('remove_block', nested, 'g', seed)));
    expect([...outs].sort()).toEqual(
      [
        'def g(xs):\n    for x in xs:\n        pass\n    return xs\n',
        'def g(xs):\n    for x in xs:\n        log(x)\n    return xs\n',
        'def g(xs):\n    for x in xs:\n        print(x)\n    return xs\n',
        'def g(xs):\n    for x in xs:\n        print(x)\n        log(x)\n',
        'def g(xs):\n    return xs\n',
      ].sort(),
    );
  });

  it('never treats the case clauses of a match statement as statements', () => {
    const source = `def kind(x):
    match x:
        case None:
            return 0
        case str(s):
            log(s)
            return 1
        case _:
            return 2
`;
    for (let seed = 0; seed < 20; seed++) {
      for (const strategy of ['remove_block', 'shuffle_statements']) {
        expect(mutated(strategy, source, 'kind', seed).match(/case .*:/g)).toEqual(['case None:', 'case str(s):', 'case _:']);
      }
    }
  });
});
