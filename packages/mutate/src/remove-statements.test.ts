import { describe, expect, it } from 'vitest';
import { mutate, mutated } from './mutate-test-helpers.fixture.js';

describe('remove_assignment', () => {
  const source = `def f(a):
    if a:
        a = 0
    total = a + 1  # trailing comment goes too
    total += 2
    return total
`;

  it('deletes one assignment statement', () => {
    expect(mutated('remove_assignment', source, 'f', 1)).toBe(`def f(a):
    if a:
        a = 0
    total += 2
    return total
`);
  });

  it('leaves pass behind when the assignment was alone in its block', () => {
    expect(mutated('remove_assignment', source, 'f', 7)).toBe(`def f(a):
    if a:
        pass
    total = a + 1  # trailing comment goes too
    total += 2
    return total
`);
  });

  it('has no site without assignments', () => {
    expect(mutate('remove_assignment', 'def g(a):\n    return a.b(c=1)\n', 'g', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('remove_conditional', () => {
  it('deletes a whole if statement with its elif branch', () => {
    const source = `def f(a):
    if a < 0:
        return 0
    elif a > 9:
        return 9
    return a
`;
    expect(mutated('remove_conditional', source, 'f', 1)).toBe('def f(a):\n    return a\n');
  });
});

describe('remove_loop', () => {
  const source = `def f(xs):
    out = []
    for x in xs:
        out.append(x)
    while out:
        out.pop()
    return out
`;

  it('deletes a for loop or a while loop', () => {
    expect(mutated('remove_loop', source, 'f', 1)).toBe(`def f(xs):
    out = []
    for x in xs:
        out.append(x)
    return out
`);
    expect(mutated('remove_loop', source, 'f', 7)).toBe(`def f(xs):
    out = []
    while out:
        out.pop()
    return out
`);
  });

  it('deletes an async for loop too', () => {
    const source = 'async def g(it):\n    async for x in it:\n        print(x)\n';
    expect(mutated('remove_loop', source, 'g', 1)).toBe('async def g(it):\n    pass\n');
  });
});

describe('remove_wrapper', () => {
  const source = `def f(path):
    with open(path) as fh:
        data = fh.read()
        text = """a
    b"""
    try:
        n = int(data)
    except ValueError:
        n = 0
    finally:
        pass
    return n
`;

  it('replaces a try statement by its body and finally block, dropping the handlers', () => {
    expect(mutated('remove_wrapper', source, 'f', 1)).toBe(`def f(path):
    with open(path) as fh:
        data = fh.read()
        text = """a
    b"""
    n = int(data)
    pass
    return n
`);
  });

  it('keeps the else block, which runs when the body raises nothing (cachetools FIFOCache.popitem)', () => {
    const popitem = 'def popitem(self):\n    try:\n        key = next(iter(self.order))\n    except StopIteration:\n        raise KeyError("empty") from None\n    else:\n        return (key, self.pop(key))\n';
    expect(mutate('remove_wrapper', popitem, 'popitem', 1)).toEqual({
      status: 'kept',
      edit: {
        newSource: 'def popitem(self):\n    key = next(iter(self.order))\n    return (key, self.pop(key))\n',
        description: 'removed the try wrapper at line 2, keeping its body and else block',
      },
    });
  });

  it('replaces a with statement by its dedented body, leaving string content alone', () => {
    expect(mutated('remove_wrapper', source, 'f', 7)).toBe(`def f(path):
    data = fh.read()
    text = """a
    b"""
    try:
        n = int(data)
    except ValueError:
        n = 0
    finally:
        pass
    return n
`);
  });

  it('has no site when the body shares the header line', () => {
    expect(mutate('remove_wrapper', 'def g(l):\n    with l: return 1\n', 'g', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});
