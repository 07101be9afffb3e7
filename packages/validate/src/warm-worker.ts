import { lstat, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import { copyTree, diffSnapshots, hostPath, overwriteFile, restoreTree, sameShape, snapshotTree, stampPath } from './tree.js';
import type { ChangedFile, EntryStamp } from './tree.js';
import type { PhaseSeconds } from './types.js';
import { startClock } from './clock.js';
import { startWarmServer } from './warm-server.js';
import type { CollectOptions, CollectOutcome, WarmRun, WarmRunOptions, WarmServer } from './warm-server.js';

/** Options of {@link startWarmWorker}. */
export interface WarmWorkerOptions {
  /** The clean checkout; copied, never modified. */
  worktree: string;
  profile: Profile;
  /** Node id → seconds: each test's own limit (see `runPytest`). */
  testLimits?: Readonly<Record<string, number>>;
  provider: SandboxProvider;
  /** Host directory of the warm servers' code cache (see `StartWarmServerOptions.codeCache`). */
  codeCache?: string;
  logger: Logger;
}

/**
 * A private copy of the clean tree with a warm server over it. Each candidate's files are
 * written in place, tested and restored; whatever else a run changed in the tree (a test
 * writing files, a bug deleting one) is put back from the clean checkout, so the next
 * candidate starts from the clean tree exactly as a fresh copy would. Only a change that
 * cannot be undone in place (a directory replaced or removed, a link on the way) gets the
 * copy rebuilt and the server restarted.
 */
export interface WarmWorker {
  /** Runs with `files` written into the tree; the tree is clean again when it resolves. */
  runWith(files: readonly ChangedFile[], options: WarmRunOptions): Promise<{ run: WarmRun; phases: PhaseSeconds }>;
  /** Runs on the clean tree. */
  run(options: WarmRunOptions): Promise<WarmRun>;
  /** Imports modules in the server (kept across restarts); returns those that came from the worktree. */
  preload(modules: readonly string[]): Promise<string[]>;
  /** The worktree files the server imported when it started, as its latest preload found them (see `PreloadAnswer.startup`). */
  startupFiles(): readonly string[];
  /**
   * Leaves checkpoints of the clean suite in the server ({@link WarmServer.collect}), again
   * after each restart (without the analysis). A clean run whose changes to the tree cannot
   * be undone in place leaves none (and is not repeated).
   */
  collect(options: CollectOptions): Promise<CollectOutcome>;
  /** What the latest collect left (null before any, or after one whose changes to the tree could not be undone). */
  collected(): CollectOutcome | null;
  /** Throws away the tree copy and server and makes new ones (after the server died). */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Copies the tree and starts a warm server over it. */
export async function startWarmWorker(options: WarmWorkerOptions): Promise<WarmWorker> {
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-validate-'));
  const tree = join(scratch, 'tree');
  let preloaded: readonly string[] | null = null;
  let startup: readonly string[] = [];
  let collecting: CollectOptions | null = null;
  let collectedOutcome: CollectOutcome | null = null;
  let server: WarmServer;
  let clean: Map<string, EntryStamp>;

  const build = async (): Promise<void> => {
    await rm(tree, { recursive: true, force: true });
    await copyTree(options.worktree, tree);
    clean = snapshotTree(tree);
    server = await startWarmServer({
      provider: options.provider,
      worktree: tree,
      profile: options.profile,
      logger: options.logger,
      ...(options.testLimits === undefined ? {} : { testLimits: options.testLimits }),
      ...(options.codeCache === undefined ? {} : { codeCache: options.codeCache }),
    });
    if (preloaded !== null) await server.preload(preloaded);
    collectedOutcome = null;
    if (collecting !== null) await collectClean(collecting);
  };
  const collectClean = async (collectOptions: CollectOptions): Promise<CollectOutcome> => {
    const outcome = await server.collect(collectOptions);
    // The checkpoints keep what the clean run wrote into the tree up to them and put it back
    // for each run; the tree itself goes back to the clean checkout.
    if (!(await restoreChanges())) {
      options.logger.warn('the clean suite changes the tree in a way that cannot be undone in place; running every candidate from scratch');
      collecting = null;
      await reset();
      return { ok: false, why: 'the clean suite replaces or removes directories of the tree' };
    }
    collectedOutcome = outcome;
    return outcome;
  };
  /** Puts back what a run changed in the tree; false when only a rebuild can. */
  const restoreChanges = async (): Promise<boolean> => {
    const changed = diffSnapshots(clean, snapshotTree(tree));
    if (changed.length === 0) return true;
    options.logger.debug('a run changed the tree; restoring it', { changed: changed.slice(0, 5) });
    if (!(await restoreTree(tree, options.worktree, clean, changed))) return false;
    const restored = snapshotTree(tree);
    if (!sameShape(clean, restored)) return false;
    clean = restored;
    return true;
  };
  const reset = async (): Promise<void> => {
    await server.close();
    await build();
  };
  try {
    await build();
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }

  const checkTree = async (): Promise<void> => {
    if (!(await restoreChanges())) await reset();
  };

  return {
    async runWith(files, runOptions) {
      const clock = startClock();
      let run: WarmRun;
      try {
        for (const file of files) await overwriteFile(hostPath(tree, file.path), file.after);
        clock.lap('write');
        run = await server.run(runOptions);
        clock.lap('request');
        clock.add({ child: run.seconds });
      } finally {
        // Restore in place only over regular files: anything else means the run replaced them.
        let replaced = false;
        for (const file of files) {
          const path = hostPath(tree, file.path);
          const stats = await lstat(path).catch(() => null);
          if (stats === null || !stats.isFile()) replaced = true;
          else await overwriteFile(path, file.before).catch(() => (replaced = true));
        }
        if (replaced) await reset();
        else for (const file of files) clean.set(file.path, stampPath(hostPath(tree, file.path)));
        clock.lap('restore');
      }
      await checkTree();
      clock.lap('check');
      return { run, phases: clock.phases };
    },
    async run(runOptions) {
      const run = await server.run(runOptions);
      await checkTree();
      return run;
    },
    async preload(modules) {
      const answer = await server.preload(modules);
      options.logger.debug('preloaded', { modules: modules.length, cacheHits: answer.cache.hits, cacheAdded: answer.cache.added });
      startup = answer.startup;
      if (answer.inside.length > 0) {
        await reset();
        return answer.inside;
      }
      preloaded = modules.filter((name) => !answer.failed.includes(name));
      return [];
    },
    async collect(collectOptions) {
      collecting = { ...collectOptions, analyze: false };
      return collectClean(collectOptions);
    },
    collected: () => collectedOutcome,
    startupFiles: () => startup,
    reset,
    async close() {
      try {
        await server.close();
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}
