export { makePatch } from './make-patch.js';
export { formatPatch, quotePath, unquotePath } from './format-patch.js';
export { parsePatch, isPatchProblem } from './parse-patch.js';
export { applyPatch } from './apply-patch.js';
export { reversePatch, patchedPaths } from './reverse-patch.js';
export { checkRepoPath } from './repo-path.js';
export { findUnsafeTargets, writePatchedFiles } from './write-patched-files.js';
export type { UnsafeTarget } from './write-patched-files.js';
export type {
  ApplyPatchOptions,
  ApplyPatchResult,
  FilePatch,
  Hunk,
  HunkOffset,
  ParsedPatch,
  PatchProblem,
  PatchedFile,
  UnsafePathReason,
} from './types.js';
