import { describe, expect, it } from 'vitest';
import { f1 } from './f1.js';

const set = (...items: string[]): Set<string> => new Set(items);

describe('f1', () => {
  it('is 1 for an exact match', () => {
    expect(f1(set('a', 'b'), set('b', 'a'))).toBe(1);
  });

  it('is 0 when the gold set is empty, even for an empty prediction', () => {
    expect(f1(set(), set())).toBe(0);
    expect(f1(set('a'), set())).toBe(0);
  });

  it('is 0 for an empty prediction or no overlap', () => {
    expect(f1(set(), set('a'))).toBe(0);
    expect(f1(set('x', 'y'), set('a'))).toBe(0);
  });

  it('computes fractional scores', () => {
    // pred {a}, gold {a,b}: P = 1, R = 1/2, F1 = 2·1·½ / (1 + ½) = 2/3
    expect(f1(set('a'), set('a', 'b'))).toBe(2 / 3);
    // pred {a,b,c}, gold {a}: P = 1/3, R = 1, F1 = (2/3) / (4/3) = 1/2
    expect(f1(set('a', 'b', 'c'), set('a'))).toBe(1 / 2);
    // pred {a,b,x}, gold {a,b,c,d}: tp 2, P = 2/3, R = 1/2, F1 = (2/3) / (7/6) = 4/7
    expect(f1(set('a', 'b', 'x'), set('a', 'b', 'c', 'd'))).toBe(4 / 7);
  });

  it('is symmetric when both sets are non-empty', () => {
    expect(f1(set('a', 'b', 'x'), set('a', 'b', 'c', 'd'))).toBe(f1(set('a', 'b', 'c', 'd'), set('a', 'b', 'x')));
  });
});
