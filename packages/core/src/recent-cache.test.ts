import { describe, expect, it } from 'vitest';
import { recentCache } from './recent-cache.js';

describe('recentCache', () => {
  it('makes a value once while its key is among the last asked for', () => {
    const cache = recentCache<string, number>(2);
    let made = 0;
    const make = () => ++made;
    expect(cache.get('a', make)).toBe(1);
    expect(cache.get('b', make)).toBe(2);
    expect(cache.get('a', make)).toBe(1);
    // 'b' is now the oldest: a third key drops it, not 'a'.
    expect(cache.get('c', make)).toBe(3);
    expect(cache.get('a', make)).toBe(1);
    expect(cache.get('b', make)).toBe(4);
  });

  it('weighs keys against the capacity and keeps the latest even when it alone weighs more', () => {
    const cache = recentCache<string, string>(10, (key) => key.length);
    let made = 0;
    const make = () => `v${++made}`;
    cache.get('aaaa', make);
    cache.get('bbbb', make);
    // 4 + 4 + 6 > 10: the oldest goes, and 4 + 6 fits.
    expect(cache.get('cccccc', make)).toBe('v3');
    expect(cache.get('bbbb', make)).toBe('v2');
    expect(cache.get('aaaa', make)).toBe('v4');
    // 20 alone is over: every other key goes, the latest stays.
    expect(cache.get('x'.repeat(20), make)).toBe('v5');
    expect(cache.get('x'.repeat(20), make)).toBe('v5');
    expect(cache.get('bbbb', make)).toBe('v6');
  });

  it('keeps a made value that is undefined', () => {
    const cache = recentCache<string, undefined>(1);
    let made = 0;
    cache.get('a', () => void made++);
    cache.get('a', () => void made++);
    expect(made).toBe(1);
  });
});
