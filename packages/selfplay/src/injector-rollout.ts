import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argumentsRecord, runEpisode } from '@envgen/agent';
import type { Episode } from '@envgen/agent';
import { BUNDLE_FILE_NAMES, silentLogger } from '@envgen/core';
import type { BundleFiles } from '@envgen/core';
import { runGit } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import { renderInjectorSystemPrompt, renderInjectorUserMessage } from './prompts.js';
import type { InjectorStrategy } from './prompts.js';
import { INJECTOR_TOOLS } from './tools.js';
import { episodeLimits, openAgentWorkbench } from './workbench.js';
import type { SelfPlayAgentOptions } from './workbench.js';

/** Default model calls of an injector episode. */
export const DEFAULT_INJECTOR_MAX_TURNS = 40;

/** Options of {@link runInjectorRollout}. */
export interface InjectorRolloutOptions extends SelfPlayAgentOptions {
  /** A clean checkout at `commit` with its git history (a worktree of the repo's mirror); only read. */
  worktree: string;
  commit: string;
  profile: Profile;
  strategy: InjectorStrategy;
}

/** One injector episode and what it submitted. */
export interface InjectorRollout {
  episode: Episode;
  startedAt: Date;
  started: number;
  /** The five files read out of the sandbox at submit; null without a valid submit. */
  bundle: BundleFiles | null;
}

const NUDGE = 'You did not call a tool. Continue with terminal or str_replace_editor, or call submit with the paths of your five bundle files.';

/**
 * A fresh clone of the clean checkout, history included, at `commit`, with no remote and no
 * hooks: the injector may read `git log` and revert old commits in it. The files of the
 * checkout's submodules (gitlinks) are copied in, as the suite reads them. Git runs on the host
 * only here, before the agent gets the directory.
 */
export async function cloneWithHistory(worktree: string, commit: string, dir: string): Promise<void> {
  // --no-local: a self-contained pack, not hard links or alternates pointing at host paths the sandbox cannot see.
  await runGit(['clone', '--quiet', '--no-local', '--template=', '--no-checkout', worktree, dir]);
  await runGit(['-C', dir, 'checkout', '--quiet', '--detach', commit]);
  await runGit(['-C', dir, 'remote', 'remove', 'origin']);
  const entries = (await runGit(['-C', dir, 'ls-files', '--stage', '-z'])).split('\0');
  for (const entry of entries.filter((line) => line.startsWith('160000 '))) {
    const path = entry.slice(entry.indexOf('\t') + 1);
    const source = join(worktree, path);
    // Not a checked-out submodule's own `.git` (a file naming the superproject's git dir).
    await cp(source, join(dir, path), { recursive: true, verbatimSymlinks: true, force: true, filter: (from) => from !== join(source, '.git') });
  }
}

/**
 * One injector episode: the model works with terminal and str_replace_editor in the sandbox on
 * a clone of the repo with its history, guided by its strategy's prompt, and calls submit with
 * the paths of the five bundle files. They are read out of the sandbox as data (the editor's
 * path rules: inside the checkout, no `..`, no symlinks, UTF-8 text); a submit naming a file
 * that cannot be read is answered with the reason and the episode goes on. Checking the bundle
 * is the caller's: the files are untrusted until the seven checks pass.
 */
export async function runInjectorRollout(options: InjectorRolloutOptions): Promise<InjectorRollout> {
  const logger = options.logger ?? silentLogger;
  const { maxTurns } = episodeLimits(options, DEFAULT_INJECTOR_MAX_TURNS);
  const startedAt = new Date();
  const started = performance.now();
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-injector-'));
  try {
    const dir = join(scratch, 'repo');
    await cloneWithHistory(options.worktree, options.commit, dir);
    const bench = await openAgentWorkbench(options, dir);
    let bundle: BundleFiles | null = null;
    let episode: Episode;
    try {
      const testCommand = [options.profile.python, '-m', 'pytest', ...options.profile.testArgs].join(' ');
      episode = await runEpisode({
        client: options.client,
        system: renderInjectorSystemPrompt({ strategy: options.strategy, maxTurns, repoPath: bench.workdir, python: options.profile.python, testCommand }),
        user: renderInjectorUserMessage(bench.workdir),
        tools: INJECTOR_TOOLS,
        limits: episodeLimits(options, DEFAULT_INJECTOR_MAX_TURNS),
        nudge: NUDGE,
        logger: logger.child({ role: 'injector', strategy: options.strategy }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        runTool: (call, args) =>
          bench.runTool(call, args, async () => {
            const record = argumentsRecord(args) ?? {};
            const files: Partial<BundleFiles> = {};
            const problems: string[] = [];
            for (const name of BUNDLE_FILE_NAMES) {
              const path = record[name];
              if (typeof path !== 'string' || path.trim() === '') {
                problems.push(`"${name}" is missing: give the path of the file you wrote`);
                continue;
              }
              const read = await bench.editor.read(path);
              if (read.ok) files[name] = read.text;
              else problems.push(`${name}: ${read.error}`);
            }
            if (problems.length > 0) return { content: `Error: the bundle was not submitted: ${problems.join('; ')}. Fix this and call submit again.` };
            bundle = files as BundleFiles;
            return { content: `Submitted the bundle (${BUNDLE_FILE_NAMES.join(', ')}). It will now be checked against a clean copy of the repository.`, done: true };
          }),
      });
    } finally {
      await bench.close();
    }
    return { episode, startedAt, started, bundle };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
