/** One hunk, as `diff`'s parsePatch returns it (lines keep their `+`/`-`/` `/`\` prefix). */
export interface Hunk {
  /** 1-based first old line; for an empty old side, the line before which new lines go (`diff`'s convention). */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** The changes of one file. `oldPath` null: the patch creates it; `newPath` null: it deletes it. */
export interface FilePatch {
  /** Repo-relative path before the patch (prefix `a/` stripped), or null for a created file. */
  oldPath: string | null;
  /** Repo-relative path after the patch (prefix `b/` stripped), or null for a deleted file. */
  newPath: string | null;
  hunks: Hunk[];
}

/** A validated multi-file patch: every path is repo-relative and safe, every hunk well-formed. */
export interface ParsedPatch {
  files: FilePatch[];
}

/** Why a path may not be written by a patch. */
export type UnsafePathReason = 'empty' | 'absolute' | 'parent-segment' | 'not-normalized' | 'nul-byte' | 'git-dir';

/** A problem with a patch or applying it. Expected outcomes, so data: `kind` says what, the rest is evidence. */
export type PatchProblem =
  | { kind: 'malformed'; message: string; line?: number; text?: string }
  | { kind: 'unsafe-path'; message: string; path: string; reason: UnsafePathReason }
  | { kind: 'binary'; message: string; path: string }
  | { kind: 'unsupported'; message: string; path: string }
  | { kind: 'duplicate-path'; message: string; path: string }
  | { kind: 'missing-file'; message: string; path: string }
  | { kind: 'file-exists'; message: string; path: string }
  | {
      kind: 'does-not-apply';
      message: string;
      path: string;
      /** 1-based hunk index within the file. */
      hunk: number;
      /** 1-based line where the hunk header says it starts (after earlier hunks' offsets). */
      expectedLine: number;
      /** The position with the fewest mismatched lines, when one exists. */
      closest: { line: number; mismatches: Array<{ line: number; expected: string; found: string | null }> } | null;
    };

/** A file's content before and after a patch; null = absent. */
export interface PatchedFile {
  path: string;
  before: string | null;
  after: string | null;
}

/** A hunk that did not apply exactly where its header said, or only with fuzz. */
export interface HunkOffset {
  path: string;
  /** 1-based hunk index within the file. */
  hunk: number;
  /** Lines between where the header said and where it applied (positive: later in the file). */
  offset: number;
  /** Context lines that did not match. */
  fuzz: number;
}

/** Options of {@link applyPatch}. */
export interface ApplyPatchOptions {
  /** Context lines per hunk allowed to mismatch (lines the hunk removes must always match). Default 0. */
  fuzz?: number;
  /** Largest line offset searched for a hunk. Default: the whole file. */
  maxOffset?: number;
}

/** The outcome of {@link applyPatch}. */
export type ApplyPatchResult =
  | { ok: true; files: PatchedFile[]; offsets: HunkOffset[] }
  | { ok: false; problem: PatchProblem };
