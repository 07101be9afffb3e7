import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { EnvgenError } from '@envgen/core';
import type { InstanceEnvironment, Task } from '@envgen/core';
import { applyPatch, parsePatch, isPatchProblem } from '@envgen/patch';
import { SNAPSHOT_IDENTITY, runGit, runGitBytes } from '@envgen/repo';
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

/** How long a lock on the alternates file may stand before it counts as left by a killed process. */
const STALE_LOCK_MS = 30_000;
const LOCK_ATTEMPTS = 2_000;

/** The object directory of each source git directory, asked of git once per process. */
const objectDirectories = new Map<string, Promise<string>>();

function objectsDirectory(sourceGitDir: string): Promise<string> {
  let objects = objectDirectories.get(sourceGitDir);
  if (objects === undefined) {
    // -C, not --git-dir: a local repo's mirror is its working directory, whose git dir is inside it.
    objects = runGit(['-C', sourceGitDir, 'rev-parse', '--path-format=absolute', '--git-path', 'objects']).then((out) => out.trim());
    objects.catch(() => objectDirectories.delete(sourceGitDir));
    objectDirectories.set(sourceGitDir, objects);
  }
  return objects;
}

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
  const objects = await objectsDirectory(sourceGitDir);
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

/** An object read by {@link readObjects}. */
interface GitObject {
  sha: string;
  type: string;
  data: Buffer;
}

/** Reads objects by name (`<commit>:<path>`, `<commit>^{tree}`) in one `git cat-file --batch`; null for a name that names none. */
async function readObjects(gitDir: string, names: readonly string[]): Promise<Array<GitObject | null>> {
  const odd = names.find((name) => /[\r\n]/.test(name));
  if (odd !== undefined) throw new EnvgenError('store-corrupt', `a path of the bug holds a line break (${JSON.stringify(odd)}); envgen cannot build an environment for it`);
  const out = await runGitBytes(['--git-dir', gitDir, 'cat-file', '--batch'], { input: names.map((name) => `${name}\n`).join('') });
  const objects: Array<GitObject | null> = [];
  let offset = 0;
  for (let index = 0; index < names.length; index += 1) {
    const end = out.indexOf(0x0a, offset);
    const header = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(out.subarray(offset, end).toString('utf8'));
    offset = end + 1;
    // `<name> missing` (or `ambiguous`): no contents follow.
    if (header === null) {
      objects.push(null);
      continue;
    }
    const size = Number(header[3]);
    objects.push({ sha: header[1] ?? '', type: header[2] ?? '', data: out.subarray(offset, offset + size) });
    offset += size + 1;
  }
  return objects;
}

/** The mode of `name` in a tree object's entries (`<mode> <name>\0<binary sha>`), or null. */
function entryMode(tree: Buffer, name: string, shaBytes: number): string | null {
  for (let offset = 0; offset < tree.length; ) {
    const space = tree.indexOf(0x20, offset);
    const nul = tree.indexOf(0, space);
    if (space < 0 || nul < 0) return null;
    if (tree.subarray(space + 1, nul).toString('utf8') === name) return tree.subarray(offset, space).toString('ascii').padStart(6, '0');
    offset = nul + 1 + shaBytes;
  }
  return null;
}

