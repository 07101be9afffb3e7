import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { entityKey } from '@envgen/testrun';
import type { ChangedFile } from './tree.js';

/**
 * Where a candidate's change can first be seen. `covering`: it lies inside the bodies of
 * `entities`, functions that only run inside tests, so no test runs differently before the
 * first test that covered one of them. `suite`: anything else (class- or module-level code,
 * signatures, decorators, docstrings, code run at import time or in shared fixtures,
 * uncovered code) — the whole suite runs from collection on.
 */
export type RunPlan =
  | { mode: 'covering'; entities: string[]; why: string }
  | { mode: 'suite'; why: string };

/** What {@link planRun} knows about the repo. */
export interface PlanContext {
  /** Repo-relative source files (the profile's). */
  sourceFiles: ReadonlySet<string>;
  /** The baseline's coverage map: entity key → node ids. */
  coverage: Readonly<Record<string, readonly string[]>>;
  /** Entity keys whose code runs outside tests' own protocols (imports, collection, shared fixtures). */
  outside: ReadonlySet<string>;
  /**
   * Tests that can observe any change: they start processes, whose code no tracer sees, or
   * took the coverage tracer's profile hook (the baseline's `untraced`).
   */
  alwaysRun: ReadonlySet<string>;
  /**
   * Entities of the clean source files by path, parsed once; when given, every changed
   * file's `before` must be exactly that clean content.
   */
  cleanEntities?: ReadonlyMap<string, readonly Entity[]>;
}

const DOCSTRING_START = /^[rRuU]?("""|'''|"|')/;

/** Byte length of the common prefix and common suffix (not overlapping) of two buffers. */
function commonEnds(a: Buffer, b: Buffer): { prefix: number; suffix: number } {
  const limit = Math.min(a.length, b.length);
  let prefix = 0;
  while (prefix < limit && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < limit - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  return { prefix, suffix };
}

/** End byte of a docstring opening the body at `start`, or -1 when the body has none. */
function docstringEnd(source: Buffer, start: number): number {
  const match = DOCSTRING_START.exec(source.subarray(start, start + 4).toString('latin1'));
  if (match === null) return -1;
  const quote = Buffer.from(match[1] as string, 'latin1');
  for (let index = start + match[0].length; index < source.length; index++) {
    if (source[index] === 0x5c) index++;
    else if (source.subarray(index, index + quote.length).equals(quote)) return index + quote.length;
  }
  return source.length;
}

/** The innermost entity whose whole span (decorators included) holds [start, end). */
function innermost(entities: readonly Entity[], start: number, end: number): Entity | null {
  let best: Entity | null = null;
  for (const entity of entities) {
    if (entity.startByte <= start && end <= entity.endByte && (best === null || entity.endByte - entity.startByte < best.endByte - best.startByte)) {
      best = entity;
    }
  }
  return best;
}

/** Where a file's change lies: bytes [start, oldEnd) of the old source became [start, newEnd) of the new one. */
interface Region {
  start: number;
  oldEnd: number;
  newEnd: number;
}

/**
 * Every equivalent placement of the change, rightmost first: a change whose edges repeat
 * (deleting `x = 1\n` after another line ending in `\n`) can sit one byte further left.
 */
function placements(before: Buffer, after: Buffer): Region[] {
  const { prefix, suffix } = commonEnds(before, after);
  const regions: Region[] = [{ start: prefix, oldEnd: before.length - suffix, newEnd: after.length - suffix }];
  for (;;) {
    const { start, oldEnd, newEnd } = regions[regions.length - 1] as Region;
    if (start === 0) break;
    const oldSlides = oldEnd === start || before[start - 1] === before[oldEnd - 1];
    const newSlides = newEnd === start || after[start - 1] === after[newEnd - 1];
    if (!oldSlides || !newSlides) break;
    regions.push({ start: start - 1, oldEnd: oldEnd - 1, newEnd: newEnd - 1 });
  }
  return regions;
}

/** True when [start, end) lies in the entity's body after its docstring. */
function inBody(entity: Entity, source: Buffer, start: number, end: number): boolean {
  if (start < entity.bodyStartByte || end > entity.bodyEndByte) return false;
  return start >= docstringEnd(source, entity.bodyStartByte);
}

/**
 * The function or method whose body alone a file's change lies in, or why there is none.
 * The body excludes the signature, decorators and a leading docstring: those are read
 * without calling the function (at definition time, by `inspect`, by doctest collection).
 * `oldEntities` are those of `file.before`, when already parsed.
 *
 * Only the clean file's structure is read: the changed text is not parsed here. A change
 * inside a body whose new text reaches out of it (a dedent that ends the function and
 * defines module-level code, a new docstring, another function's code) is caught where it
 * matters, by the checkpoint, which compiles the changed file and compares every code
 * object with the clean one's: module- or class-level code that differs, or a function
 * whose name, flags, closure or docstring changed, declines the checkpoint and the run
 * imports the file afresh (`envgen_warm.swap`).
 */
export function locateBodyChange(file: ChangedFile, oldEntities: readonly Entity[] = extractEntities(file.before, file.path).entities): { entity: Entity } | { reason: string } {
  const before = Buffer.from(file.before, 'utf8');
  const after = Buffer.from(file.after, 'utf8');
  if (before.equals(after)) return { reason: `${file.path} is unchanged` };
  let reason = '';
  for (const region of placements(before, after)) {
    const old = innermost(oldEntities, region.start, region.oldEnd);
    if (old === null) {
      reason ||= `module-level change in ${file.path}`;
      continue;
    }
    if (old.kind === 'class') {
      reason ||= `class-level change in ${file.path}:${old.qualifiedName}`;
      continue;
    }
    if (inBody(old, before, region.start, region.oldEnd)) return { entity: old };
    reason ||= `change outside the body of ${file.path}:${old.qualifiedName}`;
  }
  return { reason };
}

/** Decides where a candidate's files can first be seen (see {@link RunPlan}). */
export function planRun(files: readonly ChangedFile[], context: PlanContext): RunPlan {
  const keys: string[] = [];
  for (const file of files) {
    if (!context.sourceFiles.has(file.path)) return { mode: 'suite', why: `${file.path} is not a source file of the profile` };
    const located = locateBodyChange(file, context.cleanEntities?.get(file.path));
    if ('reason' in located) return { mode: 'suite', why: located.reason };
    const key = entityKey(file.path, located.entity.qualifiedName);
    if (context.outside.has(key)) return { mode: 'suite', why: `${key} runs at import time or in a shared fixture` };
    if ((context.coverage[key]?.length ?? 0) === 0) return { mode: 'suite', why: `${key} has no coverage entry` };
    keys.push(key);
  }
  return { mode: 'covering', entities: keys, why: `body of ${keys.join(', ')}` };
}
