import type { UnsafePathReason } from './types.js';

/** Why a repo-relative path is unsafe, in words, or null when it stays inside the repo. */
export function checkRepoPath(path: string): { reason: UnsafePathReason; message: string } | null {
  if (path === '') return { reason: 'empty', message: 'the path is empty' };
  if (path.includes('\0')) return { reason: 'nul-byte', message: `the path ${JSON.stringify(path)} contains a NUL byte` };
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) {
    return { reason: 'absolute', message: `the path ${JSON.stringify(path)} is absolute; diff paths are repo-relative` };
  }
  const segments = path.split(/[\\/]/);
  if (segments.includes('..')) {
    return { reason: 'parent-segment', message: `the path ${JSON.stringify(path)} has a ".." segment and may leave the repo` };
  }
  if (segments.some((segment) => segment.toLowerCase() === '.git')) {
    return { reason: 'git-dir', message: `the path ${JSON.stringify(path)} reaches into .git` };
  }
  if (segments.some((segment) => segment === '' || segment === '.') || path.includes('\\')) {
    return { reason: 'not-normalized', message: `the path ${JSON.stringify(path)} is not a normalized forward-slash path` };
  }
  return null;
}
