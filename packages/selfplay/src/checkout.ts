import { cp, lstat, mkdir, readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { applyPatch, isPatchProblem, makePatch, parsePatch, patchedPaths, writePatchedFiles } from '@envgen/patch';
import type { PatchedFile } from '@envgen/patch';
import { SNAPSHOT_IDENTITY, runGit } from '@envgen/repo';

/** A checkout handed to an agent, with the tree it started from (to diff against at the end). */
export interface AgentCheckout {
  dir: string;
  /** Every regular file at the start, by repo-relative path. */
  initial: Map<string, Buffer>;
}

/** Directories and files an agent's runs leave behind that are never part of a patch. */
const SKIPPED_DIRS = new Set(['.git', '__pycache__', '.pytest_cache', '.mypy_cache', '.tox', '.hypothesis']);
const MAX_DIFFED_BYTES = 1024 ** 2;

function skipped(name: string, directory: boolean): boolean {
  if (directory) return SKIPPED_DIRS.has(name) || name.endsWith('.egg-info');
  return name.endsWith('.pyc');
}

/** Regular files under `root` (symlinks, FIFOs and the like are listed apart, never followed or read). */
async function walkTree(root: string): Promise<{ files: string[]; other: string[] }> {
  const files: string[] = [];
  const other: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(join(root, relative), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skipped(entry.name, true)) await walk(path);
      } else if (entry.isFile()) {
        if (!skipped(entry.name, false)) files.push(path);
      } else {
        other.push(path);
      }
    }
  };
  await walk('');
  return { files, other };
}

/** Reads every regular file of a tree (see {@link walkTree}). */
export async function snapshotFiles(root: string): Promise<Map<string, Buffer>> {
  const snapshot = new Map<string, Buffer>();
  for (const path of (await walkTree(root)).files) snapshot.set(path, await readFile(join(root, path)));
  return snapshot;
}

/** Options of {@link prepareCheckout}. */
export interface PrepareCheckoutOptions {
  /** Clean tree at the base commit; only read. */
  worktree: string;
  /** New directory of the checkout. */
  dir: string;
  /** Diffs applied in order over the clean tree (e.g. the bug, then the weakening). */
  diffs: readonly string[];
}

/**
 * A checkout with no history: the clean tree (its .git left out) with `diffs` applied, committed
 * as the one parentless commit `Initial commit` of a fresh repository (fixed identity and date,
 * no hooks). The solver of a repair task gets the bug and the weakening this way: nothing in it
 * leads back to the fix. Git runs on the host only here, before any agent touches the directory.
 */
export async function prepareCheckout(options: PrepareCheckoutOptions): Promise<AgentCheckout> {
  await mkdir(options.dir, { recursive: true });
  await cp(options.worktree, options.dir, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !(basename(source) === '.git' && source === join(options.worktree, '.git')),
  });
  const state = new Map<string, PatchedFile>();
  for (const diff of options.diffs) {
    const parsed = parsePatch(diff);
    if (isPatchProblem(parsed)) throw new EnvgenError(ERROR_CODES.storeCorrupt, `a diff of the checkout does not parse: ${parsed.message}`);
    const read = async (path: string): Promise<string | null> => {
      const known = state.get(path);
      if (known !== undefined) return known.after;
      return readFile(join(options.worktree, path), 'utf8').catch(() => null);
    };
    const contents = new Map<string, string | null>();
    for (const path of patchedPaths(parsed)) contents.set(path, await read(path));
    const applied = applyPatch((path) => contents.get(path) ?? null, parsed, { fuzz: 2 });
    if (!applied.ok) throw new EnvgenError(ERROR_CODES.storeCorrupt, `a diff of the checkout does not apply: ${applied.problem.message}`);
    for (const file of applied.files) state.set(file.path, { path: file.path, before: state.get(file.path)?.before ?? file.before, after: file.after });
  }
  await writePatchedFiles(options.dir, [...state.values()]);
  const git = (args: string[]) => runGit(['-C', options.dir, ...args], { env: { ...SNAPSHOT_IDENTITY } });
  await runGit(['init', '--quiet', '--template=', '--initial-branch=main', options.dir]);
  await git(['add', '--all', '--force', '.']);
  await git(['-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-m', 'Initial commit']);
  return { dir: options.dir, initial: await snapshotFiles(options.dir) };
}

/** What an agent changed in its checkout, as a patch over the tree it started from. */
export interface CheckoutDiff {
  /** Git-style unified diff (empty when nothing changed). */
  patch: string;
  files: PatchedFile[];
  /** Changes that cannot be part of a text patch: symlinks and special files, binary or huge files. */
  ignored: string[];
}

/**
 * Diffs an agent's checkout against its start without running anything in it (no git: the
 * agent could have planted hooks, filters or config): regular files are read with lstat
 * first, symlinks and special files are never followed and are reported as ignored.
 */
export async function diffCheckout(checkout: AgentCheckout): Promise<CheckoutDiff> {
  const { files: now, other } = await walkTree(checkout.dir);
  const ignored = other.map((path) => `${path} (not a regular file)`);
  const files: PatchedFile[] = [];
  const decode = (data: Buffer | undefined): string | null | undefined => {
    if (data === undefined) return null;
    if (data.length > MAX_DIFFED_BYTES) return undefined;
    const text = data.toString('utf8');
    return Buffer.from(text, 'utf8').equals(data) ? text : undefined;
  };
  const paths = [...new Set([...checkout.initial.keys(), ...now])].sort();
  const present = new Set(now);
  for (const path of paths) {
    const before = checkout.initial.get(path);
    let after: Buffer | undefined;
    if (present.has(path)) {
      const info = await lstat(join(checkout.dir, path));
      after = info.isFile() && info.size <= MAX_DIFFED_BYTES ? await readFile(join(checkout.dir, path)) : undefined;
      if (after === undefined) {
        ignored.push(`${path} (larger than ${MAX_DIFFED_BYTES} bytes)`);
        continue;
      }
    }
    if (before !== undefined && after !== undefined && before.equals(after)) continue;
    const beforeText = decode(before);
    const afterText = decode(after);
    if (beforeText === undefined || afterText === undefined) {
      ignored.push(`${path} (binary)`);
      continue;
    }
    files.push({ path, before: beforeText, after: afterText });
  }
  return { patch: makePatch(files), files, ignored };
}
