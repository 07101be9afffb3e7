import { parsePython } from './parse.js';
import type { SyntaxNode } from './parse.js';

/**
 * The rows of `after` an edit of `before` changed, grown to whole top-level statements of
 * `before`'s tree: the text from the first such statement's start to the last one's end, as it
 * reads after the edit. Rows outside are the same on both sides (a common prefix and suffix).
 */
function editedStatements(before: string, root: SyntaxNode, after: string): string {
  const old = before.split('\n');
  const now = after.split('\n');
  let prefix = 0;
  while (prefix < old.length && prefix < now.length && old[prefix] === now[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < old.length - prefix && suffix < now.length - prefix && old[old.length - 1 - suffix] === now[now.length - 1 - suffix]) suffix += 1;
  // Rows of `before` the edit replaced: [prefix, last]; an insertion replaces none (last < prefix).
  const last = old.length - 1 - suffix;
  let first = prefix;
  let end = Math.max(last, prefix - 1);
  // A top-level statement holding a row at either edge of the edit (the rows just outside it
  // included) is taken whole, so the text starts and ends where the module's statements do.
  const edges = [prefix - 1, prefix, last, last + 1];
  for (const statement of root.namedChildren) {
    const top = statement.startPosition.row;
    const bottom = statement.endPosition.row;
    if (edges.some((row) => top <= row && row <= bottom)) {
      first = Math.min(first, top);
      end = Math.max(end, bottom);
    }
  }
  // Rows of `before` past `end` are in the common suffix: the same rows of `after`, shifted.
  const endAfter = end + now.length - old.length;
  return now.slice(first, endAfter + 1).join('\n');
}

/**
 * Whether `after`, an edit of `before`, has a syntax error, where `before` parses without one
 * into `root`. Python's top-level statements parse independently of each other, so only the
 * statements the edit touched are parsed again (a test module of a thousand lines loses one
 * method: its class, not the module); an error found there is confirmed on the whole file.
 */
export function editHasSyntaxErrors(before: string, root: SyntaxNode, after: string): boolean {
  if (before === after) return false;
  if (!parsePython(editedStatements(before, root, after)).rootNode.hasError) return false;
  return parsePython(after).rootNode.hasError;
}
