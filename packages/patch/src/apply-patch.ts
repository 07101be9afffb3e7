import { isPatchProblem, parsePatch } from './parse-patch.js';
import type { ApplyPatchOptions, ApplyPatchResult, FilePatch, Hunk, HunkOffset, ParsedPatch, PatchProblem, PatchedFile } from './types.js';

/** A text as lines without their `\n`, and whether the last line ended with one. */
interface TextLines {
  lines: string[];
  finalNewline: boolean;
}

function splitText(text: string): TextLines {
  if (text === '') return { lines: [], finalNewline: true };
  const finalNewline = text.endsWith('\n');
  return { lines: (finalNewline ? text.slice(0, -1) : text).split('\n'), finalNewline };
}

function joinText({ lines, finalNewline }: TextLines): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}${finalNewline ? '\n' : ''}`;
}

/** A hunk as old/new line lists, with where each side's "\ No newline at end of file" sits. */
interface HunkSides {
  /** Every old line, with whether it is context (may be fuzzed) or removed (must match). */
  old: Array<{ text: string; context: boolean }>;
  /** Every new line; a context line keeps the index of its old line, since fuzz keeps the file's text. */
  added: Array<{ text: string; contextOf: number | null }>;
  oldNoFinalNewline: boolean;
  newNoFinalNewline: boolean;
}

function sidesOf(hunk: Hunk, lineEnding: (line: string) => string): HunkSides {
  const sides: HunkSides = { old: [], added: [], oldNoFinalNewline: false, newNoFinalNewline: false };
  let previous = ' ';
  for (const line of hunk.lines) {
    const op = line[0] ?? ' ';
    const text = lineEnding(line.slice(1));
    if (op === '\\') {
      if (previous !== '+') sides.oldNoFinalNewline = true;
      if (previous !== '-') sides.newNoFinalNewline = true;
    } else if (op === '-') {
      sides.old.push({ text, context: false });
    } else if (op === '+') {
      sides.added.push({ text, contextOf: null });
    } else {
      sides.added.push({ text, contextOf: sides.old.length });
      sides.old.push({ text, context: true });
    }
    previous = op;
  }
  return sides;
}

/** Mismatched context lines of the hunk placed at `pos`, or null when a removed line differs or it runs off the file. */
function mismatchesAt(file: string[], sides: HunkSides, pos: number, limit: number): number | null {
  if (pos < 0 || pos + sides.old.length > file.length) return null;
  let mismatches = 0;
  for (const [i, line] of sides.old.entries()) {
    if (file[pos + i] === line.text) continue;
    if (!line.context) return null;
    mismatches += 1;
    if (mismatches > limit) return null;
  }
  return mismatches;
}

/** Offsets in the order GNU patch tries them: 0, +1, -1, +2, -2... */
function* offsetsNear(maxOffset: number): Generator<number> {
  yield 0;
  for (let d = 1; d <= maxOffset; d += 1) {
    yield d;
    yield -d;
  }
}

function closestPlacement(file: string[], sides: HunkSides, expected: number, minPos: number, maxOffset: number): Extract<PatchProblem, { kind: 'does-not-apply' }>['closest'] {
  let best: { pos: number; wrong: number } | null = null;
  for (const offset of offsetsNear(maxOffset)) {
    const pos = expected + offset;
    if (pos < minPos || pos + sides.old.length > file.length) continue;
    const wrong = sides.old.filter((line, i) => file[pos + i] !== line.text).length;
    if (best === null || wrong < best.wrong) best = { pos, wrong };
  }
  if (best === null) return null;
  const { pos } = best;
  const mismatches = sides.old.flatMap((line, i) => (file[pos + i] === line.text ? [] : [{ line: pos + i + 1, expected: line.text, found: file[pos + i] ?? null }]));
  return { line: pos + 1, mismatches: mismatches.slice(0, 5) };
}

/** Adapts the patch's line endings to a file that uses CRLF throughout, or LF throughout (as `diff` does). */
function lineEndingAdapter(file: string[], hunks: Hunk[]): (line: string) => string {
  const hunkLines = hunks.flatMap((hunk) => hunk.lines.filter((line) => !line.startsWith('\\')).map((line) => line.slice(1)));
  const fileCrlf = file.length > 0 && file.every((line, i) => line.endsWith('\r') || i === file.length - 1);
  const patchCrlf = hunkLines.length > 0 && hunkLines.every((line) => line.endsWith('\r'));
  const patchLf = hunkLines.every((line) => !line.endsWith('\r'));
  const fileLf = file.every((line) => !line.endsWith('\r'));
  if (fileCrlf && patchLf && file.length > 1) return (line) => `${line}\r`;
  if (fileLf && patchCrlf) return (line) => line.slice(0, -1);
  return (line) => line;
}

function applyFile(before: string, filePatch: FilePatch, path: string, options: Required<ApplyPatchOptions>): { after: string; offsets: HunkOffset[] } | PatchProblem {
  const text = splitText(before);
  const file = text.lines;
  const adapt = lineEndingAdapter(file, filePatch.hunks);
  const result: string[] = [];
  const offsets: HunkOffset[] = [];
  let finalNewline = text.finalNewline;
  let consumed = 0;
  let carriedOffset = 0;
  for (const [index, hunk] of filePatch.hunks.entries()) {
    const sides = sidesOf(hunk, adapt);
    const expected = hunk.oldStart - 1 + carriedOffset;
    const maxOffset = Math.min(options.maxOffset, file.length + sides.old.length);
    let placed: { pos: number; fuzz: number } | null = null;
    for (let allowed = 0; allowed <= options.fuzz && placed === null; allowed += 1) {
      for (const offset of offsetsNear(maxOffset)) {
        const pos = expected + offset;
        if (pos < consumed) continue;
        // A side without a final newline ends the file: the hunk must reach the last line.
        if (sides.oldNoFinalNewline && (pos + sides.old.length !== file.length || text.finalNewline)) continue;
        const fuzz = mismatchesAt(file, sides, pos, allowed);
        if (fuzz !== null) {
          placed = { pos, fuzz };
          break;
        }
      }
    }
    if (placed === null) {
      const closest = closestPlacement(file, sides, expected, consumed, maxOffset);
      const detail = closest === null ? 'the file is too short for it' : `closest at line ${closest.line} with ${closest.mismatches.length} differing line(s), e.g. line ${closest.mismatches[0]?.line ?? '?'}: expected ${JSON.stringify(closest.mismatches[0]?.expected ?? '')}, found ${JSON.stringify(closest.mismatches[0]?.found ?? null)}`;
      return {
        kind: 'does-not-apply',
        path,
        hunk: index + 1,
        expectedLine: expected + 1,
        closest,
        message: `hunk ${index + 1} of ${path} (expected at line ${expected + 1}) does not apply with fuzz ${options.fuzz}: ${detail}`,
      };
    }
    const { pos } = placed;
    result.push(...file.slice(consumed, pos));
    // Fuzzed context keeps the file's own lines, not the patch's.
    for (const line of sides.added) result.push(line.contextOf === null ? line.text : (file[pos + line.contextOf] ?? line.text));
    consumed = pos + sides.old.length;
    carriedOffset = pos - (hunk.oldStart - 1);
    if (carriedOffset !== 0 || placed.fuzz > 0) offsets.push({ path, hunk: index + 1, offset: carriedOffset, fuzz: placed.fuzz });
    if (sides.newNoFinalNewline) finalNewline = false;
    else if (sides.oldNoFinalNewline) finalNewline = true;
  }
  result.push(...file.slice(consumed));
  return { after: joinText({ lines: result, finalNewline }), offsets };
}

/**
 * Applies a patch in memory. `readFile` returns a repo-relative file's content, or null when
 * it does not exist. Each hunk is placed where its header says, else at the nearest offset
 * (up to `maxOffset`) where its lines match; with `fuzz` > 0, up to that many context lines may
 * differ (the lines a hunk removes must always match). Every hunk that moved or needed fuzz is
 * listed in `offsets`. CRLF files take LF patches and the reverse. Nothing is written: the
 * caller writes `files` (with {@link writePatchedFiles}, which refuses symlinks).
 */
export function applyPatch(readFile: (path: string) => string | null, patch: ParsedPatch | string, options: ApplyPatchOptions = {}): ApplyPatchResult {
  const parsed = typeof patch === 'string' ? parsePatch(patch) : patch;
  if (isPatchProblem(parsed)) return { ok: false, problem: parsed };
  const settings: Required<ApplyPatchOptions> = { fuzz: options.fuzz ?? 0, maxOffset: options.maxOffset ?? Number.MAX_SAFE_INTEGER };
  const files: PatchedFile[] = [];
  const offsets: HunkOffset[] = [];
  for (const filePatch of parsed.files) {
    const path = filePatch.newPath ?? filePatch.oldPath ?? '';
    if (filePatch.oldPath === null) {
      if (readFile(path) !== null) return { ok: false, problem: { kind: 'file-exists', path, message: `the patch creates ${path}, which already exists` } };
      const created = applyFile('', filePatch, path, settings);
      if ('kind' in created) return { ok: false, problem: created };
      files.push({ path, before: null, after: created.after });
      continue;
    }
    const before = readFile(filePatch.oldPath);
    if (before === null) return { ok: false, problem: { kind: 'missing-file', path: filePatch.oldPath, message: `the patch changes ${filePatch.oldPath}, which does not exist` } };
    if (filePatch.newPath !== null && filePatch.newPath !== filePatch.oldPath && readFile(filePatch.newPath) !== null) {
      return { ok: false, problem: { kind: 'file-exists', path: filePatch.newPath, message: `the patch renames ${filePatch.oldPath} to ${filePatch.newPath}, which already exists` } };
    }
    const applied = applyFile(before, filePatch, filePatch.oldPath, settings);
    if ('kind' in applied) return { ok: false, problem: applied };
    offsets.push(...applied.offsets);
    if (filePatch.newPath === null) {
      if (applied.after !== '') {
        return { ok: false, problem: { kind: 'does-not-apply', path, hunk: filePatch.hunks.length, expectedLine: 1, closest: null, message: `the patch deletes ${path} but its hunks do not cover the whole file` } };
      }
      files.push({ path, before, after: null });
    } else if (filePatch.newPath !== filePatch.oldPath) {
      files.push({ path: filePatch.oldPath, before, after: null }, { path: filePatch.newPath, before: null, after: applied.after });
    } else {
      files.push({ path, before, after: applied.after });
    }
  }
  return { ok: true, files, offsets };
}
