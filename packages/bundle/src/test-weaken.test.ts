import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

/** What `python3 -m pytest ARGS` prints in a fresh directory holding `files`. */
function pytestOn(files: Record<string, string>, args: string[]): string {
  const repo = mkdtempSync(join(tmpdir(), 'envgen-weaken-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      writeFileSync(join(repo, path), text);
    }
    return execFileSync('/usr/bin/python3', ['-m', 'pytest', '-p', 'no:cacheprovider', ...args], { cwd: repo, encoding: 'utf8' });
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
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

  it('deletes every definition of a test the module defines more than once, so no earlier one runs under its id', async () => {
    const files = {
      'pkg.py': 'def f(x):\n    return x\n',
      'tests/test_f.py': [
        'from pkg import f\n\n\ndef test_f():\n    assert f(1) == 2\n\n\ndef test_other():\n    assert f(0) == 0\n',
        '\n\ndef test_f():\n    assert f(1) == 1\n\n\nclass TestF:\n    def test_g(self):\n        assert f(3) == 4\n\n    def test_g(self):\n        assert f(3) == 3\n',
      ].join(''),
    };
    const { after, removed } = await weakened(files, ['tests/test_f.py::test_f', 'tests/test_f.py::TestF::test_g']);
    expect(after['tests/test_f.py']).not.toMatch(/def test_f|def test_g/);
    expect(removed.map((r) => [r.nodeId, r.line])).toEqual([
      ['tests/test_f.py::TestF::test_g', 17],
      ['tests/test_f.py::TestF::test_g', 20],
      ['tests/test_f.py::test_f', 4],
      ['tests/test_f.py::test_f', 12],
    ]);
    // pytest collected each name's last definition; neither name is collected at all now.
    expect(pytestOn({ ...files, ...after }, ['--collect-only', '-q', 'tests']).split('\n').filter((line) => line.includes('::'))).toEqual(['tests/test_f.py::test_other']);
  });

  it('deletes tests inherited from base classes and mixins imported from other test modules, and names every test that goes', async () => {
    const files = {
      'tests/__init__.py': '',
      'tests/base.py': 'class ClampMixin:\n    def test_low(self):\n        assert 1\n\n    def test_high(self):\n        assert 1\n',
      'tests/mixins/__init__.py': 'from ..base import ClampMixin as Renamed\n',
      'tests/common.py': 'class Base:\n    def test_width(self):\n        assert 1\n',
      'tests/test_small.py': 'import unittest\n\nfrom tests.base import ClampMixin\nimport tests.common as common\n\n\nclass TestSmall(ClampMixin, common.Base, unittest.TestCase):\n    pass\n',
      'tests/test_large.py': 'import unittest\n\nfrom .mixins import Renamed\n\n\nclass TestLarge(Renamed, unittest.TestCase):\n    def test_own(self):\n        assert 1\n',
      'tests/test_imported.py': 'from tests.common import Base\n',
    };
    const nodeIds = [
      'tests/test_small.py::TestSmall::test_low',
      'tests/test_small.py::TestSmall::test_high',
      'tests/test_small.py::TestSmall::test_width',
      'tests/test_large.py::TestLarge::test_low',
      'tests/test_large.py::TestLarge::test_own',
      'tests/test_imported.py::Base::test_width',
    ];
    const { after, removed, removedIds, testFiles, unresolved } = await weakened(files, ['tests/test_large.py::TestLarge::test_low', 'tests/test_imported.py::Base::test_width'], { nodeIds });
    expect(unresolved).toEqual([]);
    expect(testFiles).toEqual(['tests/base.py', 'tests/common.py']);
    expect(after['tests/base.py']).not.toContain('def test_low');
    expect(after['tests/base.py']).toContain('def test_high');
    expect(after['tests/common.py']).toContain('class Base:\n    pass\n');
    expect(removed.map((entry) => [entry.file, entry.qualifiedName])).toEqual([
      ['tests/common.py', 'Base.test_width'],
      ['tests/base.py', 'ClampMixin.test_low'],
    ]);
    expect(removedIds).toEqual([
      'tests/test_imported.py::Base::test_width',
      'tests/test_large.py::TestLarge::test_low',
      'tests/test_small.py::TestSmall::test_low',
      'tests/test_small.py::TestSmall::test_width',
    ]);
  });

  it('leaves `name = None` for an overriding method, so the base method of that name does not run under its ids (pytransitions)', async () => {
    const files = {
      'tests/__init__.py': '',
      'tests/test_base.py': 'import unittest\n\n\nclass TestDiagrams(unittest.TestCase):\n    def test_diagram(self):\n        assert 1\n\n    def test_other(self):\n        assert 1\n',
      'tests/test_nested.py': 'from .test_base import TestDiagrams\n\n\nclass TestNested(TestDiagrams):\n    def test_diagram(self):\n        assert 2\n\n\nclass TestLockedNested(TestNested):\n    pass\n',
      'tests/test_states.py': 'from .test_nested import TestLockedNested\n\n\nclass TestStates(TestLockedNested):\n    pass\n',
      // C3 looks in C before B (a breadth-first walk would find B's).
      'tests/test_mro.py': 'class C:\n    def test_t(self):\n        assert 1\n\n\nclass A(C):\n    pass\n\n\nclass B:\n    def test_t(self):\n        assert 1\n\n\nclass TestX(A, B):\n    pass\n',
    };
    const collected = (tree: Record<string, string>): string[] =>
      pytestOn(tree, ['--collect-only', '-q', '-o', 'python_classes=Test* A B C', 'tests']).split('\n').filter((line) => line.includes('::test_diagram') || line.includes('::test_t'));
    const nodeIds = collected(files);
    expect(nodeIds).toContain('tests/test_states.py::TestStates::test_diagram');
    const { after, removed, removedIds, testFiles } = await weakened(files, ['tests/test_states.py::TestStates::test_diagram', 'tests/test_mro.py::TestX::test_t'], { nodeIds });
    expect(testFiles).toEqual(['tests/test_mro.py', 'tests/test_nested.py']);
    expect(after['tests/test_nested.py']).toContain('class TestNested(TestDiagrams):\n    test_diagram = None\n\n\nclass TestLockedNested');
    expect(after['tests/test_mro.py']).toContain('class C:\n    test_t = None\n');
    expect(removed.map((entry) => [entry.file, entry.qualifiedName])).toEqual([
      ['tests/test_mro.py', 'C.test_t'],
      ['tests/test_nested.py', 'TestNested.test_diagram'],
    ]);
    // What pytest collects after the weakening is what removedIds leaves.
    const left = collected({ ...files, ...after });
    expect(left).toEqual(nodeIds.filter((nodeId) => !removedIds.includes(nodeId)));
    expect(left).toEqual(['tests/test_base.py::TestDiagrams::test_diagram', 'tests/test_mro.py::B::test_t', 'tests/test_nested.py::TestDiagrams::test_diagram']);
  });

  it("parses parameter ids holding '::', brackets, quotes and spaces as pytest means them", async () => {
    const source = 'import pytest\n\n\n@pytest.mark.parametrize("t", ["sum(a)::integer as x, y", "a::b"])\ndef test_group(t):\n    assert t\n\n\ndef test_other():\n    assert 1\n';
    const { after, unresolved } = await weakened({ 'tests/test_ids.py': source }, ['tests/test_ids.py::test_group[sum(a)::integer as x, y]', `tests/test_ids.py::test_group[it's [1] - "q"]`]);
    expect(unresolved).toEqual([]);
    expect(after['tests/test_ids.py']).not.toContain('def test_group');
    expect(after['tests/test_ids.py']).toContain('def test_other');
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

  it('reports ids it cannot weaken: doctests in source files and test files, files outside the test files', async () => {
    const result = await makeTestWeaken({
      readFile: readerOf({ 'tests/test_f.py': TESTS, 'pkg/mod.py': 'def f(x):\n    return x\n' }),
      failToPass: ['pkg/mod.py::pkg.mod.f', 'tests/test_f.py::tests.test_f.helper', 'docs/usage.rst::usage.rst'],
      testFiles: ['tests/test_f.py'],
    });
    expect(result.diff).toBe('');
    expect(result.unresolved).toEqual(['docs/usage.rst::usage.rst', 'pkg/mod.py::pkg.mod.f', 'tests/test_f.py::tests.test_f.helper']);
  });

  it('deselects doctests of source modules in the conftest.py above them, where there is one', async () => {
    const files = { 'conftest.py': 'collect_ignore = ["setup.py"]\n', 'tests/test_f.py': TESTS, 'pkg/mod.py': 'def f(x):\n    """>>> f(1)\n    1\n    """\n    return x\n' };
    const ids = ['pkg/mod.py::pkg.mod.f', 'tests/test_f.py::test_plain'];
    const { after, removed, unresolved, testFiles } = await weakened(files, ids, { testFiles: ['conftest.py', 'tests/test_f.py'] });
    expect(unresolved).toEqual([]);
    expect(removed.map((entry) => [entry.kind, entry.file])).toEqual([
      ['collected', 'conftest.py'],
      ['function', 'tests/test_f.py'],
    ]);
    expect(testFiles).toEqual(['conftest.py', 'tests/test_f.py']);
    expect(after['conftest.py']).toContain('    "pkg/mod.py::pkg.mod.f",\n');
    expect(after['pkg/mod.py']).toBeUndefined();
  });

  it("deletes the module-level statements that set attributes of a deleted test, nose's way of marking it (patsy's `test_redundancy_thoroughly.slow = 1`)", async () => {
    const source = 'def test_slow():\n    assert True\n\n\ntest_slow.slow = 1\ntest_slow.__dict__["x"] = 2\ntest_slow.tags.level += 1\ntest_keep = 3\n\n\ndef test_kept():\n    pass\n\n\ntest_kept.slow = True\n';
    const { after } = await weakened({ 'tests/test_n.py': source }, ['tests/test_n.py::test_slow']);
    expect(after['tests/test_n.py']).toBe('\n\ntest_keep = 3\n\n\ndef test_kept():\n    pass\n\n\ntest_kept.slow = True\n');
  });

  it("deselects the tests a source module defines beside its code, as its doctests (patsy's `patsy/util.py::test_asarray_or_pandas`)", async () => {
    const files = {
      'pkg/__init__.py': '',
      'pkg/mod.py': 'def f(x):\n    return x\n\n\ndef test_f():\n    assert f(1) == 1\n\n\nclass TestF:\n    def test_two(self):\n        assert f(2) == 2\n',
      'pkg/test_more.py': 'from pkg.mod import f\n\n\ndef test_three():\n    assert f(3) == 3\n\n\ndef test_four():\n    assert f(4) == 4\n',
    };
    const failing = ['pkg/mod.py::test_f', 'pkg/mod.py::TestF::test_two', 'pkg/test_more.py::test_three'];
    const { after, removed, unresolved } = await weakened(files, failing, { testFiles: ['pkg/test_more.py'], nodeIds: [...failing, 'pkg/test_more.py::test_four'] });
    expect(unresolved).toEqual([]);
    expect(removed.map((entry) => [entry.nodeId, entry.kind, entry.file])).toEqual([
      ['pkg/test_more.py::test_three', 'function', 'pkg/test_more.py'],
      ['pkg/mod.py::TestF::test_two', 'collected', 'pkg/test_more.py'],
      ['pkg/mod.py::test_f', 'collected', 'pkg/test_more.py'],
    ]);
    expect(after['pkg/mod.py']).toBeUndefined();
    const out = pytestOn({ ...files, ...after, 'pytest.ini': '[pytest]\npython_files = *.py\n' }, ['-q', '-rA']);
    expect(out.split('\n').filter((line) => /^(PASSED|FAILED)/.test(line))).toEqual(['PASSED pkg/test_more.py::test_four']);
  });

  it('deselects doctests of source modules where no conftest.py is above them through a plugin a test module names, beside its own', async () => {
    const files = {
      'pytest.ini': '[pytest]\naddopts = --doctest-modules\n',
      'pkg/__init__.py': '',
      'top.py': '"""A top-level module.\n\n>>> 1 + 1\n2\n"""\n',
      'pkg/mod.py': 'def f(x):\n    """x.\n\n    >>> f(1)\n    1\n    """\n    return x\n\n\ndef g(x):\n    """x.\n\n    >>> g(2)\n    2\n    """\n    return x\n',
      // A module-level pytest_generate_tests: were the module itself the plugin, it would parametrize twice.
      'tests/test_f.py': 'pytest_plugins = "pytester"\n\n\ndef pytest_generate_tests(metafunc):\n    if "n" in metafunc.fixturenames:\n        metafunc.parametrize("n", [1, 2])\n\n\ndef test_n(n, pytester):\n    assert n > 0 and pytester.path.is_dir()\n',
      'tests/test_g.py': 'def test_g():\n    pass\n',
    };
    const testFiles = ['tests/test_f.py', 'tests/test_g.py'];
    const nodeIds = ['pkg/mod.py::pkg.mod.f', 'pkg/mod.py::pkg.mod.g', 'tests/test_f.py::test_n[1]', 'tests/test_f.py::test_n[2]', 'tests/test_g.py::test_g', 'top.py::top'];
    // A module's own docstring too, whose id names no function (sortedcontainers' `src/sortedcontainers/__init__.py::sortedcontainers`).
    const failing = ['pkg/mod.py::pkg.mod.f', 'top.py::top'];
    const { after, removed, removedIds, testFiles: weakenedFiles, unresolved } = await weakened(files, failing, { testFiles, nodeIds });
    expect(unresolved).toEqual([]);
    expect(removed).toEqual([
      { nodeId: 'pkg/mod.py::pkg.mod.f', kind: 'collected', file: 'tests/test_f.py', qualifiedName: 'pkg.mod.f', line: 0 },
      { nodeId: 'top.py::top', kind: 'collected', file: 'tests/test_f.py', qualifiedName: 'top', line: 0 },
    ]);
    expect(removedIds).toEqual(failing);
    expect(weakenedFiles).toEqual(['tests/test_f.py']);
    // -W error: pytest warns about a plugin module imported before it could rewrite its asserts.
    for (const mode of ['prepend', 'importlib']) {
      const out = pytestOn({ ...files, ...after }, ['-q', '-rA', '-W', 'error', `--import-mode=${mode}`]);
      expect(out.split('\n').filter((line) => line.startsWith('PASSED')).sort()).toEqual(['PASSED pkg/mod.py::pkg.mod.g', 'PASSED tests/test_f.py::test_n[1]', 'PASSED tests/test_f.py::test_n[2]', 'PASSED tests/test_g.py::test_g']);
    }
  });

  it('deletes the examples of text files collected as doctests, as Python reads them, keeping their prose', async () => {
    const usage = [
      'Usage',
      '=====',
      '',
      'Create one::',
      '',
      '    >>> from pkg import f',
      '    >>> f(1)',
      '    1',
      '    >>> for x in (1, 2):',
      '    ...     print(f(x))',
      '    1',
      '    2',
      '',
      'The end.',
      '',
    ].join('\n');
    const readme = ['# pkg', '', '```pycon', '>>> f(2)', '2', '', '```', '', 'No more examples.'].join('\n');
    const files = { 'docs/usage.rst': usage, 'README.md': readme, 'docs/empty.txt': 'prose only\n', 'tests/test_f.py': TESTS };
    const result = await makeTestWeaken({
      readFile: readerOf(files),
      failToPass: ['docs/usage.rst::usage.rst', 'README.md::README.md', 'docs/empty.txt::empty.txt', 'tests/test_f.py::test_plain'],
      testFiles: ['tests/test_f.py'],
    });
    expect(result.testFiles).toEqual(['README.md', 'docs/usage.rst', 'tests/test_f.py']);
    expect(result.unresolved).toEqual(['docs/empty.txt::empty.txt']);
    expect(result.removed.filter((entry) => entry.kind === 'doctest')).toEqual([
      { nodeId: 'README.md::README.md', kind: 'doctest', file: 'README.md', qualifiedName: 'README.md', line: 4 },
      { nodeId: 'docs/usage.rst::usage.rst', kind: 'doctest', file: 'docs/usage.rst', qualifiedName: 'usage.rst', line: 6 },
    ]);
    const applied = applyPatch((path) => files[path as keyof typeof files] ?? null, result.diff);
    if (!applied.ok) throw new Error(applied.problem.message);
    const after = Object.fromEntries(applied.files.map((file) => [file.path, file.after ?? '']));
    expect(after['docs/usage.rst']).toBe(['Usage', '=====', '', 'Create one::', '', '', 'The end.', ''].join('\n'));
    expect(after['README.md']).toBe(['# pkg', '', '```pycon', '', '```', '', 'No more examples.'].join('\n'));
    // Python's own doctest parser finds examples in each file before and none after.
    const probe = 'import doctest, json, sys\nprint(json.dumps([len(doctest.DocTestParser().get_examples(text)) for text in json.load(sys.stdin)]))';
    const counts = execFileSync('/usr/bin/python3', ['-c', probe], { input: JSON.stringify([usage, readme, after['docs/usage.rst'], after['README.md']]), encoding: 'utf8' });
    expect(JSON.parse(counts)).toEqual([3, 1, 0, 0]);
  });

  it('removes tests generated at import, whatever their names, by code appended to the module that collects them', async () => {
    const module = [
      'import unittest',
      '',
      '',
      'class Base(unittest.TestCase):',
      '    pass',
      '',
      '',
      'def make(name):',
      '    cls = type(name, (Base,), {})',
      '    for case in ("a", "b", "example-2.17"):',
      '        setattr(cls, "test_" + case, lambda self, case=case: None)',
      '    globals()[name] = cls',
      '',
      '',
      'make("TestGenerated")',
      'globals()["test_loose"] = lambda: None',
      '',
    ].join('\n');
    const ids = ['tests/test_gen.py::TestGenerated::test_a', 'tests/test_gen.py::TestGenerated::test_example-2.17', 'tests/test_gen.py::test_loose', 'tests/test_gen.py::TestGone::test_x'];
    const { after, removed, removedIds, unresolved } = await weakened({ 'tests/test_gen.py': module }, ids);
    expect(unresolved).toEqual([]);
    expect(removed.map((entry) => entry.kind)).toEqual(['generated', 'generated', 'generated', 'generated']);
    expect(removedIds).toEqual([...ids].sort());
    const probe = `${after['tests/test_gen.py'] ?? ''}\nprint(sorted(name for name in vars(TestGenerated) if name.startswith("test_")), "test_loose" in globals())\n`;
    const out = execFileSync('/usr/bin/python3', ['-c', probe], { encoding: 'utf8' });
    expect(out.trim()).toBe("['test_b'] False");
  });

  it('takes a test its module binds last by an import out of that module, leaving the import and both definitions', async () => {
    const module = [
      'import sys',
      '',
      '',
      'def test_variant():',
      '    assert False, "shadowed"',
      '',
      '',
      'if sys.version_info >= (3, 8):',
      '    from .variants import test_variant  # noqa',
      '',
      '',
      'def test_other():',
      '    pass',
      '',
    ].join('\n');
    const variants = 'def test_variant():\n    assert True\n';
    const ids = ['tests/test_mod.py::test_variant'];
    const { after, removed, removedIds, unresolved } = await weakened({ 'tests/test_mod.py': module, 'tests/variants.py': variants }, ids);
    expect(unresolved).toEqual([]);
    expect(removed).toMatchObject([{ kind: 'imported', file: 'tests/test_mod.py', qualifiedName: 'test_variant' }]);
    expect(removedIds).toEqual(ids);
    expect(after['tests/variants.py']).toBeUndefined();
    const probe = `${(after['tests/test_mod.py'] ?? '').replace('from .variants import test_variant', 'test_variant = 1')}\nprint("test_variant" in globals(), "test_other" in globals())\n`;
    const out = execFileSync('/usr/bin/python3', ['-c', probe], { encoding: 'utf8' });
    expect(out.trim()).toBe('False True');
  });

  const ownHooks = {
    plain: ['@pytest.hookimpl(tryfirst=True)', 'def pytest_collection_modifyitems(items):', '    items.reverse()'],
    wrapper: ['@pytest.hookimpl(hookwrapper=True)', 'def pytest_collection_modifyitems(items):', '    yield', '    items.reverse()'],
  };
  it.each(Object.entries(ownHooks))("deselects tests a conftest's collector makes from star-imported functions, in that conftest, after its own hook (%s), whatever the rootdir", async (_, ownHook) => {
    const conftest = [
      'import os',
      '',
      'import pytest',
      '',
      '',
      'class DataItem(pytest.Item):',
      '    def runtest(self):',
      '        pass',
      '',
      '',
      'class DataCollector(pytest.Collector):',
      '    def collect(self):',
      '        for name in ("a.data", "b.data", "c.data"):',
      '            yield DataItem.from_parent(self, name=name)',
      '',
      '',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_pycollect_makeitem(collector, name, obj):',
      '    outcome = yield',
      '    if name.startswith("test") and getattr(obj, "data", False):',
      '        outcome.force_result(DataCollector.from_parent(collector, name=name))',
      '',
      '',
      ...ownHook,
      '',
    ].join('\n');
    const files = {
      'tests/pytest.ini': '[pytest]\n',
      'tests/conftest.py': conftest,
      'tests/cases.py': 'def test_case():\n    pass\n\n\ntest_case.data = True\n',
      'tests/test_all.py': 'from cases import *  # noqa\n',
      // Made at import, as PyYAML's test_yaml_ext.py wraps each function into a `<name>_ext`.
      'tests/test_made.py': 'def _made():\n    pass\n\n\n_made.data = True\nglobals()["test_made"] = _made\n',
    };
    const ids = ['tests/test_all.py::test_case::b.data', 'tests/test_made.py::test_made::a.data'];
    const { after, removed, removedIds, testFiles, unresolved } = await weakened(files, ids, { testFiles: ['tests/conftest.py', 'tests/cases.py', 'tests/test_all.py', 'tests/test_made.py'] });
    expect(unresolved).toEqual([]);
    expect(removed).toEqual([
      { nodeId: ids[0], kind: 'collected', file: 'tests/conftest.py', qualifiedName: 'test_case.b.data', line: 0 },
      { nodeId: ids[1], kind: 'collected', file: 'tests/conftest.py', qualifiedName: 'test_made.a.data', line: 0 },
    ]);
    expect(removedIds).toEqual(ids);
    expect(testFiles).toEqual(['tests/conftest.py']);
    // rootdir tests/ (its pytest.ini): pytest's ids lack the tests/ prefix the weakening names.
    const out = pytestOn({ ...files, ...after }, ['--collect-only', '-q', 'tests']);
    expect(out.split('\n').filter((line) => line.includes('::'))).toEqual(['test_made.py::test_made::c.data', 'test_made.py::test_made::b.data', 'test_all.py::test_case::c.data', 'test_all.py::test_case::a.data']);
  });

  it("deselects the items a conftest's pytest_collect_file makes of data files, one named '' included (pygments' golden files)", async () => {
    const conftest = [
      'import pytest',
      '',
      '',
      'class GoldenItem(pytest.Item):',
      '    def runtest(self):',
      '        pass',
      '',
      '',
      'class GoldenFile(pytest.File):',
      '    def collect(self):',
      '        yield GoldenItem.from_parent(self, name="")',
      '',
      '',
      'def pytest_collect_file(parent, file_path):',
      '    if file_path.suffix == ".moon":',
      '        return GoldenFile.from_parent(parent, path=file_path)',
      '',
    ].join('\n');
    const files = { 'tests/examplefiles/conftest.py': conftest, 'tests/examplefiles/moon/a.moon': 'x = 1\n', 'tests/examplefiles/moon/b.moon': 'y = 2\n' };
    const ids = ['tests/examplefiles/moon/a.moon::'];
    const { after, removed, testFiles, unresolved } = await weakened(files, ids, { testFiles: ['tests/examplefiles/conftest.py'] });
    expect(unresolved).toEqual([]);
    expect(removed).toEqual([{ nodeId: ids[0], kind: 'collected', file: 'tests/examplefiles/conftest.py', qualifiedName: '', line: 0 }]);
    expect(testFiles).toEqual(['tests/examplefiles/conftest.py']);
    const out = pytestOn({ ...files, ...after }, ['--collect-only', '-q', 'tests']);
    expect(out.split('\n').filter((line) => line.includes('::'))).toEqual(['tests/examplefiles/moon/b.moon::']);
  });

  it('is deterministic', async () => {
    const ids = ['tests/test_f.py::TestGroup::test_b', 'tests/test_f.py::test_plain'];
    const one = await makeTestWeaken({ readFile: readerOf({ 'tests/test_f.py': TESTS }), failToPass: ids, testFiles: ['tests/test_f.py'] });
    const two = await makeTestWeaken({ readFile: readerOf({ 'tests/test_f.py': TESTS }), failToPass: [...ids].reverse(), testFiles: ['tests/test_f.py'] });
    expect(two.diff).toBe(one.diff);
  });
});
