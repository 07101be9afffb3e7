import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EnvgenError, isEnvgenError } from '@envgen/core';
import { runGit } from './git.js';
import type { ResolvedRepo, Worktree } from './types.js';

/** Options of {@link createWorktree}. */
export interface CreateWorktreeOptions {
  /** envgen's home directory; worktrees default to `<home>/worktrees/<random>`. */
  home: string;
  /** Where to put the checkout instead (must not exist or be empty). */
  dir?: string;
}

/**
 * Checks `repo.commit` out into a directory of its own, leaving the mirror untouched: a
 * `git clone --shared --no-checkout` borrows the mirror's objects through alternates (nothing is
 * written into the mirror, unlike `git worktree add`), then a detached checkout of the commit.
 * The checkout's `origin` remote is removed so nothing in it points back at the mirror's refs.
 */
export async function createWorktree(repo: ResolvedRepo, options: CreateWorktreeOptions): Promise<Worktree> {
  const path = options.dir ?? join(options.home, 'worktrees', `${repo.name}-${randomBytes(6).toString('hex')}`);
  await mkdir(dirname(path), { recursive: true });
  const hint = `Creating a worktree of ${repo.owner}/${repo.name} at ${repo.commit} from ${repo.mirror}; if the mirror is damaged, delete it to re-acquire.`;
  try {
    await runGit(['clone', '--quiet', '--shared', '--no-checkout', repo.mirror, path]);
    await runGit(['checkout', '--quiet', '--detach', repo.commit], { cwd: path });
    await runGit(['remote', 'remove', 'origin'], { cwd: path });
  } catch (error) {
    await rm(path, { recursive: true, force: true });
    if (isEnvgenError(error, 'repo-unavailable')) throw new EnvgenError('repo-unavailable', `${error.message}\n${hint}`, { cause: error });
    throw error;
  }
  return {
    path,
    commit: repo.commit,
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
