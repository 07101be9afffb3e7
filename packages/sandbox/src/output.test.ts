import { describe, expect, it } from 'vitest';
import { createOutputCollector } from './output.js';

describe('createOutputCollector', () => {
  it('keeps everything under the cap', () => {
    const collector = createOutputCollector(10, 4);
    collector.push(Buffer.from('abc'));
    collector.push(Buffer.from('def'));
    expect(collector.head().toString()).toBe('abcdef');
    expect(collector.tail().toString()).toBe('cdef');
    expect(collector.truncated).toBe(false);
    expect(collector.totalBytes).toBe(6);
  });

  it('cuts at the cap, counts the rest and keeps the last bytes', () => {
    const collector = createOutputCollector(5, 3);
    collector.push(Buffer.from('0123'));
    collector.push(Buffer.from('4567'));
    collector.push(Buffer.from('89'));
    expect(collector.head().toString()).toBe('01234');
    expect(collector.tail().toString()).toBe('789');
    expect(collector.truncated).toBe(true);
    expect(collector.totalBytes).toBe(10);
  });

  it('is not truncated at exactly the cap', () => {
    const collector = createOutputCollector(4);
    collector.push(Buffer.from('abcd'));
    expect(collector.truncated).toBe(false);
    expect(collector.tail().length).toBe(0);
  });
});
