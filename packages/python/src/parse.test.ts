import { describe, expect, it } from 'vitest';
import { hasSyntaxErrors, parsePython, sameSyntaxTree } from './parse.js';

describe('parsePython', () => {
  it('returns a tree-sitter module tree', () => {
    const tree = parsePython('def f():\n    return 1\n');
    expect(tree.rootNode.type).toBe('module');
    expect(tree.rootNode.namedChildren.map((node) => node.type)).toEqual(['function_definition']);
  });
});

describe('hasSyntaxErrors', () => {
  it('accepts valid Python and rejects broken or incomplete code', () => {
    expect(hasSyntaxErrors('x = [1, 2]\nasync def f():\n    await g()\n')).toBe(false);
    expect(hasSyntaxErrors('def f(:\n    pass\n')).toBe(true);
    expect(hasSyntaxErrors('x = (1\n')).toBe(true);
    expect(hasSyntaxErrors('if x\n    y = 1\n')).toBe(true);
  });
});

describe('sameSyntaxTree', () => {
  const base = 'def f(a, b):\n    # add them\n    return a + b  # sum\n';

  it('ignores comments, blank lines, spacing and line continuations', () => {
    expect(sameSyntaxTree(base, 'def f(a,b):\n\n    return a+b\n')).toBe(true);
    expect(sameSyntaxTree(base, 'def f(a, b):\n    return a + \\\n        b\n')).toBe(true);
  });

  it('sees changed operators, names, literals and string contents', () => {
    expect(sameSyntaxTree(base, 'def f(a, b):\n    return a - b\n')).toBe(false);
    expect(sameSyntaxTree(base, 'def f(a, c):\n    return a + c\n')).toBe(false);
    expect(sameSyntaxTree('x = 1\n', 'x = 2\n')).toBe(false);
    expect(sameSyntaxTree('s = "a\\nb"\n', 's = "c\\nb"\n')).toBe(false);
    expect(sameSyntaxTree('s = "a b"\n', 's = "ab"\n')).toBe(false);
    expect(sameSyntaxTree('x = 1\n', 'x = 1\ny = 2\n')).toBe(false);
  });

  it('sees a changed indentation that moves a statement out of a block', () => {
    expect(sameSyntaxTree('if a:\n    b()\n    c()\n', 'if a:\n    b()\nc()\n')).toBe(false);
  });
});
