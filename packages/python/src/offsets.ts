/**
 * Converts between JavaScript string indices (UTF-16 code units, what tree-sitter's node
 * binding reports) and UTF-8 byte offsets (what envgen's contracts store) for one source.
 */
export interface OffsetMap {
  /** UTF-8 byte offset of the string index `index` (0 ≤ index ≤ source.length). */
  byteAt(index: number): number;
  /** String index of the UTF-8 byte offset `byte`; a byte inside a character maps to that character's index. */
  indexAt(byte: number): number;
}

/** Index of the last element of the ascending `starts` that is ≤ `value`. */
function findLine(starts: readonly number[], value: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if ((starts[middle] ?? 0) <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Builds an {@link OffsetMap} for `source` (one pass over its lines; lookups are O(log lines + line length)). */
export function createOffsetMap(source: string): OffsetMap {
  const indexStarts = [0];
  const byteStarts = [0];
  let byte = 0;
  let start = 0;
  for (let newline = source.indexOf('\n'); newline !== -1; newline = source.indexOf('\n', start)) {
    byte += Buffer.byteLength(source.slice(start, newline + 1), 'utf8');
    start = newline + 1;
    indexStarts.push(start);
    byteStarts.push(byte);
  }
  const clampIndex = (index: number): number => Math.min(Math.max(index, 0), source.length);
  return {
    byteAt(index) {
      const clamped = clampIndex(index);
      const line = findLine(indexStarts, clamped);
      const lineStart = indexStarts[line] ?? 0;
      return (byteStarts[line] ?? 0) + Buffer.byteLength(source.slice(lineStart, clamped), 'utf8');
    },
    indexAt(target) {
      const line = findLine(byteStarts, target);
      let index = indexStarts[line] ?? 0;
      let at = byteStarts[line] ?? 0;
      while (index < source.length) {
        const codePoint = source.codePointAt(index) ?? 0;
        const width = codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
        if (at + width > target) break;
        at += width;
        index += codePoint >= 0x10000 ? 2 : 1;
      }
      return index;
    },
  };
}
