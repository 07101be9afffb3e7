import { describe, expect, it } from 'vitest';
import { locateBodyChange, planRun } from './plan.js';
import type { PlanContext } from './plan.js';

const SOURCE = `"""Module docstring."""
import math

LIMIT = 3


def area(r):
    """Area of a circle."""
    value = math.pi * r * r
    return value


def double(x, factor=2):
    y = x * factor
    return y


class Shape(Base):
    sides = 0

    def describe(self):
        return "shape with %d sides" % self.sides
`;

function change(from: string, to: string, source = SOURCE): { path: string; before: string; after: string } {
  if (!source.includes(from)) throw new Error(`fixture lacks ${from}`);
  return { path: 'pkg/geo.py', before: source, after: source.replace(from, to) };
}

const context: PlanContext = {
  sourceFiles: new Set(['pkg/geo.py']),
  coverage: {
    'pkg/geo.py:area': ['tests/test_geo.py::test_area', 'tests/test_geo.py::test_both'],
    'pkg/geo.py:double': ['tests/test_geo.py::test_double', 'tests/test_geo.py::test_both'],
    'pkg/geo.py:Shape.describe': ['tests/test_geo.py::test_describe'],
  },
  outside: new Set(['pkg/geo.py:Shape.describe']),
  alwaysRun: new Set(),
};

describe('locateBodyChange', () => {
  it('finds the function whose body holds an edit', () => {
    expect(locateBodyChange(change('math.pi * r * r', 'math.pi * r'))).toMatchObject({ entity: { qualifiedName: 'area' } });
  });

  it('places a deleted last statement inside the body, not after it', () => {
    expect(locateBodyChange(change('    y = x * factor\n    return y\n', '    y = x * factor\n'))).toMatchObject({ entity: { qualifiedName: 'double' } });
  });

  it('sends signatures, docstrings, class and module code to the suite', () => {
    expect(locateBodyChange(change('factor=2', 'factor=3'))).toEqual({ reason: 'change outside the body of pkg/geo.py:double' });
    expect(locateBodyChange(change('Area of a circle.', 'Area of a disc.'))).toEqual({ reason: 'change outside the body of pkg/geo.py:area' });
    expect(locateBodyChange(change('Shape(Base)', 'Shape'))).toEqual({ reason: 'class-level change in pkg/geo.py:Shape' });
    expect(locateBodyChange(change('sides = 0', 'sides = 1'))).toEqual({ reason: 'class-level change in pkg/geo.py:Shape' });
    expect(locateBodyChange(change('LIMIT = 3', 'LIMIT = 4'))).toEqual({ reason: 'module-level change in pkg/geo.py' });
  });

  it('sends an edit spanning two functions to the suite', () => {
    const edit = change('    return value\n\n\ndef double(x, factor=2):\n    y = x * factor', '    return value * factor');
    expect(locateBodyChange(edit)).toHaveProperty('reason');
  });
});

describe('planRun', () => {
  it('names the covered entities whose bodies changed', () => {
    expect(planRun([change('y = x * factor', 'y = x + factor')], context)).toEqual({
      mode: 'covering',
      entities: ['pkg/geo.py:double'],
      why: 'body of pkg/geo.py:double',
    });
  });

  it('runs the suite for code that runs outside tests, uncovered code and non-source files', () => {
    expect(planRun([change('"shape with %d sides"', '"shape: %d"')], context)).toEqual({
      mode: 'suite',
      why: 'pkg/geo.py:Shape.describe runs at import time or in a shared fixture',
    });
    expect(planRun([change('math.pi * r * r', 'math.pi * r')], { ...context, coverage: {} })).toEqual({
      mode: 'suite',
      why: 'pkg/geo.py:area has no coverage entry',
    });
    expect(planRun([{ ...change('math.pi * r * r', 'math.pi * r'), path: 'tests/helper.py' }], context)).toMatchObject({ mode: 'suite' });
  });
});
