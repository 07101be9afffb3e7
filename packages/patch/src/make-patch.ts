import { structuredPatch } from 'diff';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { formatPatch } from './format-patch.js';
import { checkRepoPath } from './repo-path.js';
import type { FilePatch, PatchedFile } from './types.js';

/** Lines of context around each change, as git writes by default. */
const CONTEXT_LINES = 3;

/**
 * Where the lines both texts share at their start end, less `context` lines: the offset (in
 * characters and lines) the diff may start from. jsdiff's Myers search follows the common
 * prefix before it branches and decides every later step by relative positions only, so the
 * diff of the rest, shifted by the lines skipped, is the diff of the whole, byte for byte; a
 * test module of a thousand lines that loses one method near its end is diffed from there.
 */
function commonStart(before: string, after: string, context: number): { chars: number; lines: number } {
  const starts: number[] = [0];
  let at = 0;
  for (;;) {
    const end = before.indexOf('\n', at);
    // Only whole lines, each with its newline, count as shared.
    if (end < 0 || after.indexOf('\n', at) !== end || before.slice(at, end) !== after.slice(at, end)) break;
    at = end + 1;
    starts.push(at);
  }
  const lines = Math.max(0, starts.length - 1 - context);
  return { chars: starts[lines] ?? 0, lines };
}

/**
 * A git-style unified diff (`diff --git a/p b/p`, `/dev/null` for created and deleted files,
 * "\ No newline at end of file" where a side lacks a final newline, 3 lines of context) of
 * files given as before/after contents (null = absent). Files are sorted by path and unchanged
 * files left out, so the same input always yields byte-identical text (instance ids hash it).
 * Throws `path-escape` for a path that is not repo-relative and safe, `usage` for a path given twice.
 */
export function makePatch(files: readonly PatchedFile[]): string {
  const seen = new Set<string>();
  const patches: FilePatch[] = [];
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const unsafe = checkRepoPath(file.path);
    if (unsafe) throw new EnvgenError(ERROR_CODES.pathEscape, `Cannot make a patch: ${unsafe.message}; pass repo-relative paths.`);
    if (seen.has(file.path)) throw new EnvgenError(ERROR_CODES.usage, `Cannot make a patch: ${file.path} is given twice; pass each file once.`);
    seen.add(file.path);
    if (file.before === file.after || (file.before === null && file.after === null)) continue;
    const before = file.before ?? '';
    const after = file.after ?? '';
    const skip = commonStart(before, after, CONTEXT_LINES);
    const { hunks } = structuredPatch(file.path, file.path, before.slice(skip.chars), after.slice(skip.chars), '', '', { context: CONTEXT_LINES });
    patches.push({
      oldPath: file.before === null ? null : file.path,
      newPath: file.after === null ? null : file.path,
      hunks: hunks.map((hunk) => ({ ...hunk, oldStart: hunk.oldStart + skip.lines, newStart: hunk.newStart + skip.lines, lines: [...hunk.lines] })),
    });
  }
  return formatPatch({ files: patches });
}
