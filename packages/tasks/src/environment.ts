import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvgenError } from '@envgen/core';
import type { InstanceEnvironment, Task } from '@envgen/core';
import { applyPatch, parsePatch, isPatchProblem } from '@envgen/patch';
import { SNAPSHOT_IDENTITY, runGit } from '@envgen/repo';
import type { Submodule } from '@envgen/repo';

/** A neutral message: the instance id names the strategy, which would hint at the bug. */
const COMMIT_MESSAGE = 'Initial commit\n';

/** Where an instance's buggy tree comes from. */
export interface BuildInstanceEnvironmentOptions {
  /** envgen's home; mirrors live in `<home>/envs`. */
  home: string;
  /** `owner/name`. */
  repo: string;
  /** The clean base commit. */
  commit: string;
  /** A git directory holding the base commit (the repo's mirror, a checkout's `.git`, or a local repo's working directory). */
  sourceGitDir: string;
  /** The base commit's fetched git submodules: their files are in the environment as plain files. */
  submodules: readonly Submodule[];
  instanceId: string;
  /** The bug diff, clean → buggy. */
  patch: string;
}

/** The bare mirror holding every instance commit of one repo: `<home>/envs/<owner>__<name>.git`. */
export function environmentMirrorPath(home: string, repo: string): string {
  return join(home, 'envs', `${repo.replace('/', '__')}.git`);
}

async function git(gitDir: string, args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<string> {
  return runGit(['--git-dir', gitDir, ...args], options);
}

/** How long a lock on the alternates file may stand before it counts as left by a killed process. */
const STALE_LOCK_MS = 30_000;
const LOCK_ATTEMPTS = 2_000;

/**
 * Creates the mirror if needed and makes the base commit's objects reachable from it through
 * `objects/info/alternates` (nothing is copied). The mirror itself is never handed to an agent:
 * {@link materializeInstance} fetches one ref from it, which transfers only that commit's objects.
 */
async function ensureMirror(mirror: string, sourceGitDir: string): Promise<void> {
  if (!existsSync(join(mirror, 'HEAD'))) {
    // Initialized aside and renamed into place: lanes that race here leave one mirror, not a
    // half-initialized one (two `git init`s in one directory fail on each other's config lock).
    await mkdir(join(mirror, '..'), { recursive: true });
    const fresh = await mkdtemp(`${mirror}.init-`);
    try {
      await runGit(['init', '--quiet', '--bare', '--template=', fresh]);
      await rename(fresh, mirror).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  }
  // -C, not --git-dir: a local repo's mirror is its working directory, whose git dir is inside it.
  const objects = (await runGit(['-C', sourceGitDir, 'rev-parse', '--path-format=absolute', '--git-path', 'objects'])).trim();
  const alternatesFile = join(mirror, 'objects', 'info', 'alternates');
  const listed = async (): Promise<string[]> => (existsSync(alternatesFile) ? (await readFile(alternatesFile, 'utf8')).split('\n').filter((line) => line !== '') : []);
  if ((await listed()).includes(objects)) return;
  await mkdir(join(mirror, 'objects', 'info'), { recursive: true });
  // Git's own lockfile protocol: whoever creates `alternates.lock` exclusively reads, writes
  // the new list into the lock and renames it over the file. Task lanes of one process and
  // other processes add their lines one at a time, so none is lost and no reader sees half a file.
  const lock = `${alternatesFile}.lock`;
  for (let attempt = 0; ; attempt += 1) {
    const handle = await open(lock, 'wx').catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
      // A lock left by a killed process: nothing else holds one for more than a moment.
      const age = Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) await rm(lock, { force: true });
      return null;
    });
    if (handle === null) {
      if (attempt >= LOCK_ATTEMPTS) throw new EnvgenError('store-corrupt', `${lock} stayed locked; if no envgen process is running, remove it and retry`);
      await sleep(10 + Math.min(attempt, 40) * 5);
      continue;
    }
    let renamed = false;
    try {
      const current = await listed();
      if (current.includes(objects)) return;
      await handle.writeFile(`${[...current, objects].join('\n')}\n`);
      await handle.close();
      await rename(lock, alternatesFile);
      renamed = true;
      return;
    } finally {
      await handle.close().catch(() => undefined);
      if (!renamed) await rm(lock, { force: true });
    }
  }
}

/**
 * Commits the instance's buggy tree into the repo's environment mirror as a parentless commit
 * under `refs/envgen/<instance_id>`: no history, no reflog, and no object of the fix is reachable
 * from it. Each fetched submodule's gitlink becomes its tree, so the agent's checkout has the
 * files the suite reads, as envgen's own checkouts do. Idempotent: the same bug always gives
 * the same commit.
 */
