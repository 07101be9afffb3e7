import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Writes `files` (repo-relative path → content) into a fresh temp directory; returns its path. */
export async function writeTree(files: Record<string, string>, prefix = 'envgen-bundle-fixture-'): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

/** A reader of a tree's files for makeTestWeaken and applyPatch callers. */
export function treeReader(root: string): (path: string) => Promise<string | null> {
  return async (path) => readFile(join(root, path), 'utf8').catch(() => null);
}

/**
 * A small calculator package whose tests cover what parsers trip on: parametrized ids with
 * spaces, brackets and " - ", class-based tests, a fixture error, skips and an xfail.
 */
export const CALC_REPO: Record<string, string> = {
  'calc/__init__.py': '',
  'calc/ops.py': [
    'def add(a, b):',
    '    return a + b',
    '',
    '',
    'def mul(a, b):',
    '    return a * b',
    '',
    '',
    'def clamp(x, low, high):',
    '    return max(low, min(x, high))',
    '',
  ].join('\n'),
  'calc/fmt.py': [
    'from calc.ops import add',
    '',
    '',
    'def show_sum(a, b):',
    '    return "%d + %d = %d" % (a, b, add(a, b))',
    '',
    '',
    'def scale(x):',
    '    return x * 10',
    '',
  ].join('\n'),
  'tests/__init__.py': '',
  'tests/test_ops.py': [
    'import pytest',
    '',
    'from calc.ops import add, clamp, mul',
    '',
    '',
    'def test_add():',
    '    assert add(2, 3) == 5',
    '',
    '',
    '@pytest.mark.parametrize("a,b,want", [(1, 2, 3), (0, 0, 0)], ids=["one plus two", "x - y [z]"])',
    'def test_add_cases(a, b, want):',
    '    assert add(a, b) == want',
    '',
    '',
    'def test_mul():',
    '    assert mul(3, 4) == 12',
    '',
    '',
    'class TestClamp:',
    '    def test_inside(self):',
    '        assert clamp(5, 0, 10) == 5',
    '',
    '    def test_edges(self):',
    '        assert clamp(-1, 0, 10) == 0',
    '        assert clamp(11, 0, 10) == 10',
    '',
    '',
    '@pytest.mark.skip(reason="not today")',
    'def test_skipped():',
    '    assert False',
    '',
    '',
    '@pytest.mark.xfail(reason="known")',
    'def test_known_bug():',
    '    assert mul(2, 2) == 5',
    '',
    '',
    '@pytest.fixture',
    'def broken():',
    '    raise RuntimeError("fixture broke")',
    '',
    '',
    'def test_fixture_error(broken):',
    '    pass',
    '',
  ].join('\n'),
  'tests/test_fmt.py': [
    'from calc.fmt import scale, show_sum',
    '',
    '',
    'def test_show_sum():',
    '    assert show_sum(1, 2) == "1 + 2 = 3"',
    '',
    '',
    'def test_scale():',
    '    assert scale(2) == 20',
    '',
  ].join('\n'),
};
