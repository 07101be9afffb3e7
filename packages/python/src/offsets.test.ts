import { describe, expect, it } from 'vitest';
import { createOffsetMap } from './offsets.js';

describe('createOffsetMap', () => {
  const source = 'a\né✓\n😀x\n\nz';

  it('converts every string index to its UTF-8 byte offset and back', () => {
    const map = createOffsetMap(source);
    for (let index = 0; index <= source.length; index += 1) {
      const isLowSurrogate = /[\uDC00-\uDFFF]/.test(source.charAt(index));
      if (isLowSurrogate) continue;
      const byte = Buffer.byteLength(source.slice(0, index), 'utf8');
      expect(map.byteAt(index)).toBe(byte);
      expect(map.indexAt(byte)).toBe(index);
    }
  });

  it('maps a byte inside a multi-byte character to that character', () => {
    const map = createOffsetMap(source);
    const emojiByte = Buffer.byteLength('a\né✓\n', 'utf8');
    expect(map.indexAt(emojiByte + 2)).toBe(source.indexOf('😀'));
  });
});
