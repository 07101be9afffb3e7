import { describe, expect, it } from 'vitest';
import { OutputCapture } from './output-capture.js';

const MARKER = '__ENVGEN_DONE_abc ';

describe('OutputCapture', () => {
  it('finds the marker line split across chunks and returns exit code, cwd and what follows', () => {
    const capture = new OutputCapture(MARKER, 100, 100);
    expect(capture.push('hello\nwor')).toBeUndefined();
    expect(capture.push('ld\n\n__ENVGEN_DO')).toBeUndefined();
    expect(capture.push('NE_abc 3 /tmp/repo/my dir')).toBeUndefined();
    const done = capture.push('\nlate output');
    expect(done).toEqual({ exitCode: 3, cwd: '/tmp/repo/my dir', rest: 'late output' });
    // The newline the marker line starts with is not the command's.
    expect(capture.render(true)).toEqual({ text: 'hello\nworld\n', omittedChars: 0, totalChars: 12 });
  });

  it('keeps output without a trailing newline intact', () => {
    const capture = new OutputCapture(MARKER, 100, 100);
    capture.push('no newline');
    expect(capture.push('\n__ENVGEN_DONE_abc 0 /tmp/repo\n')).toBeDefined();
    expect(capture.render(true).text).toBe('no newline');
  });

  it('keeps only the head and the tail of long output, counting what it drops', () => {
    const capture = new OutputCapture(MARKER, 10, 10);
    const long = Array.from({ length: 1000 }, (_, i) => String(i % 10)).join('');
    for (let i = 0; i < 100; i++) capture.push(long);
    capture.push('END\n__ENVGEN_DONE_abc 0 /tmp/repo\n');
    const out = capture.render(true);
    expect(out.totalChars).toBe(100_000 + 3);
    // The tail held the marker's leading newline too, which is not output.
    expect(out.omittedChars).toBe(100_004 - 20);
    expect(out.text).toBe(`0123456789\n[... ${100_004 - 20} characters omitted ...]\n456789END`);
  });

  it('renders a cut-short command with the unread carry', () => {
    const capture = new OutputCapture(MARKER, 100, 100);
    capture.push('partial output');
    expect(capture.render(false).text).toBe('partial output');
  });

  it('ignores a marker with another nonce', () => {
    const capture = new OutputCapture(MARKER, 100, 100);
    expect(capture.push('__ENVGEN_DONE_xyz 0 /tmp\n')).toBeUndefined();
    capture.push('\n__ENVGEN_DONE_abc 1 /tmp\n');
    expect(capture.render(true).text).toBe('__ENVGEN_DONE_xyz 0 /tmp\n');
  });
});
