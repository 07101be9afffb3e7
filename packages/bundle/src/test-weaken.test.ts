import { describe, expect, it } from 'vitest';
import { applyPatch } from '@envgen/patch';
import { hasSyntaxErrors } from '@envgen/python';
import { makeTestWeaken } from './test-weaken.js';

function readerOf(files: Record<string, string>): (path: string) => Promise<string | null> {
  return async (path) => files[path] ?? null;
}

async function weakened(files: Record<string, string>, failToPass: string[], extra: Partial<Parameters<typeof makeTestWeaken>[0]> = {}) {
  const result = await makeTestWeaken({ readFile: readerOf(files), failToPass, testFiles: Object.keys(files), ...extra });
  const applied = applyPatch((path) => files[path] ?? null, result.diff);
  if (!applied.ok) throw new Error(applied.problem.message);
  const after = Object.fromEntries(applied.files.map((file) => [file.path, file.after ?? '']));
  for (const text of Object.values(after)) expect(hasSyntaxErrors(text)).toBe(false);
  return { ...result, after };
}

const TESTS = `import pytest

from pkg import f


def test_plain():
    assert f(1) == 1


@pytest.mark.parametrize("x", [1, 2], ids=["one", "a b"])
def test_param(x):
    assert f(x) == x


class TestGroup:
    """Grouped tests."""

    def test_a(self):
        assert f(2) == 2

    def test_b(self):
        assert f(3) == 3


class TestOnly:
    @pytest.mark.slow
    def test_only(self):
        assert f(4) == 4


class TestInherited(TestOnly):
    pass


def test_many_asserts():
    assert f(0) == 0
    value = f(5)
    assert value == 5
    assert value > 0
`;

describe('makeTestWeaken', () => {
  it('deletes failing test functions, parametrized ones by their function', async () => {
    const { after, removed, testFiles, unresolved } = await weakened({ 'tests/test_f.py': TESTS }, ['tests/test_f.py::test_plain', 'tests/test_f.py::test_param[a b]', 'tests/test_f.py::test_param[one]']);
    const text = after['tests/test_f.py'] ?? '';
    expect(text).not.toMatch(/def test_plain|def test_param|parametrize/);
    expect(text).toContain('def test_many_asserts');
    expect(testFiles).toEqual(['tests/test_f.py']);
    expect(unresolved).toEqual([]);
    expect(removed.map((r) => [r.nodeId, r.kind, r.qualifiedName])).toEqual([
      ['tests/test_f.py::test_param[a b]', 'function', 'test_param'],
      ['tests/test_f.py::test_param[one]', 'function', 'test_param'],
      ['tests/test_f.py::test_plain', 'function', 'test_plain'],
    ]);
  });

  it('deletes methods, keeping a class that loses its last method valid with pass', async () => {
    const { after } = await weakened({ 'tests/test_f.py': TESTS }, ['tests/test_f.py::TestGroup::test_a', 'tests/test_f.py::TestOnly::test_only']);
    const text = after['tests/test_f.py'] ?? '';
    expect(text).not.toMatch(/def test_a|def test_only|mark\.slow/);
    expect(text).toContain('    def test_b(self):');
    expect(text).toContain('class TestOnly:\n    pass\n');
    // The docstring keeps TestGroup non-empty: no pass needed there.
    expect(text).toContain('class TestGroup:\n    """Grouped tests."""\n\n\n    def test_b');
  });

  it('finds inherited methods in same-file base classes', async () => {
    const { after, removed } = await weakened({ 'tests/test_f.py': TESTS }, ['tests/test_f.py::TestInherited::test_only']);
    expect(after['tests/test_f.py']).toContain('class TestOnly:\n    pass\n');
    expect(removed[0]?.qualifiedName).toBe('TestOnly.test_only');
  });

  it('in assertions mode deletes only the failing assertion of a test with others', async () => {
    const line = TESTS.split('\n').indexOf('    assert value == 5') + 1;
    const { after, removed } = await weakened({ 'tests/test_f.py': TESTS }, ['tests/test_f.py::test_many_asserts', 'tests/test_f.py::test_plain'], {
      mode: 'assertions',
      failingLines: { 'tests/test_f.py::test_many_asserts': line, 'tests/test_f.py::test_plain': 7 },
    });
    const text = after['tests/test_f.py'] ?? '';
    expect(text).toContain('    value = f(5)\n    assert value > 0\n');
    expect(text).not.toContain('assert value == 5');
    // test_plain has a single assertion: the whole test goes.
    expect(text).not.toContain('def test_plain');
    expect(removed.map((r) => r.kind).sort()).toEqual(['assertion', 'function']);
  });

  it('reports ids it cannot weaken: doctests in source files, unknown tests, files outside the test files', async () => {
    const result = await makeTestWeaken({
      readFile: readerOf({ 'tests/test_f.py': TESTS, 'pkg/mod.py': 'def f(x):\n    return x\n' }),
      failToPass: ['pkg/mod.py::pkg.mod.f', 'tests/test_f.py::test_missing', 'tests/test_f.py::TestNope::test_a'],
      testFiles: ['tests/test_f.py'],
    });
    expect(result.diff).toBe('');
    expect(result.unresolved).toEqual(['pkg/mod.py::pkg.mod.f', 'tests/test_f.py::TestNope::test_a', 'tests/test_f.py::test_missing']);
  });

  it('is deterministic', async () => {
    const ids = ['tests/test_f.py::TestGroup::test_b', 'tests/test_f.py::test_plain'];
    const one = await makeTestWeaken({ readFile: readerOf({ 'tests/test_f.py': TESTS }), failToPass: ids, testFiles: ['tests/test_f.py'] });
    const two = await makeTestWeaken({ readFile: readerOf({ 'tests/test_f.py': TESTS }), failToPass: [...ids].reverse(), testFiles: ['tests/test_f.py'] });
    expect(two.diff).toBe(one.diff);
  });
});