/** A path as fast-import reads it: C-style quoted, so spaces and quotes need no care. */
function quotePath(path: string): string {
  return `"${path.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

/** `data` of fast-import: the exact byte count, then the bytes. */
function dataCommand(text: string): string {
  return `data ${Buffer.byteLength(text, 'utf8')}\n${text}\n`;
}

/**
 * Commits the instance's buggy tree into the repo's environment mirror as a parentless commit
 * under `refs/envgen/<instance_id>`: no history, no reflog, and no object of the fix is reachable
 * from it. Each fetched submodule's gitlink becomes its tree, so the agent's checkout has the
 * files the suite reads, as envgen's own checkouts do. Idempotent: the same bug always gives
 * the same commit. Two git processes per instance: one `cat-file --batch` reads the base tree,
 * the clean files and their modes, one `fast-import` writes the commit and its ref (before,
 * a dozen plumbing commands, each a fork of envgen's large process: 2.9 of the 5.0 s of
 * json-patch's 39 tasks went to starting them).
 */
export async function buildInstanceEnvironment(options: BuildInstanceEnvironmentOptions): Promise<InstanceEnvironment> {
  const mirror = environmentMirrorPath(options.home, options.repo);
  await ensureMirror(mirror, options.sourceGitDir);
  for (const submodule of options.submodules) await ensureMirror(mirror, submodule.mirror);
  const parsed = parsePatch(options.patch);
  if (isPatchProblem(parsed)) throw new EnvgenError('store-corrupt', `the patch of ${options.instanceId} is malformed (${parsed.message}); re-run envgen inject for ${options.repo}`);
  const paths = parsed.files.map((file) => file.oldPath ?? file.newPath ?? '');
  const directory = (path: string): string => (path.includes('/') ? `${options.commit}:${path.slice(0, path.lastIndexOf('/'))}` : `${options.commit}^{tree}`);
  const names = [
    `${options.commit}^{tree}`,
    ...options.submodules.map((submodule) => `${submodule.commit}^{tree}`),
    ...paths.map((path) => `${options.commit}:${path}`),
    ...new Set(parsed.files.map((file) => directory(file.newPath ?? file.oldPath ?? ''))),
  ];
  const objects = new Map(names.map((name, index) => [name, index]));
  const read = await readObjects(mirror, names);
  const object = (name: string): GitObject | null => read[objects.get(name) ?? -1] ?? null;
  const base = object(`${options.commit}^{tree}`);
  if (base === null) throw new EnvgenError('store-corrupt', `${options.commit} of ${options.repo} is not in ${options.sourceGitDir}; re-run envgen inject for ${options.repo}`);
  const clean = new Map<string, string | null>();
  for (const file of parsed.files) {
    const path = file.oldPath ?? file.newPath ?? '';
    const blob = file.oldPath === null ? null : object(`${options.commit}:${path}`);
    if (file.oldPath !== null && blob?.type !== 'blob') throw new EnvgenError('store-corrupt', `${path} is not a file at ${options.commit} of ${options.repo}; re-run envgen inject for ${options.repo}`);
    clean.set(path, blob === null ? null : blob.data.toString('utf8'));
  }
  const applied = applyPatch((path) => clean.get(path) ?? null, parsed);
  if (!applied.ok) {
    throw new EnvgenError('store-corrupt', `the patch of ${options.instanceId} does not apply to ${options.commit} (${applied.problem.message}); re-run envgen inject for ${options.repo}`);
  }
  const submoduleTrees = options.submodules.map((submodule) => {
    const tree = object(`${submodule.commit}^{tree}`);
    if (tree === null) throw new EnvgenError('store-corrupt', `submodule ${submodule.path} at ${submodule.commit} is not in ${submodule.mirror}; re-run envgen inject for ${options.repo}`);
    // Mode 040000 over a gitlink puts the submodule's tree in its place.
    return `M 040000 ${tree.sha} ${quotePath(submodule.path)}\n`;
  });
  const shaBytes = base.sha.length / 2;
  const identity = (who: 'AUTHOR' | 'COMMITTER'): string => `${SNAPSHOT_IDENTITY[`GIT_${who}_NAME`]} <${SNAPSHOT_IDENTITY[`GIT_${who}_EMAIL`]}> ${SNAPSHOT_IDENTITY[`GIT_${who}_DATE`]}`;
  const ref = `refs/envgen/${options.instanceId}`;
  const commands = [
    `commit ${ref}\nmark :1\nauthor ${identity('AUTHOR')}\ncommitter ${identity('COMMITTER')}\n${dataCommand(COMMIT_MESSAGE)}`,
    `M 040000 ${base.sha} ""\n`,
    ...submoduleTrees,
  ];
  for (const file of applied.files) {
    if (file.after === null) {
      commands.push(`D ${quotePath(file.path)}\n`);
      continue;
    }
    const parent = object(directory(file.path));
    const mode = parent === null ? null : entryMode(parent.data, file.path.split('/').at(-1) ?? '', shaBytes);
    commands.push(`M ${mode ?? '100644'} inline ${quotePath(file.path)}\n${dataCommand(file.after)}`);
  }
  // The same bug always gives the same commit: a parentless one with the snapshot identity and date.
  commands.push('\nget-mark :1\ndone\n');
  const commit = (await runGit(['--git-dir', mirror, 'fast-import', '--quiet', '--force', '--done', '--date-format=raw'], { input: commands.join('') })).trim();
  return { mirror, ref, commit };
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
