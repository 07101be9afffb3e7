import type { FilePatch, Hunk, ParsedPatch } from './types.js';

function reverseHunk(hunk: Hunk): Hunk {
  // Within a run of changed lines the removed lines must come first: the reverse's removed
  // lines are the original's added ones, so each run is reordered, keeping "\" markers attached.
  const lines: string[] = [];
  let removed: string[] = [];
  let added: string[] = [];
  let last: string[] | null = null;
  const flush = (): void => {
    lines.push(...removed, ...added);
    removed = [];
    added = [];
  };
  for (const line of hunk.lines) {
    const op = line[0];
    if (op === '+') {
      removed.push(`-${line.slice(1)}`);
      last = removed;
    } else if (op === '-') {
      added.push(`+${line.slice(1)}`);
      last = added;
    } else if (op === '\\') {
      if (last === null) lines.push(line);
      else last.push(line);
    } else {
      flush();
      lines.push(line);
      last = lines;
    }
  }
  flush();
  return { oldStart: hunk.newStart, oldLines: hunk.newLines, newStart: hunk.oldStart, newLines: hunk.oldLines, lines };
}

/** The patch that undoes `patch`: sides swapped, created files deleted and the reverse. */
export function reversePatch(patch: ParsedPatch): ParsedPatch {
  return {
    files: patch.files.map((file): FilePatch => ({ oldPath: file.newPath, newPath: file.oldPath, hunks: file.hunks.map(reverseHunk) })),
  };
}

/** Every repo-relative path the patch reads or writes (both sides of renames), sorted and unique. */
export function patchedPaths(patch: ParsedPatch): string[] {
  const paths = new Set<string>();
  for (const file of patch.files) {
    if (file.oldPath !== null) paths.add(file.oldPath);
    if (file.newPath !== null) paths.add(file.newPath);
  }
  return [...paths].sort();
}