export async function buildInstanceEnvironment(options: BuildInstanceEnvironmentOptions): Promise<InstanceEnvironment> {
  const mirror = environmentMirrorPath(options.home, options.repo);
  await ensureMirror(mirror, options.sourceGitDir);
  for (const submodule of options.submodules) await ensureMirror(mirror, submodule.mirror);
  const parsed = parsePatch(options.patch);
  if (isPatchProblem(parsed)) throw new EnvgenError('store-corrupt', `the patch of ${options.instanceId} is malformed (${parsed.message}); re-run envgen inject for ${options.repo}`);
  const clean = new Map<string, string | null>();
  for (const file of parsed.files) {
    const path = file.oldPath ?? file.newPath ?? '';
    clean.set(path, file.oldPath === null ? null : await git(mirror, ['cat-file', 'blob', `${options.commit}:${path}`]));
  }
  const applied = applyPatch((path) => clean.get(path) ?? null, parsed);
  if (!applied.ok) {
    throw new EnvgenError('store-corrupt', `the patch of ${options.instanceId} does not apply to ${options.commit} (${applied.problem.message}); re-run envgen inject for ${options.repo}`);
  }
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-env-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    await git(mirror, ['read-tree', options.commit], { env });
    for (const submodule of options.submodules) {
      // Plumbing a bare repo runs (`--force-remove` and `read-tree --prefix` want a work tree):
      // mode 0 drops the gitlink, then the submodule's entries, `ls-tree` lines, go in under its path.
      const entries = (await git(mirror, ['ls-tree', '-r', '-z', '--full-tree', submodule.commit])).split('\0').filter((entry) => entry !== '');
      const lines = [`0 ${'0'.repeat(40)}\t${submodule.path}`, ...entries.map((entry) => entry.replace('\t', `\t${submodule.path}/`))];
      await git(mirror, ['update-index', '-z', '--index-info'], { env, input: lines.map((line) => `${line}\0`).join('') });
    }
    for (const file of applied.files) {
      if (file.after === null) {
        await git(mirror, ['update-index', '--force-remove', '--', file.path], { env });
        continue;
      }
      const blob = (await git(mirror, ['hash-object', '-w', '--stdin'], { input: file.after })).trim();
      const listed = (await git(mirror, ['ls-tree', options.commit, '--', file.path])).trim();
      const mode = listed === '' ? '100644' : (listed.split(' ')[0] ?? '100644');
      await git(mirror, ['update-index', '--add', '--cacheinfo', `${mode},${blob},${file.path}`], { env });
    }
    const tree = (await git(mirror, ['write-tree'], { env })).trim();
    // The snapshot identity and date: the same bug gets the same commit sha everywhere.
    const commit = (await git(mirror, ['commit-tree', tree], { input: COMMIT_MESSAGE, env: SNAPSHOT_IDENTITY })).trim();
    const ref = `refs/envgen/${options.instanceId}`;
    await git(mirror, ['update-ref', '--no-deref', ref, commit]);
    return { mirror, ref, commit };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What {@link materializeInstance} made. */
export interface MaterializedInstance {
  dir: string;
  commit: string;
}

/**
 * Checks an instance's buggy tree out into `dir` (absent or empty) for an agent: a fresh repo on
 * branch `main` with the one buggy commit, fetched by ref so only its objects arrive. No remote,
 * reflog, FETCH_HEAD or hook is left behind, so no git command in the checkout reaches the fix.
 */
export async function materializeInstance(task: Task, dir: string): Promise<MaterializedInstance> {
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new EnvgenError('usage', `${dir} is not empty; materialize into a new or empty directory`);
  }
  const { mirror, ref, commit } = task.environment;
  if (!existsSync(join(mirror, 'HEAD'))) {
    throw new EnvgenError('store-corrupt', `the environment mirror ${mirror} of ${task.instance_id} is gone; rebuild it with: envgen tasks --repo <repo> --rebuild`);
  }
  await mkdir(dir, { recursive: true });
  const quiet = ['-c', 'core.logAllRefUpdates=false'];
  await runGit(['init', '--quiet', '--template=', '--initial-branch=main', dir]);
  try {
    await runGit(['-C', dir, ...quiet, 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--update-head-ok', `file://${mirror}`, `+${ref}:refs/heads/main`]);
  } catch (error) {
    throw new EnvgenError('store-corrupt', `the environment of ${task.instance_id} (${ref} in ${mirror}) cannot be fetched; rebuild it with: envgen tasks --repo <repo> --rebuild`, {
      cause: error,
    });
  }
  await runGit(['-C', dir, ...quiet, 'reset', '--quiet', '--hard', 'refs/heads/main']);
  const head = (await runGit(['-C', dir, 'rev-parse', 'HEAD'])).trim();
  if (head !== commit) {
    throw new EnvgenError('store-corrupt', `${ref} in ${mirror} points at ${head}, not the task's ${commit}; rebuild it with: envgen tasks --repo <repo> --rebuild`);
  }
  for (const leftover of ['logs', 'FETCH_HEAD', 'ORIG_HEAD']) await rm(join(dir, '.git', leftover), { recursive: true, force: true });
  return { dir, commit };
}
