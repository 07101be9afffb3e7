import { diffArrays } from 'diff';

/** A run of changed lines: `deleted` old lines replaced by `added` new lines (1-based, possibly empty). */
export interface LineHunk {
  /** Old lines the fix deletes. */
  deleted: number[];
  /** New lines the fix adds. */
  added: number[];
  /** The old line after which the hunk sits (0 = before the first line). */
  oldAnchor: number;
}

/** Splits text into lines that keep their `\n`, so a changed end-of-file newline changes the last line (as in git). */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The changed-line hunks between two texts (Myers line diff). */
export function diffLineHunks(before: string, after: string): LineHunk[] {
  const hunks: LineHunk[] = [];
  let oldLine = 0;
  let newLine = 0;
  let current: LineHunk | null = null;
  for (const change of diffArrays(splitLines(before), splitLines(after))) {
    if (!change.added && !change.removed) {
      current = null;
      oldLine += change.count;
      newLine += change.count;
      continue;
    }
    if (current === null) {
      current = { deleted: [], added: [], oldAnchor: oldLine };
      hunks.push(current);
    }
    for (let i = 0; i < change.count; i += 1) {
      if (change.removed) {
        oldLine += 1;
        current.deleted.push(oldLine);
      } else {
        newLine += 1;
        current.added.push(newLine);
      }
    }
  }
  return hunks;
}
