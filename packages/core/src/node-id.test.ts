import { describe, expect, it } from 'vitest';
import { nodeIdFile, parseNodeId, unparametrizedNodeId } from './node-id.js';

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
