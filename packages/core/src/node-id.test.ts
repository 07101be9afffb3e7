import { describe, expect, it } from 'vitest';
import { isModuleOwnDoctest, nodeIdFile, parseNodeId, unparametrizedNodeId, volatileIds } from './node-id.js';

describe('parseNodeId', () => {
  it('takes apart file, classes, name and parameters', () => {
    expect(parseNodeId('tests/t.py::TestA::Inner::test_b[1-2]')).toEqual({ file: 'tests/t.py', classes: ['TestA', 'Inner'], name: 'test_b', params: '1-2' });
    expect(parseNodeId('tests/t.py::test_plain')).toEqual({ file: 'tests/t.py', classes: [], name: 'test_plain', params: null });
    expect(parseNodeId('docs/usage.rst::usage.rst')).toEqual({ file: 'docs/usage.rst', classes: [], name: 'usage.rst', params: null });
    expect(parseNodeId('no-separator')).toBeNull();
  });

  it("keeps '::', brackets, quotes and spaces inside the parameter id", () => {
    expect(parseNodeId('tests/test_ids.py::test_group[sum(a)::integer as x, y]')).toEqual({ file: 'tests/test_ids.py', classes: [], name: 'test_group', params: 'sum(a)::integer as x, y' });
    expect(parseNodeId(`t.py::T::test_x[it's [1] - "q"]`)).toMatchObject({ classes: ['T'], name: 'test_x', params: `it's [1] - "q"` });
    expect(parseNodeId('t.py::test_x[a::b::c]')).toMatchObject({ classes: [], name: 'test_x', params: 'a::b::c' });
    expect(unparametrizedNodeId('t.py::C::test_x[a::b]')).toBe('t.py::C::test_x');
    expect(nodeIdFile('t.py::test_x[a::b]')).toBe('t.py');
  });
});

describe('isModuleOwnDoctest', () => {
  it("names a module's own doctest by the module, a package's by its directory", () => {
    const own = (nodeId: string) => isModuleOwnDoctest(parseNodeId(nodeId)!);
    expect(own('mod.py::mod')).toBe(true);
    expect(own('src/tabulate/__init__.py::tabulate')).toBe(true);
    expect(own('tabulate/core.py::core')).toBe(true);
    expect(own('tabulate/core.py::tabulate')).toBe(false);
    expect(own('tabulate/core.py::tabulate.core.f')).toBe(false);
    expect(own('tabulate/core.py::Core::core')).toBe(false);
    expect(own('docs/usage.rst::usage.rst')).toBe(false);
  });
});

describe('volatileIds', () => {
  it('names the cases of a parametrized test that two runs collect under other ids', () => {
    const first = ['t.py::T::test_dt[a]', 't.py::T::test_dt[11:22:00 2026-11-24]', 't.py::test_plain', 't.py::test_p[1]'];
    const second = ['t.py::T::test_dt[a]', 't.py::T::test_dt[11:22:07 2026-11-24]', 't.py::test_plain', 't.py::test_p[1]'];
    expect([...volatileIds(first, second)].sort()).toEqual(['t.py::T::test_dt[11:22:00 2026-11-24]', 't.py::T::test_dt[11:22:07 2026-11-24]']);
  });

  it('leaves alone cases that are gone: a module that no longer collects, a count that changed', () => {
    expect(volatileIds(['t.py::test_p[1]', 't.py::test_p[2]'], ['t.py::test_other'])).toEqual(new Set());
    expect(volatileIds(['t.py::test_p[1]', 't.py::test_p[2]'], ['t.py::test_p[1]', 't.py::test_p[3]', 't.py::test_p[4]'])).toEqual(new Set());
    expect(volatileIds(['t.py::test_plain'], ['t.py::test_renamed'])).toEqual(new Set());
  });
});
