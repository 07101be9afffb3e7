import { silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { openGit, runGitTask } from './git.js';

/** Options of {@link collectHistoricalVersions}. */
export interface CollectHistoricalVersionsOptions {
  /** Repo-relative source files (forward slashes) whose past versions are wanted. */
  paths: string[];
  /** How many of the newest commits touching a file are looked at (default 10). */
  maxCommitsPerFile?: number;
  logger?: Logger;
}

/** One past version of a source file. */
export interface HistoricalVersion {
  /** The file's path today (the path asked for). */
  path: string;
  /** The commit the content is taken from. */
  commit: string;
  /** The whole file at that commit. */
  source: string;
}

const DEFAULT_MAX_COMMITS_PER_FILE = 10;

/** `git log --name-only` output with a NUL before each sha: the commits and the file's path at each. */
function parseFollowLog(output: string): { commit: string; path: string }[] {
  return output
    .split('\0')
    .map((record) => record.split('\n').filter((line) => line !== ''))
    .flatMap(([commit, path]) => (commit !== undefined && path !== undefined && /^[0-9a-f]{40}$/.test(commit) ? [{ commit, path }] : []));
}

/**
 * The distinct past contents of each of `paths`, newest first, from the last
 * `maxCommitsPerFile` commits up to `commit` that touched the file (following renames); contents
 * equal to the file at `commit`, commits where the file was deleted and repeats are left out.
 * `repoDir` is a checkout with history or a bare mirror; only read-only git commands run
 * (`log`, `cat-file`, with optional locks off), so nothing in it changes.
 * A file with no history (a single-commit snapshot, a file added at `commit`) yields nothing.
 */
export async function collectHistoricalVersions(repoDir: string, commit: string, options: CollectHistoricalVersionsOptions): Promise<HistoricalVersion[]> {
  const logger = options.logger ?? silentLogger;
  const limit = options.maxCommitsPerFile ?? DEFAULT_MAX_COMMITS_PER_FILE;
  const git = openGit({ cwd: repoDir, env: { GIT_OPTIONAL_LOCKS: '0' } });
  const readBlob = (sha: string, path: string): Promise<string | null> =>
    git.catFile(['blob', `${sha}:${path}`]).then(
      (text) => text,
      () => null,
    );
  const versions: HistoricalVersion[] = [];
  for (const path of options.paths) {
    const today = await readBlob(commit, path);
    if (today === null) continue;
    const log = await runGitTask('log', git.raw(['log', '--follow', '--format=%x00%H', '--name-only', '-n', String(limit), commit, '--', path]), `Reading the history of ${path} in ${repoDir}.`);
    const seen = new Set([today]);
    for (const entry of parseFollowLog(log)) {
      const source = await readBlob(entry.commit, entry.path);
      if (source === null || seen.has(source)) continue;
      seen.add(source);
      versions.push({ path, commit: entry.commit, source });
    }
    logger.debug('collected past versions', { path, versions: seen.size - 1 });
  }
  return versions;
}

/**
 * Whether `repoDir` (a checkout, worktree or bare mirror) holds only part of its history (a
 * `--depth` clone, or a mirror of one): past versions then come only from the commits it has.
 */
export async function isShallowRepository(repoDir: string): Promise<boolean> {
  const git = openGit({ cwd: repoDir, env: { GIT_OPTIONAL_LOCKS: '0' } });
  const answer = await runGitTask('rev-parse', git.raw(['rev-parse', '--is-shallow-repository']), `Asking git whether ${repoDir} is a shallow clone.`);
  return answer.trim() === 'true';
}
