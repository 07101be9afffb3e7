import type { FilePatch, Hunk, ParsedPatch } from './types.js';

const C_ESCAPES: Record<string, string> = { '\x07': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };

/**
 * A path as git writes it in headers: C-quoted when it holds quotes, backslashes, control
 * characters or non-ASCII (git's default core.quotePath), else as is.
 */
export function quotePath(path: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/["\\\x00-\x1f\x7f-\uffff]/.test(path)) return path;
  let quoted = '';
  for (const byte of Buffer.from(path, 'utf8')) {
    const char = String.fromCharCode(byte);
    const escape = C_ESCAPES[char];
    if (escape !== undefined) quoted += `\\${escape}`;
    else if (byte < 0x20 || byte >= 0x7f) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += char;
  }
  return `"${quoted}"`;
}

/** The inverse of {@link quotePath}: a C-quoted path is unescaped (octal escapes are UTF-8 bytes). */
export function unquotePath(text: string): string {
  if (!(text.length >= 2 && text.startsWith('"') && text.endsWith('"'))) return text;
  const inner = text.slice(1, -1);
  const bytes: number[] = [];
  const reverse = new Map(Object.entries(C_ESCAPES).map(([char, escape]) => [escape, char]));
  for (let i = 0; i < inner.length; i += 1) {
    const char = inner[i] ?? '';
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(inner.slice(i + 1));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
      continue;
    }
    const next = inner[i + 1] ?? '';
    bytes.push(...Buffer.from(reverse.get(next) ?? next, 'utf8'));
    i += 1;
  }
  return Buffer.from(bytes).toString('utf8');
}

function headerName(prefix: 'a/' | 'b/', path: string | null): string {
  if (path === null) return '/dev/null';
  const quoted = quotePath(`${prefix}${path}`);
  // git ends a name holding a space with a tab, so readers know where it stops.
  return path.includes(' ') && !quoted.startsWith('"') ? `${quoted}\t` : quoted;
}

function rangeOf(start: number, count: number): string {
  // `diff` stores an empty side's start one past git's "line before" convention.
  if (count === 0) return `${start - 1},0`;
  return count === 1 ? `${start}` : `${start},${count}`;
}

function formatHunk(hunk: Hunk): string[] {
  return [`@@ -${rangeOf(hunk.oldStart, hunk.oldLines)} +${rangeOf(hunk.newStart, hunk.newLines)} @@`, ...hunk.lines];
}

function formatFile(file: FilePatch): string[] {
  const oldPath = file.oldPath ?? file.newPath ?? '';
  const newPath = file.newPath ?? file.oldPath ?? '';
  const lines = [`diff --git ${quotePath(`a/${oldPath}`)} ${quotePath(`b/${newPath}`)}`];
  if (file.oldPath === null) lines.push('new file mode 100644');
  if (file.newPath === null) lines.push('deleted file mode 100644');
  if (file.oldPath !== null && file.newPath !== null && file.oldPath !== file.newPath) {
    lines.push(`rename from ${quotePath(file.oldPath)}`, `rename to ${quotePath(file.newPath)}`);
  }
  if (file.hunks.length > 0) {
    lines.push(`--- ${headerName('a/', file.oldPath)}`, `+++ ${headerName('b/', file.newPath)}`);
    for (const hunk of file.hunks) lines.push(...formatHunk(hunk));
  }
  return lines;
}

/** Writes a parsed patch back as git-style unified diff text (empty string for no files). */
export function formatPatch(patch: ParsedPatch): string {
  const lines = patch.files.flatMap(formatFile);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
