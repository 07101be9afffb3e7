import { parsePatch as parseUnifiedDiff } from 'diff';
import type { StructuredPatch } from 'diff';
import { describeError } from '@envgen/core';
import { unquotePath } from './format-patch.js';
import { checkRepoPath } from './repo-path.js';
import type { FilePatch, Hunk, ParsedPatch, PatchProblem } from './types.js';

const DEV_NULL = '/dev/null';
const GIT_HEADER = 'diff --git ';
/** git's mode of a symlink and of a submodule: neither is a file a patch may write. */
const NON_FILE_MODES = new Set(['120000', '160000']);

/** Extended header lines of one `diff --git` section. */
interface GitHeader {
  diffLine: string;
  renameFrom?: string;
  renameTo?: string;
  created: boolean;
  deleted: boolean;
  binary: boolean;
  copy: boolean;
  nonFileMode: string | null;
}

function isProblem(value: unknown): value is PatchProblem {
  return typeof value === 'object' && value !== null && 'kind' in value && 'message' in value;
}

function malformed(message: string, line?: number, text?: string): PatchProblem {
  return { kind: 'malformed', message, ...(line === undefined ? {} : { line }), ...(text === undefined ? {} : { text: text.slice(0, 200) }) };
}

/** `a/x b/x` of a `diff --git` line, for sections without ---/+++ (empty new files, pure renames). */
function pathsOfGitLine(diffLine: string): { oldName: string; newName: string } | null {
  const rest = diffLine.slice(GIT_HEADER.length);
  const quoted = /^("(?:[^"\\]|\\.)*")\s+("(?:[^"\\]|\\.)*")$/.exec(rest);
  if (quoted?.[1] !== undefined && quoted[2] !== undefined) return { oldName: unquotePath(quoted[1]), newName: unquotePath(quoted[2]) };
  // Unquoted names may hold spaces: git's own rule is that both names are the same path.
  if ((rest.length - 5) % 2 !== 0) return null;
  const half = (rest.length - 5) / 2;
  const oldName = rest.slice(0, half + 2);
  const newName = rest.slice(half + 3);
  return rest[half + 2] === ' ' && oldName.slice(2) === newName.slice(2) ? { oldName, newName } : null;
}

function readGitHeader(lines: string[], startLine: number): { header: GitHeader; bodyStart: number } | PatchProblem {
  const header: GitHeader = { diffLine: lines[0] ?? '', created: false, deleted: false, binary: false, copy: false, nonFileMode: null };
  let i = 1;
  for (; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (line.startsWith('--- ') || line.startsWith('@@')) break;
    const mode = /^(?:new file mode|deleted file mode|new mode|old mode) (\d+)$/.exec(line);
    if (mode?.[1] !== undefined) {
      if (line.startsWith('new file')) header.created = true;
      if (line.startsWith('deleted file')) header.deleted = true;
      if (NON_FILE_MODES.has(mode[1]) && !line.startsWith('old mode') && !line.startsWith('deleted')) header.nonFileMode = mode[1];
    } else if (line.startsWith('rename from ')) header.renameFrom = unquotePath(line.slice('rename from '.length));
    else if (line.startsWith('rename to ')) header.renameTo = unquotePath(line.slice('rename to '.length));
    else if (line.startsWith('copy from ') || line.startsWith('copy to ')) header.copy = true;
    else if (line.startsWith('Binary files ') || line === 'GIT binary patch') header.binary = true;
    else if (/^(?:similarity index|dissimilarity index|index) /.test(line) || line === '') continue;
    else return malformed(`unexpected line in the header of a diff --git section`, startLine + i, line);
  }
  return { header, bodyStart: i };
}

