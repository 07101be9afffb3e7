import { extractEntities } from '@envgen/python';
import { describe, expect, it } from 'vitest';
import { entityKey, mapCoverage } from './coverage-map.js';

const SOURCE = `import functools


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*a):
        return fn(*a)
    return wrapper


def outer(x):
    def inner(y):
        return y + 1
    return inner(x)


@deco
def decorated(x):
    return x * 2


class Calc:
    key = staticmethod(lambda v: v)

    def add(self, a, b):
        return a + b
`;

describe('mapCoverage', () => {
  const entities = extractEntities(SOURCE, 'pkg/mod.py').entities;
  const entitiesOf = (file: string) => (file === 'pkg/mod.py' ? entities : null);

  it('maps code objects to their function, nested ones and decorated ones included', () => {
    const coverage = {
      't.py::test_outer': { 'pkg/mod.py': [11, 12], 't.py': [1] },
      't.py::test_decorated': { 'pkg/mod.py': [5, 17] },
      't.py::test_add': { 'pkg/mod.py': [22, 23, 25] },
    };
    expect(mapCoverage(coverage, entitiesOf)).toEqual({
      'pkg/mod.py:Calc.add': ['t.py::test_add'],
      'pkg/mod.py:deco': ['t.py::test_decorated'],
      'pkg/mod.py:decorated': ['t.py::test_decorated'],
      'pkg/mod.py:outer': ['t.py::test_outer'],
    });
  });

  it('sorts and de-duplicates node ids per entity', () => {
    const coverage = { 'b::t': { 'pkg/mod.py': [11, 12] }, 'a::t': { 'pkg/mod.py': [11] } };
    expect(mapCoverage(coverage, entitiesOf)).toEqual({ 'pkg/mod.py:outer': ['a::t', 'b::t'] });
  });

  it('builds keys as file:qualifiedName', () => {
    expect(entityKey('a/b.py', 'C.m')).toBe('a/b.py:C.m');
  });
});
