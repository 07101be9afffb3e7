import { describe, expect, it } from 'vitest';
import { hashValue, stableStringify } from './hash.js';

describe('stableStringify', () => {
  it('orders keys so equal objects serialize alike', () => {
    expect(stableStringify({ b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } })).toBe('{"a":{"c":[3,{"e":0,"f":1}],"d":2},"b":1}');
    expect(hashValue({ x: 1, y: 2 })).toBe(hashValue({ y: 2, x: 1 }));
    expect(hashValue({ x: 1 })).not.toBe(hashValue({ x: 2 }));
  });
});
