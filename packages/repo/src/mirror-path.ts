import { basename, join } from 'node:path';
import { sha256 } from '@envgen/core';

/** A path segment that cannot escape its parent: unsafe characters become `_`, dot-only names too. */
export function sanitizeSegment(segment: string): string {
  const safe = segment.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' || /^\.+$/.test(safe) ? '_' : safe;
}

/** Host and path segments of a git URL (`scheme://host/path`, `user@host:path`, or a plain path). */
export function splitGitUrl(url: string): { host: string; segments: string[] } {
  const scheme = /^[a-z+]+:\/\/([^/]*)(.*)$/.exec(url);
  const scp = /^[^@/]+@([^:/]+):(.*)$/.exec(url);
  const [host, path] = scheme ? [scheme[1] ?? '', scheme[2] ?? ''] : scp ? [scp[1] ?? '', scp[2] ?? ''] : ['', url];
  // Drop credentials and port punctuation from the host; `file://` URLs have no host.
  const cleanHost = host.replace(/^.*@/, '').replace(/:/g, '_') || 'file';
  return { host: cleanHost, segments: path.split('/').filter((part) => part !== '') };
}

/** `owner` and `name` for ids: the last two URL path segments (`.git` dropped). */
export function nameGitUrl(url: string): { owner: string; name: string } {
  const { host, segments } = splitGitUrl(url);
  const last = segments.at(-1)?.replace(/\.git$/, '') || host;
  const owner = segments.length >= 2 ? (segments.at(-2) ?? host) : host;
  return { owner: sanitizeSegment(owner), name: sanitizeSegment(last) };
}

/**
 * Where the bare mirror of `url` lives: `<home>/mirrors/git/<host>/<path…>-<hash8>.git`. Every
 * segment is sanitized (no `..`, no separators), and the hash of the full URL keeps URLs that
 * sanitize alike apart.
 */
export function mirrorPathForUrl(home: string, url: string): string {
  const { host, segments } = splitGitUrl(url);
  const parts = segments.map((segment) => sanitizeSegment(segment.replace(/\.git$/, '')));
  const last = parts.pop() ?? 'repo';
  return join(home, 'mirrors', 'git', sanitizeSegment(host), ...parts, `${last}-${sha256(url).slice(0, 8)}.git`);
}

/** Where the snapshot mirror of the plain local tree at `path` lives. */
export function mirrorPathForTree(home: string, path: string): string {
  return join(home, 'mirrors', 'local', `${sanitizeSegment(basename(path))}-${sha256(path).slice(0, 8)}.git`);
}
