import { structuredPatch } from 'diff';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { formatPatch } from './format-patch.js';
import { checkRepoPath } from './repo-path.js';
import type { FilePatch, PatchedFile } from './types.js';

/** Lines of context around each change, as git writes by default. */
const CONTEXT_LINES = 3;

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
    const { hunks } = structuredPatch(file.path, file.path, file.before ?? '', file.after ?? '', '', '', { context: CONTEXT_LINES });
    patches.push({
      oldPath: file.before === null ? null : file.path,
      newPath: file.after === null ? null : file.path,
      hunks: hunks.map((hunk) => ({ ...hunk, lines: [...hunk.lines] })),
    });
  }
  return formatPatch({ files: patches });
}
