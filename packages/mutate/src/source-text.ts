import { EnvgenError, ERROR_CODES } from '@envgen/core';
import type { SyntaxNode } from '@envgen/python';

// All offsets here are JavaScript string indices, the unit tree-sitter's node binding reports.

/** Replace `[start, end)` of the source with `text`. */
export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/** Applies non-overlapping edits (any order) to `source`. */
export function applyTextEdits(source: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const edit of sorted) {
    if (edit.start < at || edit.end < edit.start) {
      throw new EnvgenError(ERROR_CODES.internal, `overlapping mutation edits at index ${edit.start}; report this as an envgen bug`);
    }
    out += source.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  return out + source.slice(at);
}

/** Index of the first character of the line holding `index`. */
export function lineStart(source: string, index: number): number {
  return source.lastIndexOf('\n', index - 1) + 1;
}

/** Index of the newline ending the line holding `index` (or the source length). */
export function lineEnd(source: string, index: number): number {
  const newline = source.indexOf('\n', index);
  return newline === -1 ? source.length : newline;
}

/** Index just past the newline ending the line holding `index` (or the source length). */
function afterLine(source: string, index: number): number {
  return Math.min(lineEnd(source, index) + 1, source.length);
}

/** The whitespace before `node` on its line, or null when code precedes it there. */
export function indentOf(source: string, node: SyntaxNode): string | null {
  const prefix = source.slice(lineStart(source, node.startIndex), node.startIndex);
  return /^[ \t]*$/.test(prefix) ? prefix : null;
}

/**
 * True when `node` has whole lines to itself: only indentation before it, only whitespace or
 * a comment after it. Such a statement can be deleted or moved by lines.
 */
export function ownsLines(source: string, node: SyntaxNode): boolean {
  if (indentOf(source, node) === null) return false;
  const rest = source.slice(node.endIndex, lineEnd(source, node.endIndex));
  return /^[ \t]*(#.*)?$/.test(rest);
}

/** 1-based line of a node, for descriptions. */
export function lineOf(node: SyntaxNode): number {
  return node.startPosition.row + 1;
}

/** The statements of a block, without comments. */
export function statementsOf(block: SyntaxNode): SyntaxNode[] {
  return block.namedChildren.filter((child) => child.type !== 'comment');
}

/** The lines of a statement without the trailing newline: what moves when statements swap. */
export function lineSlot(source: string, node: SyntaxNode): TextEdit {
  const start = lineStart(source, node.startIndex);
  const end = lineEnd(source, node.endIndex);
  return { start, end, text: source.slice(start, end) };
}

/**
 * Edits deleting `doomed` (statements of `block` that own their lines). When nothing would
 * remain in the block, the last deleted statement becomes `pass` so the block stays valid.
 */
export function deleteStatements(source: string, block: SyntaxNode, doomed: readonly SyntaxNode[]): TextEdit[] {
  const ids = new Set(doomed.map((node) => node.id));
  const survivors = statementsOf(block).filter((node) => !ids.has(node.id));
  const edits = doomed.map((node) => ({
    start: blankLinesBefore(source, lineStart(source, node.startIndex)),
    end: afterLine(source, node.endIndex),
    text: '',
  }));
  const last = doomed.at(-1);
  const lastEdit = edits.at(-1);
  if (survivors.length === 0 && last !== undefined && lastEdit !== undefined) {
    lastEdit.text = `${indentOf(source, last) ?? ''}pass${source.slice(lastEdit.start, lastEdit.end).endsWith('\n') ? '\n' : ''}`;
  }
  return mergeAdjacent(edits);
}

/** Start of the run of blank lines that ends at `start` (a line start), so they go with a deleted statement. */
function blankLinesBefore(source: string, start: number): number {
  let at = start;
  while (at > 0) {
    const previous = lineStart(source, at - 1);
    if (source.slice(previous, at).trim() !== '') break;
    at = previous;
  }
  return at;
}

/** Joins edits whose ranges touch, so a run of deleted lines is one edit. */
function mergeAdjacent(edits: TextEdit[]): TextEdit[] {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  const merged: TextEdit[] = [];
  for (const edit of sorted) {
    const previous = merged.at(-1);
    if (previous !== undefined && previous.end === edit.start) {
      previous.end = edit.end;
      previous.text += edit.text;
    } else {
      merged.push({ ...edit });
    }
  }
  return merged;
}

/**
 * The text of the lines `[start, end)` (start at a line start) re-indented from `from` to
 * `to`. Lines inside multi-line strings keep their text (it is string content); lines that do
 * not start with `from` (blank, bracket continuations) are kept as they are.
 */
export function reindentLines(
  source: string,
  range: { start: number; end: number },
  from: string,
  to: string,
  within: SyntaxNode,
): string {
  const stringSpans = within
    .descendantsOfType('string')
    .filter((node) => node.startPosition.row !== node.endPosition.row)
    .map((node) => [node.startIndex, node.endIndex] as const);
  const insideString = (index: number): boolean => stringSpans.some(([s, e]) => s < index && index < e);
  const lines = source.slice(range.start, range.end).split('\n');
  let at = range.start;
  return lines
    .map((line) => {
      const lineAt = at;
      at += line.length + 1;
      if (insideString(lineAt) || !line.startsWith(from) || line.trim() === '') return line;
      return to + line.slice(from.length);
    })
    .join('\n');
}

/** The span of whole lines from the first to the last of `nodes`, without the final newline. */
export function linesSpanning(source: string, first: SyntaxNode, last: SyntaxNode): { start: number; end: number } {
  return { start: lineStart(source, first.startIndex), end: lineEnd(source, last.endIndex) };
}
