import { describe, expect, it } from 'vitest';
import { diffLineHunks } from './line-diff.js';

describe('diffLineHunks', () => {
  it('reports replaced, inserted and deleted runs with 1-based lines', () => {
    const before = 'a\nb\nc\nd\ne\n';
    const after = 'a\nB\nc\nx\ny\nd\n';
    expect(diffLineHunks(before, after)).toEqual([
      { deleted: [2], added: [2], oldAnchor: 1 },
      { deleted: [], added: [4, 5], oldAnchor: 3 },
      { deleted: [5], added: [], oldAnchor: 4 },
    ]);
  });

  it('treats a missing end-of-file newline as a change to the last line, like git', () => {
    expect(diffLineHunks('a\nb', 'a\nb\n')).toEqual([{ deleted: [2], added: [2], oldAnchor: 1 }]);
  });

  it('handles empty sides', () => {
    expect(diffLineHunks('', 'a\nb\n')).toEqual([{ deleted: [], added: [1, 2], oldAnchor: 0 }]);
    expect(diffLineHunks('a\n', '')).toEqual([{ deleted: [1], added: [], oldAnchor: 0 }]);
    expect(diffLineHunks('same\n', 'same\n')).toEqual([]);
  });
});
