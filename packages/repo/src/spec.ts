import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { EnvgenError } from '@envgen/core';
import type { RepoSpec } from './types.js';

/** Options of {@link parseRepoSpec}. */
export interface ParseRepoSpecOptions {
  /** Directory relative local paths are resolved against (default: the process cwd). */
  cwd?: string;
}

const VALID_FORMS = [
  'owner/name or owner/name@ref          (GitHub, e.g. pytoolz/toolz@0.12.0)',
  'https://host/path/repo.git[@ref]      (any git URL; also http://, ssh://, git://, file://)',
  'https://host/path/repo#ref            (a #ref fragment works for every URL form)',
  'git@host:path/repo.git[@ref]          (scp-like ssh)',
  './dir, ../dir, /abs/dir or an existing directory name (a local git repo or plain tree)',
  'debian:SOURCE or debian:SOURCE=VERSION (a Debian source package, e.g. debian:toolz=0.12.0-1)',
];

const GITHUB_RE = /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+?)(?:\.git)?(?:@([^@]+))?$/;
const URL_SCHEME_RE = /^(?:https?|ssh|git|file|git\+ssh):\/\//;
const SCP_RE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)/;
const DEBIAN_SOURCE_RE = /^[a-z0-9][a-z0-9.+-]+$/;
const DEBIAN_VERSION_RE = /^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;

/** A git URL a server answers (`https://`, `ssh://`, `git://`, `user@host:path`): not a path or `file://` URL of this machine. */
export function isRemoteGitUrl(url: string): boolean {
  return (URL_SCHEME_RE.test(url) && !url.startsWith('file:')) || SCP_RE.test(url);
}

function invalid(raw: string, why: string): EnvgenError {
  return new EnvgenError(
    'repo-spec-invalid',
    `Cannot use "${raw}" as a repo: ${why}. Valid forms:\n${VALID_FORMS.map((form) => `  ${form}`).join('\n')}`,
  );
}

/** True when `ref` is a safe git ref or sha: no option-like or path-escaping shapes. */
export function isValidRef(ref: string): boolean {
  return (
    /^[A-Za-z0-9._/+-]+$/.test(ref) &&
    !ref.startsWith('-') &&
    !ref.startsWith('/') &&
    !ref.endsWith('/') &&
    !ref.endsWith('.lock') &&
    !ref.includes('..') &&
    !ref.includes('//')
  );
}

function checkedRef(raw: string, ref: string | undefined): string | null {
  if (ref === undefined) return null;
  if (!isValidRef(ref)) throw invalid(raw, `"${ref}" is not a valid git ref (branch, tag or commit sha)`);
  return ref;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Splits an optional ref off a git URL. A `#ref` fragment works everywhere; `@ref` only right
 * after a `.git` suffix (`https://host/x.git@v1`), because elsewhere `@` may belong to the URL
 * (`ssh://user@host/x`).
 */
function splitUrlRef(raw: string, url: string): { url: string; ref: string | null } {
  const hash = url.indexOf('#');
  if (hash >= 0) return { url: url.slice(0, hash), ref: checkedRef(raw, url.slice(hash + 1)) };
  const at = /^(.*\.git)@([^@/]+)$/.exec(url);
  if (at?.[1] !== undefined && at[2] !== undefined) return { url: at[1], ref: checkedRef(raw, at[2]) };
  return { url, ref: null };
}

/**
 * Parses a `--repo` value into a {@link RepoSpec}.
 *
 * Resolution order: `debian:` prefix; git URLs (`scheme://…`, `user@host:path`); explicit paths
 * (`/…`, `./…`, `../…`, `.`) and any existing directory (so a directory named like `owner/name`
 * wins over GitHub); `owner/name[@ref]`. A directory that ends in `.git` and has no `.git` inside
 * is a bare repo and becomes a `git` spec. Local paths are made absolute.
 *
 * @throws EnvgenError `repo-spec-invalid` listing the valid forms.
 */
export function parseRepoSpec(raw: string, options: ParseRepoSpecOptions = {}): RepoSpec {
  const text = raw.trim();
  if (text === '') throw invalid(raw, 'it is empty');

  if (text.startsWith('debian:')) {
    const body = text.slice('debian:'.length);
    const eq = body.indexOf('=');
    const source = eq >= 0 ? body.slice(0, eq) : body;
    const version = eq >= 0 ? body.slice(eq + 1) : null;
    if (!DEBIAN_SOURCE_RE.test(source)) throw invalid(raw, `"${source}" is not a Debian source package name (lowercase letters, digits, . + -)`);
    if (version !== null && !DEBIAN_VERSION_RE.test(version)) throw invalid(raw, `"${version}" is not a Debian version (e.g. 0.12.0-1)`);
    return { kind: 'debian', source, version, raw };
  }

  if (URL_SCHEME_RE.test(text) || SCP_RE.test(text)) {
    const { url, ref } = splitUrlRef(raw, text);
    if (/^[a-z+]+:\/\/\/?$/.test(url) || url.endsWith(':')) throw invalid(raw, 'the URL has no path');
    return { kind: 'git', url, ref, raw };
  }

  const looksLikePath = isAbsolute(text) || text === '.' || text === '..' || text.startsWith('./') || text.startsWith('../');
  const path = resolve(options.cwd ?? process.cwd(), text);
  if (isDirectory(path)) {
    if (path.endsWith('.git') && !isDirectory(resolve(path, '.git'))) return { kind: 'git', url: path, ref: null, raw };
    return { kind: 'local', path, raw };
  }
  if (looksLikePath) throw invalid(raw, `the directory ${path} does not exist`);

  const github = GITHUB_RE.exec(text);
  if (github?.[1] !== undefined && github[2] !== undefined && github[2] !== '.' && github[2] !== '..') {
    return { kind: 'github', owner: github[1], name: github[2], ref: checkedRef(raw, github[3]), raw };
  }
  throw invalid(raw, 'it matches none of the forms');
}
