import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEpisode } from '@envgen/agent';
import { silentLogger } from '@envgen/core';
import type { BundleFiles, Instance } from '@envgen/core';
import { isPatchProblem, parsePatch } from '@envgen/patch';
import type { Profile } from '@envgen/repo';
import { makeSelfPlayStatement } from '@envgen/tasks';
import { diffCheckout, prepareCheckout } from './checkout.js';
import { renderRepairSystemPrompt, renderRepairUserMessage } from './prompts.js';
import { evaluateRepair, testFilesTouched } from './repair-evaluation.js';
import type { RepairEvaluation } from './repair-evaluation.js';
import { REPAIR_TOOLS } from './tools.js';
import { episodeFields } from './trajectory.js';
import type { SelfPlayTrajectory } from './trajectory.js';
import { episodeLimits, openAgentWorkbench } from './workbench.js';
import type { SelfPlayAgentOptions } from './workbench.js';

/** Default model calls of a repair episode. */
export const DEFAULT_REPAIR_MAX_TURNS = 30;

/** What a repair needs of an instance. */
export type RepairInstance = Pick<Instance, 'instance_id' | 'repo' | 'strategy' | 'FAIL_TO_PASS' | 'PASS_TO_PASS' | 'order' | 'parent'>;

/** Options of {@link runRepairRollout}. */
export interface RepairRolloutOptions extends SelfPlayAgentOptions {
  instance: RepairInstance;
  bundle: BundleFiles;
  /** Clean tree at the instance's base commit; only read. */
  worktree: string;
  profile: Profile;
  runId: string;
}

/** One repair episode: its trajectory (scored) and the patch it produced. */
export interface RepairRollout {
  trajectory: SelfPlayTrajectory;
  patch: string;
  evaluation: RepairEvaluation;
}

const NUDGE = 'You did not call a tool. Continue with terminal or str_replace_editor, or call submit when the fix is done.';

/**
 * One repair episode: a fresh checkout with the bug and the weakening committed as its only
 * commit, the self-play statement (the reversed test_weaken.diff), the solver working with
 * terminal and str_replace_editor until submit (refused while the diff touches test files) or
 * a limit. The patch is the checkout's diff, read without running git on it, and scored by
 * the repair reward in a fresh sandbox. An episode whose endpoint failed is still returned,
 * with finish reason `error`; the caller decides not to record it.
 */
export async function runRepairRollout(options: RepairRolloutOptions): Promise<RepairRollout> {
  const logger = options.logger ?? silentLogger;
  const { maxTurns } = episodeLimits(options, DEFAULT_REPAIR_MAX_TURNS);
  const startedAt = new Date();
  const started = performance.now();
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-repair-'));
  try {
    const checkout = await prepareCheckout({
      worktree: options.worktree,
      dir: join(scratch, 'repo'),
      diffs: [options.bundle['bug_inject.diff'], options.bundle['test_weaken.diff']],
    });
    const bench = await openAgentWorkbench(options, checkout.dir);
    let episode;
    try {
      episode = await runEpisode({
        client: options.client,
        system: renderRepairSystemPrompt({ maxTurns }),
        user: renderRepairUserMessage(bench.workdir, makeSelfPlayStatement(options.bundle['test_weaken.diff'])),
        tools: REPAIR_TOOLS,
        limits: episodeLimits(options, DEFAULT_REPAIR_MAX_TURNS),
        nudge: NUDGE,
        logger: logger.child({ instance: options.instance.instance_id, role: 'solver' }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        runTool: (call, args) =>
          bench.runTool(call, args, async () => {
            const diff = await diffCheckout(checkout);
            if (diff.patch === '') return { content: 'Error: the repository has no changes: fix the source code, then call submit.' };
            const parsed = parsePatch(diff.patch);
            const tests = isPatchProblem(parsed) ? [] : testFilesTouched(parsed, options.bundle, options.profile);
            if (tests.length > 0) {
              return { content: `Error: your changes touch test files, which are restored before evaluation: ${tests.join(', ')}. Revert them (git checkout -- <file>, or rm a new one) and call submit again.` };
            }
            return { content: `Submitted a patch changing ${diff.files.length} file(s): ${diff.files.map((file) => file.path).join(', ')}.`, done: true };
          }),
      });
    } finally {
      await bench.close();
    }
    const { patch } = await diffCheckout(checkout);
    const evaluation = await evaluateRepair({
      bundle: options.bundle,
      failToPass: options.instance.FAIL_TO_PASS,
      passToPass: options.instance.PASS_TO_PASS,
      patch,
      worktree: options.worktree,
      profile: options.profile,
      sandboxProvider: options.sandboxProvider,
      ...(options.image === undefined ? {} : { image: options.image }),
    });
    const trajectory: SelfPlayTrajectory = {
      run_id: options.runId,
      role: 'solver',
      instance_id: options.instance.instance_id,
      repo: options.instance.repo,
      strategy: options.instance.strategy,
      order: options.instance.order ?? 1,
      parent: options.instance.parent ?? null,
      model: options.client.model,
      tools: [...REPAIR_TOOLS],
      reward: evaluation.reward,
      patch,
      evaluation,
      ...episodeFields(episode, startedAt, started),
    };
    return { trajectory, patch, evaluation };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
