import { describe, expect, it } from 'vitest';
import { createBm25Index, tokenizeCode } from './bm25.js';

describe('tokenizeCode', () => {
  it('keeps identifiers whole and split, lower-cased, without stopwords ("by"), numbers or single letters', () => {
    expect(tokenizeCode('def groupBy(self, key_func): return HTTPServer(x, 42)')).toEqual([
      'groupby', 'group', 'key_func', 'key', 'func', 'httpserver', 'http', 'server',
    ]);
    expect(tokenizeCode('__init__ and _private_thing')).toEqual(['init', 'private_thing', 'private', 'thing']);
  });
});

describe('createBm25Index', () => {
  const index = createBm25Index([
    { id: 'a', tokens: ['merge', 'dict', 'merge', 'values'] },
    { id: 'b', tokens: ['merge', 'sorted', 'iterables', 'heap', 'heap', 'key', 'value', 'extra', 'words', 'here'] },
    { id: 'c', tokens: ['frequencies', 'count'] },
  ]);

  it('matches a hand computation of Okapi BM25 (k1 1.2, b 0.75)', () => {
    // N = 3, avg length 16/3. "merge": df 2, idf ln(1 + 1.5/2.5). "heap": df 1, idf ln(1 + 2.5/1.5).
    const idfMerge = Math.log(1 + 1.5 / 2.5);
    const idfHeap = Math.log(1 + 2.5 / 1.5);
    const norm = (length: number): number => 1.2 * (1 - 0.75 + (0.75 * length) / (16 / 3));
    const expectedA = idfMerge * ((2 * 2.2) / (2 + norm(4)));
    const expectedB = idfMerge * ((1 * 2.2) / (1 + norm(10))) + idfHeap * ((2 * 2.2) / (2 + norm(10)));
    const hits = index.search(['merge', 'heap', 'heap', 'unknown']);
    expect(hits.map((hit) => hit.id)).toEqual(['b', 'a']);
    expect(hits[0]?.score).toBeCloseTo(expectedB, 12);
    expect(hits[1]?.score).toBeCloseTo(expectedA, 12);
  });

  it('ranks the rarer term higher, breaks ties by id and leaves non-matching documents out', () => {
    expect(index.search(['count']).map((hit) => hit.id)).toEqual(['c']);
    expect(index.search(['nothing'])).toEqual([]);
    const tied = createBm25Index([{ id: 'y', tokens: ['t'] }, { id: 'x', tokens: ['t'] }, { id: 'z', tokens: ['u'] }]);
    expect(tied.search(['t']).map((hit) => hit.id)).toEqual(['x', 'y']);
    expect(createBm25Index([]).search(['t'])).toEqual([]);
  });
});
