import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { EnvgenError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { acquireDebianSource } from './debian.js';
import type { DebianOptions } from './debian.js';
import { openGit, resolveCommit, runGit, runGitTask } from './git.js';
import { mirrorPathForTree, mirrorPathForUrl, nameGitUrl, sanitizeSegment } from './mirror-path.js';
import { snapshotTree } from './snapshot.js';
import { isRemoteGitUrl } from './spec.js';
import type { RepoSpec, ResolvedRepo, Submodule } from './types.js';

/** The default GitHub base URL; `ENVGEN_GITHUB_URL` (read by the config layer) replaces it. */
export const DEFAULT_GITHUB_BASE_URL = 'https://github.com';

/** Options of {@link acquireRepo}. */
export interface AcquireRepoOptions extends DebianOptions {
  /** envgen's home directory; mirrors live under `<home>/mirrors`. */
  home: string;
  /** Base URL `owner/name` specs are cloned from (default https://github.com). */
  githubBaseUrl?: string;
  logger?: Logger;
  /** Fetch from the remote even when the ref is already in the mirror (default: only when missing). */
  update?: boolean;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Clones `url` as a bare mirror at `mirror`, atomically (a half-done clone is never left in place). */
async function cloneMirror(url: string, mirror: string, hint: string): Promise<void> {
  await mkdir(dirname(mirror), { recursive: true });
  const partial = `${mirror}.partial-${process.pid}-${Date.now()}`;
  try {
    await runGitTask('clone --mirror', openGit().clone(url, partial, ['--quiet', '--mirror']), hint);
    await rename(partial, mirror).catch(async (error: unknown) => {
      // Another job finished the same clone first: keep theirs.
      if (!(await exists(mirror))) throw error;
    });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

/**
 * Makes sure the mirror of `url` holds `ref` (HEAD when null) and returns its commit. The remote
 * is contacted only to create the mirror, when the ref is missing, or when `update` is set, so a
 * pinned sha or tag in a warm cache needs no network.
 */
async function resolveFromMirror(url: string, mirror: string, ref: string | null, label: string, hint: string, options: AcquireRepoOptions): Promise<string> {
  const logger = options.logger ?? silentLogger;
  const target = ref ?? 'HEAD';
  const git = openGit({ gitDir: mirror });
  const fetchAll = (): Promise<unknown> => runGitTask('fetch', git.fetch(['--quiet', '--prune', 'origin']), hint);
  let fetched = false;
  if (!(await exists(mirror))) {
    logger.info('cloning mirror', { repo: label, mirror });
    await cloneMirror(url, mirror, hint);
    fetched = true;
  } else if (options.update) {
    logger.info('updating mirror', { repo: label, mirror });
    await fetchAll();
    fetched = true;
  }
  let commit = await resolveCommit(mirror, target);
  if (commit === null && !fetched) {
    logger.info('ref not in mirror, fetching', { repo: label, ref: target });
    await fetchAll();
    commit = await resolveCommit(mirror, target);
  }
  if (commit === null && ref !== null && /^[0-9a-f]{40}$/.test(ref)) {
    // A sha no branch or tag points at: servers that allow it hand it out directly.
    const direct = await git.fetch('origin', ref, ['--quiet']).then(
      () => true,
      () => false,
    );
    if (direct) commit = await resolveCommit(mirror, ref);
  }
  if (commit === null) {
    throw new EnvgenError('repo-unavailable', `${label} has no ref "${target}" (mirror ${mirror}). Check the branch, tag or sha; list them with: git ls-remote ${url}\n${hint}`);
  }
  return commit;
}

/** Where a submodule's URL points once github.com is read as the configured GitHub base. */
export function submoduleUrl(url: string, parentUrl: string, githubBaseUrl: string): string {
  if (url.startsWith('./') || url.startsWith('../')) {
    // Git's rule: relative to the superproject's own URL (`../x` is its sibling).
    const scheme = /^([a-z+]+:\/\/[^/]*)(.*)$/.exec(parentUrl);
    const [prefix, path] = scheme ? [scheme[1] ?? '', scheme[2] ?? ''] : ['', parentUrl];
    return `${prefix}${posix.join(path.replace(/\/+$/, ''), url)}`;
  }
  const github = /^(?:(?:https?|git|ssh):\/\/(?:[^@/]+@)?github\.com\/|git@github\.com:)([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(url);
  if (github) return `${githubBaseUrl.replace(/\/+$/, '')}/${github[1]}/${github[2]}.git`;
  return url;
}

/**
 * Why a submodule URL is not fetched, or null. A repo envgen fetched may name remotes only: a
 * local path (`/root/private`, `file:///home/...`) would copy files of this machine into its
 * checkouts and the environments agents get, unless it lies where the repo itself is served
 * from (two levels above the repo's own URL: `<base>/<owner>/<name>.git`, as a GitHub base of
 * `file://` serves its neighbours). A local repo, the user's own, may name any. Remote helpers
 * (`ext::`, `fd::`) run commands: never.
 */
export function submoduleUrlRefusal(declared: string, url: string, parentUrl: string, parentIsLocalRepo: boolean): string | null {
  if (declared.includes('::')) return 'a remote helper runs commands';
  if (parentIsLocalRepo || isRemoteGitUrl(url)) return null;
  const root = posix.dirname(posix.dirname(parentUrl.replace(/\/+$/, '')));
  return url.startsWith(`${root}/`) ? null : 'a path on this machine outside where the repo is served from';
}

/** The submodules `.gitmodules` declares at `commit` whose paths are gitlinks there, with their URLs as written. */
async function declaredSubmodules(gitDir: string, commit: string): Promise<Array<{ name: string; path: string; commit: string; url: string }>> {
  const hasFile = await runGit(['cat-file', '-e', `${commit}:.gitmodules`], { cwd: gitDir }).then(
    () => true,
    () => false,
  );
  if (!hasFile) return [];
  const listing = await runGit(['config', '--blob', `${commit}:.gitmodules`, '--null', '--list'], { cwd: gitDir }).catch(() => '');
  const declared = new Map<string, { path?: string; url?: string }>();
  for (const entry of listing.split('\0')) {
    const match = /^submodule\.(.+)\.(path|url)\n([^]*)$/.exec(entry);
    if (!match) continue;
    const [, name = '', key, value = ''] = match;
    declared.set(name, { ...declared.get(name), [key === 'path' ? 'path' : 'url']: value });
  }
  const submodules: Array<{ name: string; path: string; commit: string; url: string }> = [];
  for (const [name, { path, url }] of declared) {
    // A path git itself would refuse to check out (`..`, `.git`) never reaches the file system.
    const safe = path?.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && part.toLowerCase() !== '.git');
    if (path === undefined || url === undefined || !safe) continue;
    // The tree's own entry, read literally: only a gitlink is a submodule.
    const entry = (await runGit(['--literal-pathspecs', 'ls-tree', '-z', '--full-tree', commit, '--', path], { cwd: gitDir })).split('\0')[0] ?? '';
    const gitlink = /^160000 commit ([0-9a-f]{40})\t(.+)$/.exec(entry);
    if (gitlink && gitlink[2] === path) submodules.push({ name, path, commit: gitlink[1] ?? '', url });
  }
  return submodules;
}

/**
 * Fetches the git submodules of `commit` (one level, the gitlinks `.gitmodules` declares) into
 * mirrors of their own, so every checkout has their files: test data kept in another repository
 * (toml-test, html5lib-tests, css-parsing-tests) that the suite reads. URLs on github.com go to
 * the configured GitHub base, relative ones are resolved against `parentUrl` as git does; a local
 * repo's own initialized copy (`.git/modules/<name>`) is used first. One that cannot be fetched
 * or may not be (see {@link submoduleUrlRefusal}) is a note, not an error: the suite then runs
 * as in a checkout without it.
 */
async function fetchSubmodules(gitDir: string, commit: string, parentUrl: string, parentIsLocalRepo: boolean, options: AcquireRepoOptions): Promise<{ submodules: Submodule[]; notes: string[] }> {
  const submodules: Submodule[] = [];
  const notes: string[] = [];
  const base = options.githubBaseUrl ?? DEFAULT_GITHUB_BASE_URL;
  for (const declared of await declaredSubmodules(gitDir, commit)) {
    // Git refuses names with `..` (they would leave `.git/modules`); so does envgen.
    const own = declared.name.split(/[/\\]/).includes('..') ? null : join(gitDir, 'modules', declared.name);
    if (own !== null && (await exists(own)) && (await resolveCommit(own, declared.commit)) !== null) {
      submodules.push({ path: declared.path, commit: declared.commit, mirror: own });
      continue;
    }
    const url = submoduleUrl(declared.url, parentUrl, base);
    const refused = submoduleUrlRefusal(declared.url, url, parentUrl, parentIsLocalRepo);
    if (refused !== null) {
      notes.push(`its git submodule ${declared.path} (${declared.url}) is not fetched: ${refused}; its directory stays empty, and tests that read files from it fail or do not collect`);
      continue;
    }
    try {
      const hint = `Check that ${url} is reachable (github.com URLs are read from ENVGEN_GITHUB_URL, like the repo).`;
      const mirror = mirrorPathForUrl(options.home, url);
      await resolveFromMirror(url, mirror, declared.commit, url, hint, options);
      submodules.push({ path: declared.path, commit: declared.commit, mirror });
    } catch (error) {
      const why = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      notes.push(`its git submodule ${declared.path} (${url} at ${declared.commit.slice(0, 8)}) could not be fetched (${why}): its directory stays empty, and tests that read files from it fail or do not collect`);
    }
  }
  return { submodules, notes };
}

async function acquireLocal(spec: Extract<RepoSpec, { kind: 'local' }>, options: AcquireRepoOptions): Promise<ResolvedRepo> {
  const base = { spec, owner: 'local', name: sanitizeSegment(basename(spec.path)), aptPackages: [] };
  if (await exists(join(spec.path, '.git'))) {
    const gitDir = (await runGitTask('rev-parse', openGit({ cwd: spec.path }).revparse(['--absolute-git-dir']))).trim();
    const commit = await resolveCommit(gitDir, 'HEAD');
    if (commit === null) {
      throw new EnvgenError('repo-unavailable', `${spec.path} is a git repo without commits; commit the tree first (or remove .git to use it as a plain tree).`);
    }
    // GIT_OPTIONAL_LOCKS=0: `status` must not refresh (write) the user's index.
    const status = await runGitTask('status', openGit({ cwd: spec.path, env: { GIT_OPTIONAL_LOCKS: '0' } }).raw(['status', '--porcelain']));
    const changed = status.split('\n').filter((line) => line.trim() !== '').length;
    // Git resolves relative submodule URLs against the default remote, or the repo itself without one.
    const origin = (await runGit(['config', '--get', 'remote.origin.url'], { cwd: spec.path }).catch(() => '')).trim();
    const { submodules, notes: fetchNotes } = await fetchSubmodules(gitDir, commit, origin || spec.path, true, options);
    const notes = [...(changed ? [`${changed} uncommitted change(s) in ${spec.path} are ignored; using HEAD ${commit.slice(0, 8)}`] : []), ...fetchNotes];
    return { ...base, commit, mirror: spec.path, submodules, notes };
  }
  const mirror = mirrorPathForTree(options.home, spec.path);
  const commit = await snapshotTree(spec.path, mirror, { message: 'envgen snapshot of a plain tree', refs: ['refs/heads/main'] });
  return { ...base, commit, mirror, submodules: [], notes: [`${spec.path} is not a git repo root; snapshotted as commit ${commit.slice(0, 8)}`] };
}

/**
 * Brings a repo into the mirror cache under `<home>/mirrors` and pins it to a commit.
 * - `github`: `<base>/<owner>/<name>.git` mirrored (fetched only when the ref is missing).
 * - `git`: the URL mirrored the same way.
 * - `local`: a git repo is used in place and never modified (uncommitted changes are noted and
 *   ignored); a plain tree is snapshotted into a deterministic commit.
 * - `debian`: the upstream tarball of the source package, snapshotted (see {@link acquireDebianSource}).
 *
 * @throws EnvgenError `repo-unavailable` naming the repo and ref and what to check.
 */
export async function acquireRepo(spec: RepoSpec, options: AcquireRepoOptions): Promise<ResolvedRepo> {
  switch (spec.kind) {
    case 'github': {
      const base = (options.githubBaseUrl ?? DEFAULT_GITHUB_BASE_URL).replace(/\/+$/, '');
      const url = `${base}/${spec.owner}/${spec.name}.git`;
      const mirror = mirrorPathForUrl(options.home, url);
      const hint = `Check that ${spec.owner}/${spec.name} exists at the GitHub base URL ${base} (set ENVGEN_GITHUB_URL to use another host or mirror) and that the network is up.`;
      const commit = await resolveFromMirror(url, mirror, spec.ref, `${spec.owner}/${spec.name}`, hint, options);
      const { submodules, notes } = await fetchSubmodules(mirror, commit, url, false, options);
      return { spec, owner: spec.owner, name: spec.name, commit, mirror, aptPackages: [], submodules, notes };
    }
    case 'git': {
      const mirror = mirrorPathForUrl(options.home, spec.url);
      const hint = `Check the URL ${spec.url}, your access to it, and that the network is up.`;
      const commit = await resolveFromMirror(spec.url, mirror, spec.ref, spec.url, hint, options);
      const { submodules, notes } = await fetchSubmodules(mirror, commit, spec.url, false, options);
      return { spec, ...nameGitUrl(spec.url), commit, mirror, aptPackages: [], submodules, notes };
    }
    case 'local':
      return acquireLocal(spec, options);
    case 'debian':
      return acquireDebianSource(spec, options);
  }
}
