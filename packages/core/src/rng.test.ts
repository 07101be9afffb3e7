import { describe, expect, it } from 'vitest';
import { createRng } from './rng.js';

describe('createRng', () => {
  it('repeats the same sequence for the same seed and differs for another', () => {
    const a = createRng(7);
    const b = createRng(7);
    const c = createRng(8);
    const seqA = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(seqA);
  });

  it('keeps int() in range and shuffle() a permutation', () => {
    const rng = createRng('seed');
    for (let i = 0; i < 1000; i++) {
      const v = rng.int(3);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(3);
    }
    const items = [1, 2, 3, 4, 5, 6, 7, 8];
    expect([...rng.shuffle(items)].sort()).toEqual(items);
    expect(() => rng.pick([])).toThrow(RangeError);
  });
});
