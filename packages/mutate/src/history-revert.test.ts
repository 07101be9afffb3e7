import { extractEntities, hasSyntaxErrors } from '@envgen/python';
import { describe, expect, it } from 'vitest';
import { revertEntity } from './history-revert.js';

function entityOf(source: string, qualifiedName: string) {
  const entity = extractEntities(source, 'mod.py').entities.find((candidate) => candidate.qualifiedName === qualifiedName);
  if (entity === undefined) throw new Error(`no ${qualifiedName}`);
  return entity;
}

const today = `import math


def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    return max(lo, min(x, hi))


def area(r):
    return math.pi * r * r


def helper():
    return 42
`;

const past = `import math


def clamp(x, lo, hi):
    """Clamp x into [lo, hi]."""
    return max(lo, min(x, lo))  # wrong bound


def area(r):
    # the area of a circle
    return math.pi  *  r * r
`;

describe('revertEntity', () => {
  it("puts the past text of a function onto today's file and keeps the rest of today's text", () => {
    const edit = revertEntity({ source: today, entity: entityOf(today, 'clamp'), oldSource: past, origin: 'commit 1a2b3c4d' });
    expect(edit).not.toBeNull();
    expect(edit?.newSource).toBe(today.replace('return max(lo, min(x, hi))', 'return max(lo, min(x, lo))  # wrong bound'));
    expect(edit?.description).toBe('reverted function clamp (line 4) to its text in commit 1a2b3c4d');
  });

  it('returns null when the past text differs only in comments and whitespace, or did not exist', () => {
    expect(revertEntity({ source: today, entity: entityOf(today, 'area'), oldSource: past })).toBeNull();
    expect(revertEntity({ source: today, entity: entityOf(today, 'helper'), oldSource: past })).toBeNull();
    expect(revertEntity({ source: today, entity: entityOf(today, 'clamp'), oldSource: today })).toBeNull();
  });

  it('shifts a method to the indentation of the class today, keeping multi-line strings as they were', () => {
    const now = 'class Box:\n    def size(self):\n        return len(self.items)\n\n    def name(self):\n        return "box"\n';
    const then = 'class Box:\n  def size(self):\n    text = """\n  kept\n"""\n    return len(self.items) - 1\n';
    const edit = revertEntity({ source: now, entity: entityOf(now, 'Box.size'), oldSource: then });
    expect(edit?.newSource).toBe('class Box:\n    def size(self):\n      text = """\n  kept\n"""\n      return len(self.items) - 1\n\n    def name(self):\n        return "box"\n');
    expect(revertEntity({ source: now, entity: entityOf(now, 'Box.name'), oldSource: then })).toBeNull();
  });

  it('matches a redefinition by its position among namesakes and keeps decorators', () => {
    const now = 'def f():\n    return 1\n\n\n@cache\ndef f():\n    return 2\n';
    const then = 'def f():\n    return 1\n\n\n@cache\ndef f():\n    return 3\n';
    const second = extractEntities(now, 'mod.py').entities.filter((entity) => entity.qualifiedName === 'f')[1];
    if (second === undefined) throw new Error('no second f');
    expect(revertEntity({ source: now, entity: second, oldSource: then })?.newSource).toBe(then);
  });

  it('returns null when the spliced result does not parse', () => {
    const now = 'def f(x):\n    return x\n';
    const then = 'def f(x):\n    return (x\n\n\ndef g():\n    pass\n';
    expect(hasSyntaxErrors(then)).toBe(true);
    expect(revertEntity({ source: now, entity: entityOf(now, 'f'), oldSource: then })).toBeNull();
  });
});
