/** The line the persistent shell prints after each command: `\n<marker><exit code> <cwd>\n`. */
export interface CommandCompletion {
  exitCode: number;
  cwd: string;
  /** Output after the marker line (belongs to whatever runs next). */
  rest: string;
}

/** Room kept unread at the end of the stream so a marker line split across chunks is still found. */
const MARKER_LINE_MAX = 4_400;

/**
 * Collects one command's output from the shell's stream in bounded memory and finds the
 * completion marker. Only `headChars` from the start and `tailChars` from the end are
 * kept; what lies between is counted, not stored (`yes` for ten seconds costs nothing).
 */
export class OutputCapture {
  private head = '';
  private tail = '';
  private omitted = 0;
  private carry = '';

  constructor(
    private readonly marker: string,
    private readonly headChars: number,
    private readonly tailChars: number,
  ) {}

  /** Feeds stream text; returns the completion once the marker line is complete. */
  push(text: string): CommandCompletion | undefined {
    const all = this.carry + text;
    const at = all.indexOf(this.marker);
    if (at >= 0) {
      const end = all.indexOf('\n', at + this.marker.length);
      this.commit(all.slice(0, at));
      if (end < 0) {
        this.carry = all.slice(at);
        return undefined;
      }
      this.carry = '';
      const line = all.slice(at + this.marker.length, end);
      const space = line.indexOf(' ');
      const exitCode = Number(space < 0 ? line : line.slice(0, space));
      return { exitCode: Number.isInteger(exitCode) ? exitCode : -1, cwd: space < 0 ? '' : line.slice(space + 1), rest: all.slice(end + 1) };
    }
    const keep = Math.min(all.length, this.marker.length + MARKER_LINE_MAX);
    this.commit(all.slice(0, all.length - keep));
    this.carry = all.slice(all.length - keep);
    return undefined;
  }

  /** Characters seen so far (kept or omitted), the unread carry included. */
  get totalChars(): number {
    return this.head.length + this.omitted + this.tail.length + this.carry.length;
  }

  /**
   * The output so far. With `completed`, the newline the marker line starts with is
   * dropped; otherwise the unread carry is included (a command cut short by a timeout).
   */
  render(completed: boolean): { text: string; omittedChars: number; totalChars: number } {
    if (!completed && this.carry !== '') {
      this.commit(this.carry);
      this.carry = '';
    }
    let head = this.head;
    let tail = this.tail;
    if (completed) {
      if (tail.endsWith('\n')) tail = tail.slice(0, -1);
      else if (tail === '' && head.endsWith('\n')) head = head.slice(0, -1);
    }
    const totalChars = head.length + this.omitted + tail.length;
    if (this.omitted === 0) return { text: head + tail, omittedChars: 0, totalChars };
    return { text: `${head}\n[... ${this.omitted} characters omitted ...]\n${tail}`, omittedChars: this.omitted, totalChars };
  }

  private commit(text: string): void {
    if (text === '') return;
    const room = this.headChars - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
      if (text === '') return;
    }
    this.tail += text;
    if (this.tail.length > this.tailChars) {
      const cut = this.tail.length - this.tailChars;
      this.omitted += cut;
      this.tail = this.tail.slice(cut);
    }
  }
}
