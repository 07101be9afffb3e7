import { describe, expect, it } from 'vitest';
import { fixRevealingStrings, findLeak } from './issue-statement.js';
import { SELF_PLAY_INSTRUCTION, hideSourceFrames, makeSelfPlayStatement, makeTestsStatement, trimMiddle } from './statements.js';
import { extractTestSource } from './test-source.js';

const OUTPUT = `..F
=================================== FAILURES ===================================
_________________________________ test_groupby _________________________________
toolz/tests/test_itertoolz.py:98: in test_groupby
    assert groupby(iseven, [1, 2, 3, 4]) == {True: [2, 4], False: [1, 3]}
toolz/itertoolz.py:100: in groupby
    d[key(item)].append(item)
E   KeyError: True
=========================== short test summary info ============================
FAILED toolz/tests/test_itertoolz.py::test_groupby - KeyError: True
1 failed, 2 passed in 0.12s
`;

describe('tests statement', () => {
  it('names the failing tests, shows their source and the failures section without library frames', () => {
    const hidden = hideSourceFrames(OUTPUT, (path) => path.includes('/tests/'));
    expect(hidden).not.toContain('toolz/itertoolz.py:100');
    expect(hidden).not.toContain('d[key(item)]');
    expect(hidden).toContain('E   KeyError: True');
    expect(hidden).toContain('toolz/tests/test_itertoolz.py:98: in test_groupby');
    expect(hidden).toContain('1 traceback frame(s) outside the tests are hidden');
    const text = makeTestsStatement(
      [
        { nodeId: 'toolz/tests/test_itertoolz.py::test_groupby', source: 'def test_groupby():\n    assert groupby(iseven, [1, 2, 3, 4])' },
        { nodeId: 'toolz/tests/test_itertoolz.py::test_doc', source: null },
      ],
      hidden,
    );
    expect(text).toMatch(/^These tests fail and should pass:\n- toolz\/tests\/test_itertoolz.py::test_groupby\n- toolz\/tests\/test_itertoolz.py::test_doc\n/);
    expect(text).toContain('```python\ndef test_groupby():');
    expect(text).toContain('Failure output (pytest):\n```\n=================================== FAILURES');
    expect(text).not.toContain('short test summary');
  });

  it('trims long sources and output to the limits, saying how much went', () => {
    const long = Array.from({ length: 100 }, (_, index) => `    x${index} = ${index}`).join('\n');
    const text = makeTestsStatement([{ nodeId: 't.py::test_a', source: `def test_a():\n${long}` }], `= FAILURES =\n${'y'.repeat(10_000)}`, {
      maxSourceLines: 10,
      maxOutputChars: 1000,
    });
    expect(text).toContain('# ... 91 more lines');
    expect(text).toMatch(/\[\.\.\. \d+ characters trimmed \.\.\.\]/);
    expect(text.length).toBeLessThan(2000);
    expect(trimMiddle('abc', 10)).toBe('abc');
  });

  it('refuses to make a statement without failing tests', () => {
    expect(() => makeTestsStatement([], OUTPUT)).toThrow(/at least one failing test/);
  });
});

describe('self-play statement', () => {
  it('restores what test_weaken removed, under the fixed instruction', () => {
    const weaken = `diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n@@ -1,4 +1,1 @@\n import a\n-\n-def test_add():\n-    assert a.add(1, 2) == 3\n`;
    const text = makeSelfPlayStatement(weaken);
    expect(text.startsWith(SELF_PLAY_INSTRUCTION)).toBe(true);
    expect(text).toContain('+def test_add():\n+    assert a.add(1, 2) == 3');
    expect(text).not.toContain('-def test_add');
    expect(() => makeSelfPlayStatement('')).toThrow(/nothing to restore|malformed/);
  });
});

describe('test source', () => {
  const source = `import pytest\n\nclass Base:\n    def test_shared(self):\n        assert 1\n\nclass TestA(Base):\n    @pytest.mark.parametrize('x', [1, 2])\n    def test_one(self, x):\n        assert x\n\ndef test_top():\n    assert True\n`;
  it('cuts a function, a parametrized method with its decorator and an inherited test', () => {
    expect(extractTestSource(source, 't.py::test_top')).toBe('def test_top():\n    assert True');
    expect(extractTestSource(source, 't.py::TestA::test_one[1]')).toBe("    @pytest.mark.parametrize('x', [1, 2])\n    def test_one(self, x):\n        assert x");
    expect(extractTestSource(source, 't.py::TestA::test_shared')).toBe('    def test_shared(self):\n        assert 1');
    expect(extractTestSource(source, 't.py::missing')).toBeNull();
    expect(extractTestSource(source, 't.py')).toBeNull();
  });

  it('cuts from the text it is given when another text of the same path was read before', () => {
    expect(extractTestSource(source, 't.py::test_top')).toBe('def test_top():\n    assert True');
    const edited = `def test_other():\n    pass\n\n\ndef test_top():\n    assert False\n`;
    expect(extractTestSource(edited, 't.py::test_top')).toBe('def test_top():\n    assert False');
    expect(extractTestSource(source, 't.py::test_top')).toBe('def test_top():\n    assert True');
  });
});

describe('fix leaks', () => {
  it('forbids the changed paths, file names and distinctive restored lines', () => {
    const patch = `diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return sorted(x, key=len)\n+    return sorted(x)\n-    y = 1\n+    y = 2\n`;
    const forbidden = fixRevealingStrings(patch);
    expect(forbidden).toEqual(expect.arrayContaining(['pkg/core.py', 'core.py', 'return sorted(x, key=len)']));
    expect(forbidden).not.toContain('y = 1');
    expect(findLeak('calling f() is broken', forbidden)).toBeNull();
    expect(findLeak('the bug is in core.py', forbidden)).toBe('core.py');
  });
});
