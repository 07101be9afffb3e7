import { createOffsetMap, extractEntities, hasSyntaxErrors, parsePython, sameSyntaxTree } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { lineStart, reindentLines } from './source-text.js';
import type { MutationEdit } from './types.js';

/** Input of {@link revertEntity}. */
export interface RevertEntityInput {
  /** Today's file. */
  source: string;
  /** An entity extracted from `source`. */
  entity: Entity;
  /** The same file at a past commit. */
  oldSource: string;
  /** Where `oldSource` comes from, for the description (e.g. `commit 1a2b3c4d`). */
  origin?: string;
}

/** An entity's text and where it sits: string indices and the indentation of its first line. */
interface Placed {
  start: number;
  end: number;
  indent: string;
}

/** Null when code precedes the definition on its line (`if x: def f(): ...`): no block to re-indent. */
function placeEntity(source: string, entity: Entity): Placed | null {
  const offsets = createOffsetMap(source);
  const start = offsets.indexAt(entity.startByte);
  const indent = source.slice(lineStart(source, start), start);
  return /^[ \t]*$/.test(indent) ? { start, end: offsets.indexAt(entity.endByte), indent } : null;
}

/** The entity's text with its lines moved from its own indentation to `to` (multi-line strings kept). */
function indentEntity(source: string, placed: Placed, to: string): string {
  const lines = { start: lineStart(source, placed.start), end: placed.end };
  return reindentLines(source, lines, placed.indent, to, parsePython(source).rootNode).slice(to.length);
}

/**
 * History reversion: puts the past text of `entity` (the definition with the same qualified name,
 * and the same position among redefinitions, in `oldSource`) in place of today's text, re-indented
 * to today's level; the rest of today's file is kept. Null when the entity did not exist then,
 * when its past text differs only in comments or whitespace, or when the result does not parse.
 */
export function revertEntity(input: RevertEntityInput): MutationEdit | null {
  const { source, entity, oldSource } = input;
  const namesake = (candidate: Entity): boolean => candidate.qualifiedName === entity.qualifiedName;
  const ordinal = extractEntities(source, '').entities.filter((candidate) => namesake(candidate) && candidate.startByte < entity.startByte).length;
  const past = extractEntities(oldSource, '').entities.filter(namesake)[ordinal];
  if (past === undefined) return null;
  const today = placeEntity(source, entity);
  const then = placeEntity(oldSource, past);
  if (today === null || then === null) return null;
  // Compared at column 0, so a definition that only moved in or out of a block counts as the same.
  if (sameSyntaxTree(indentEntity(source, today, ''), indentEntity(oldSource, then, ''))) return null;
  const replacement = then.indent === today.indent ? oldSource.slice(then.start, then.end) : indentEntity(oldSource, then, today.indent);
  const newSource = source.slice(0, today.start) + replacement + source.slice(today.end);
  if (hasSyntaxErrors(newSource)) return null;
  const where = input.origin === undefined ? 'an older version of the file' : input.origin;
  return { newSource, description: `reverted ${entity.kind} ${entity.qualifiedName} (line ${entity.startLine}) to its text in ${where}` };
}