/** A header file name without its a/ or b/ prefix, or null for /dev/null. */
function stripPrefix(name: string | undefined, prefix: 'a/' | 'b/', strip: boolean): string | null {
  if (name === undefined || name === DEV_NULL) return null;
  return strip && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

function shouldStrip(oldName: string | undefined, newName: string | undefined): boolean {
  const oldOk = oldName === undefined || oldName === DEV_NULL || oldName.startsWith('a/');
  const newOk = newName === undefined || newName === DEV_NULL || newName.startsWith('b/');
  return oldOk && newOk && !(oldName === DEV_NULL && newName === DEV_NULL);
}

function parseStructured(text: string, startLine: number): StructuredPatch[] | PatchProblem {
  try {
    return parseUnifiedDiff(text);
  } catch (error) {
    return malformed(`${describeError(error)} (in the diff starting at line ${startLine})`, startLine);
  }
}

function checkHunks(path: string, hunks: Hunk[], created: boolean, deleted: boolean): PatchProblem | null {
  let previousEnd = 0;
  for (const [index, hunk] of hunks.entries()) {
    const where = `hunk ${index + 1} of ${path}`;
    if (![hunk.oldStart, hunk.oldLines, hunk.newStart, hunk.newLines].every((n) => Number.isSafeInteger(n) && n >= 0)) {
      return malformed(`${where} has a malformed @@ header`);
    }
    if (hunk.lines.some((line) => line.startsWith('\\') && !line.startsWith('\\ '))) return malformed(`${where} has a malformed "\\" line`);
    if (hunk.oldStart < previousEnd) return malformed(`${where} starts at line ${hunk.oldStart}, inside or before the previous hunk`);
    previousEnd = hunk.oldStart + hunk.oldLines;
    if (created && hunk.oldLines !== 0) return malformed(`${where} creates the file but has old lines`);
    if (deleted && hunk.newLines !== 0) return malformed(`${where} deletes the file but has new lines`);
  }
  return null;
}

function buildFilePatch(
  oldName: string | undefined,
  newName: string | undefined,
  hunks: Hunk[],
  where: string,
): FilePatch | PatchProblem {
  const strip = shouldStrip(oldName, newName);
  const oldPath = stripPrefix(oldName, 'a/', strip);
  const newPath = stripPrefix(newName, 'b/', strip);
  if (oldPath === null && newPath === null) return malformed(`${where} names no file (both sides are /dev/null or missing)`);
  for (const path of [oldPath, newPath]) {
    if (path === null) continue;
    const unsafe = checkRepoPath(path);
    if (unsafe) return { kind: 'unsafe-path', path, reason: unsafe.reason, message: `${where}: ${unsafe.message}` };
  }
  const label = newPath ?? oldPath ?? '';
  const hunkProblem = checkHunks(label, hunks, oldPath === null, newPath === null);
  return hunkProblem ?? { oldPath, newPath, hunks };
}

function toHunks(patch: StructuredPatch): Hunk[] {
  return patch.hunks.map((hunk) => ({ ...hunk, lines: [...hunk.lines] }));
}

function parseGitSection(lines: string[], startLine: number): FilePatch | PatchProblem {
  const read = readGitHeader(lines, startLine);
  if (isProblem(read)) return read;
  const { header, bodyStart } = read;
  const fromLine = pathsOfGitLine(header.diffLine);
  const label = header.renameTo ?? fromLine?.newName ?? header.diffLine;
  if (header.binary) return { kind: 'binary', path: label, message: `the diff of ${label} is binary; only text diffs can be applied` };
  if (header.copy) return { kind: 'unsupported', path: label, message: `the diff copies a file to ${label}; copies are not supported` };
  if (header.nonFileMode !== null) {
    return { kind: 'unsupported', path: label, message: `the diff gives ${label} mode ${header.nonFileMode} (a symlink or submodule); only regular files can be patched` };
  }
  const body = lines.slice(bodyStart).join('\n');
  const parsed = body.trim() === '' ? [] : parseStructured(body, startLine + bodyStart);
  if (isProblem(parsed)) return parsed;
  if (parsed.length > 1) return malformed(`the diff --git section at line ${startLine} holds more than one file`, startLine);
  const structured = parsed[0];
  const where = `the diff at line ${startLine}`;
  if (structured?.oldFileName !== undefined || structured?.newFileName !== undefined) {
    return buildFilePatch(structured.oldFileName, structured.newFileName, toHunks(structured), where);
  }
  if (structured !== undefined && structured.hunks.length > 0) return malformed(`${where} has hunks but no ---/+++ file names`, startLine);
  if (header.renameFrom !== undefined && header.renameTo !== undefined) {
    return buildFilePatch(`a/${header.renameFrom}`, `b/${header.renameTo}`, [], where);
  }
  if (fromLine === null) return malformed(`cannot read the file names of "${header.diffLine}"`, startLine, header.diffLine);
  return buildFilePatch(header.created ? DEV_NULL : fromLine.oldName, header.deleted ? DEV_NULL : fromLine.newName, [], where);
}

function parsePlain(text: string, startLine: number): FilePatch[] | PatchProblem {
  const parsed = parseStructured(text, startLine);
  if (isProblem(parsed)) return parsed;
  const files: FilePatch[] = [];
  for (const structured of parsed) {
    if (structured.oldFileName === undefined && structured.newFileName === undefined) {
      if (structured.hunks.length > 0) return malformed('the diff has hunks but no ---/+++ file names');
      continue;
    }
    const file = buildFilePatch(structured.oldFileName, structured.newFileName, toHunks(structured), `the diff of ${structured.newFileName ?? structured.oldFileName ?? '?'}`);
    if (isProblem(file)) return file;
    files.push(file);
  }
  if (files.length === 0 && text.trim() !== '') {
    const first = text.split('\n').find((line) => line.trim() !== '') ?? '';
    return malformed('the text is not a unified diff: no ---/+++ file headers found', undefined, first);
  }
  return files;
}

/**
 * Parses unified diff text (git style or plain `---`/`+++`) with `diff`'s parser and checks it:
 * a/ and b/ prefixes are stripped, and a malformed hunk, an absolute path, a `..` segment, a NUL
 * byte, a path into `.git/`, a binary diff, a symlink or submodule mode, a copy, a rename out of
 * the repo, or one file patched twice is returned as a {@link PatchProblem} with its evidence.
 * Text before the first file header (a commit message) is ignored; text with no file header at
 * all is malformed. The empty string is the empty patch.
 */
export function parsePatch(text: string): ParsedPatch | PatchProblem {
  if (text.includes('\0')) {
    const line = text.slice(0, text.indexOf('\0')).split('\n').length;
    return malformed('the patch contains NUL bytes: binary data is not a unified diff', line);
  }
  const lines = text.split('\n');
  const starts = lines.flatMap((line, index) => (line.startsWith(GIT_HEADER) ? [index] : []));
  let files: FilePatch[] = [];
  if (starts.length === 0) {
    const plain = parsePlain(text, 1);
    if (isProblem(plain)) return plain;
    files = plain;
  } else {
    const preamble = lines.slice(0, starts[0]);
    if (preamble.some((line) => line.startsWith('@@') || line.startsWith('--- '))) {
      return malformed('the patch mixes plain and git-style file headers; use one style', 1);
    }
    for (const [n, start] of starts.entries()) {
      const file = parseGitSection(lines.slice(start, starts[n + 1] ?? lines.length), start + 1);
      if (isProblem(file)) return file;
      files.push(file);
    }
  }
  const seen = new Set<string>();
  for (const file of files) {
    for (const path of new Set([file.oldPath, file.newPath])) {
      if (path === null) continue;
      if (seen.has(path)) return { kind: 'duplicate-path', path, message: `the patch changes ${path} more than once; merge its hunks into one file diff` };
      seen.add(path);
    }
  }
  return { files };
}

/** True when {@link parsePatch} (or {@link applyPatch}) returned a problem rather than a patch. */
export function isPatchProblem(value: ParsedPatch | PatchProblem): value is PatchProblem {
  return isProblem(value);
}
