import { lstat, mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvgenError } from '@envgen/core';
import { openGit, runGitTask, runGit } from './git.js';

/** Fixed identity and date of snapshot commits, so the same tree always gives the same sha. */
export const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'envgen',
  GIT_AUTHOR_EMAIL: 'envgen@localhost',
  GIT_AUTHOR_DATE: '946684800 +0000',
  GIT_COMMITTER_NAME: 'envgen',
  GIT_COMMITTER_EMAIL: 'envgen@localhost',
  GIT_COMMITTER_DATE: '946684800 +0000',
} as const;

interface TreeEntry {
  /** Repo-relative, `/`-separated. */
  path: string;
  mode: '100644' | '100755' | '120000';
  /** Absolute path on disk (files) or the link target (symlinks). */
  source: string;
}

async function listTree(root: string, prefix = ''): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  const names = (await readdir(join(root, prefix))).sort();
  for (const name of names) {
    if (name === '.git') continue;
    const rel = prefix ? `${prefix}/${name}` : name;
    if (rel.includes('\n')) throw new EnvgenError('repo-unavailable', `Cannot snapshot ${root}: the path ${JSON.stringify(rel)} contains a newline; rename it.`);
    const abs = join(root, rel);
    const info = await lstat(abs);
    if (info.isSymbolicLink()) entries.push({ path: rel, mode: '120000', source: await readlink(abs) });
    else if (info.isDirectory()) entries.push(...(await listTree(root, rel)));
    else if (info.isFile()) entries.push({ path: rel, mode: (info.mode & 0o111) !== 0 ? '100755' : '100644', source: abs });
  }
  return entries;
}

/** Creates the bare repo `gitDir` (HEAD → refs/heads/main) unless it exists. */
export async function ensureBareRepo(gitDir: string): Promise<void> {
  const probe = await openGit({ gitDir })
    .revparse(['--git-dir'])
    .then(
      () => true,
      () => false,
    );
  if (probe) return;
  await mkdir(gitDir, { recursive: true });
  const git = openGit({ cwd: gitDir });
  await runGitTask('init --bare', git.init(true, ['--quiet']));
  await runGitTask('symbolic-ref', git.raw(['symbolic-ref', 'HEAD', 'refs/heads/main']));
}

/**
 * Stores the directory `treeDir` as one commit in the bare repo `gitDir` and points `refs` at it
 * (plus `refs/snapshots/<sha>`, which keeps every snapshot reachable so gc never drops one a
 * worktree still borrows objects from).
 * Everything is stored except `.git` entries (no ignore rules apply); symlinks stay symlinks; the
 * author, committer and date are fixed, so the same tree and message give the same sha.
 * Returns the commit sha.
 */
export async function snapshotTree(treeDir: string, gitDir: string, options: { message: string; refs: string[] }): Promise<string> {
  await ensureBareRepo(gitDir);
  const entries = await listTree(treeDir);
  // Objects and index records go in on stdin, which simple-git cannot feed: envgen's own runner
  // does those two steps, simple-git the rest.
  const files = entries.filter((entry) => entry.mode !== '120000');
  const fileShas = files.length
    ? (await runGit(['--git-dir', gitDir, 'hash-object', '-w', '--no-filters', '--stdin-paths'], { input: files.map((file) => file.source).join('\n') + '\n' }))
        .trim()
        .split('\n')
    : [];
  const shaOf = new Map<TreeEntry, string>();
  files.forEach((file, index) => shaOf.set(file, fileShas[index] ?? ''));
  for (const link of entries.filter((entry) => entry.mode === '120000')) {
    shaOf.set(link, (await runGit(['--git-dir', gitDir, 'hash-object', '-w', '--stdin'], { input: link.source })).trim());
  }

  const scratch = await mkdtemp(join(tmpdir(), 'envgen-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    const records = entries.map((entry) => `${entry.mode} ${shaOf.get(entry) ?? ''}\t${entry.path}\0`).join('');
    await runGit(['--git-dir', gitDir, 'update-index', '-z', '--add', '--index-info'], { env, input: records });
    const git = openGit({ gitDir, env: { ...env, ...SNAPSHOT_IDENTITY } });
    const tree = (await runGitTask('write-tree', git.raw(['write-tree']))).trim();
    const commit = (await runGitTask('commit-tree', git.raw(['commit-tree', tree, '-m', options.message]))).trim();
    for (const ref of [...options.refs, `refs/snapshots/${commit}`]) await runGitTask('update-ref', git.raw(['update-ref', ref, commit]));
    return commit;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
