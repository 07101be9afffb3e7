import { describe, expect, it } from 'vitest';
import { createLineBatcher } from './line-batcher.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('createLineBatcher', () => {
  it('writes the lines of one turn together on the next turn, in order', async () => {
    const writes: string[] = [];
    const lines = createLineBatcher((text) => writes.push(text));
    lines.write('a');
    lines.write('b');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['a\nb\n']);
    lines.write('c');
    await nextTurn();
    await nextTurn();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('writes at once past maxBytes, and on flush', () => {
    const writes: string[] = [];
    const lines = createLineBatcher((text) => writes.push(text), { maxBytes: 8 });
    lines.write('1234');
    lines.write('5678');
    expect(writes).toEqual(['1234\n5678\n']);
    lines.write('x');
    lines.flush();
    lines.flush();
    expect(writes).toEqual(['1234\n5678\n', 'x\n']);
  });
});
