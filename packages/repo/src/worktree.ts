import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EnvgenError, isEnvgenError } from '@envgen/core';
import { runGit } from './git.js';
import type { ResolvedRepo, Submodule, Worktree } from './types.js';

/** Options of {@link createWorktree}. */
export interface CreateWorktreeOptions {
  /** envgen's home directory; worktrees default to `<home>/worktrees/<random>`. */
  home: string;
  /** Where to put the checkout instead (must not exist or be empty). */
  dir?: string;
}

/**
 * Writes a submodule's files at its commit into its directory of the checkout at `path`, through
 * an index of its own outside both repos: the submodule's git directory is only read, and the
 * checkout's git sees its gitlink, as with a submodule it does not manage (no `.git` inside).
 */
async function checkoutSubmodule(path: string, submodule: Submodule): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-submodule-'));
  try {
    const target = join(path, submodule.path);
    await mkdir(target, { recursive: true });
    const options = { env: { GIT_INDEX_FILE: join(scratch, 'index') } };
    const git = ['--git-dir', submodule.mirror, '--work-tree', target];
    await runGit([...git, 'read-tree', submodule.commit], options);
    await runGit([...git, 'checkout-index', '--all', '--force'], options);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Checks `repo.commit` out into a directory of its own, leaving the mirror untouched: a
 * `git clone --shared --no-checkout` borrows the mirror's objects through alternates (nothing is
 * written into the mirror, unlike `git worktree add`), then a detached checkout of the commit.
 * The checkout's `origin` remote is removed so nothing in it points back at the mirror's refs.
 * The repo's submodules get their files (see {@link checkoutSubmodule}).
 */
export async function createWorktree(repo: ResolvedRepo, options: CreateWorktreeOptions): Promise<Worktree> {
  const path = options.dir ?? join(options.home, 'worktrees', `${repo.name}-${randomBytes(6).toString('hex')}`);
  await mkdir(dirname(path), { recursive: true });
  const hint = `Creating a worktree of ${repo.owner}/${repo.name} at ${repo.commit} from ${repo.mirror}; if the mirror is damaged, delete it to re-acquire.`;
  try {
    await runGit(['clone', '--quiet', '--shared', '--no-checkout', repo.mirror, path]);
    await runGit(['checkout', '--quiet', '--detach', repo.commit], { cwd: path });
    await runGit(['remote', 'remove', 'origin'], { cwd: path });
    for (const submodule of repo.submodules) await checkoutSubmodule(path, submodule);
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
