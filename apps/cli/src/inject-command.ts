import { join } from 'node:path';
import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { HISTORY_STRATEGY, createHistoryStrategy, runInjection } from '@envgen/inject';
import type { InjectionReport } from '@envgen/inject';
import { selectStrategies } from '@envgen/mutate';
import { openPool } from '@envgen/pool';
import { collectHistoricalVersions, isShallowRepository } from '@envgen/repo';
import { FAILING_TESTS_RUN } from '@envgen/tasks';
import type { BuildTasksReport } from '@envgen/tasks';
import { checkoutRepo, prepareRepoRun } from './env-command.js';
import type { Progress } from './progress.js';
import { recordRun, summarizeInjectRun } from './run-records.js';
import { buildRepoTasks, formatTasksReport, issueWriterOptions } from './tasks-command.js';
import type { StatementOptions } from './tasks-command.js';

/** Options of `envgen inject`. */
export interface InjectOptions {
  repo: string;
  /** Candidates to try. */
  count: number;
  seed: number;
  /** Strategy names (default: all). */
  strategies?: string[];
  /** Combinations of this run's bugs to try (default: a tenth of count). */
  combine?: number;
  /** Parallel sandboxes (default: the cores). */
  concurrency?: number;
  /** How the new instances' problem statements are written; absent or `null` builds no tasks. */
  tasks?: StatementOptions | null;
  /** Candidates per strategy instead of `count` (growth rounds' shards; see runInjection). */
  quotas?: Record<string, number>;
  /** The home whose pool receives the instances (default the settings' home; a growth worker's scratch pool). */
  poolHome?: string;
}

/** What `envgen inject` did: the injection, then the tasks of the repo's instances that lacked one. */
export interface InjectCommandReport extends InjectionReport {
  tasks: BuildTasksReport | null;
  /**
   * What the history strategy had to draw from (null when it was not asked for): past
   * versions of the source files, and whether the repo's history is shallow (a `--depth`
   * clone holds only its last commits, so few or no past versions).
   */
  history: { versions: number; files: number; shallow: boolean } | null;
}

/**
 * `envgen inject`: baseline (cached), then candidates from every strategy on covered
 * sites, validated, weakened, checked and kept in the pool.
 */
export async function runInject(
  options: InjectOptions,
  settings: Settings,
  logger: Logger,
  progress: Progress,
  env: Record<string, string | undefined> = process.env,
): Promise<InjectCommandReport> {
  const llm = options.tasks === undefined || options.tasks === null ? undefined : await issueWriterOptions(options.tasks, env);
  const wanted = options.strategies;
  const withHistory = wanted === undefined || wanted.includes(HISTORY_STRATEGY);
  const strategies = wanted === undefined ? selectStrategies() : selectStrategies(wanted.filter((name) => name !== HISTORY_STRATEGY));
  const checkout = await checkoutRepo(options.repo, settings, logger, progress);
  const { provider, repo, worktree } = checkout;
  const pool = openPool(options.poolHome ?? settings.home, { logger });
  try {
    const run = await prepareRepoRun(checkout, settings, logger, progress);
    const { profile } = run;
    let history: InjectCommandReport['history'] = null;
    if (withHistory) {
      // Repos with git history also get bugs that re-apply past versions of functions.
      progress.phase('reading the git history of the source files');
      const versions = await collectHistoricalVersions(worktree.path, repo.commit, { paths: profile.sourceFiles, logger });
      if (versions.length > 0) strategies.push(createHistoryStrategy(versions));
      history = { versions: versions.length, files: new Set(versions.map((version) => version.path)).size, shallow: await isShallowRepository(worktree.path) };
      if (history.shallow) {
        logger.warn('the repository is a shallow clone: history_revert candidates come only from the commits it holds; give envgen a full clone (git fetch --unshallow) for more', { pastVersions: versions.length });
      }
    }
    progress.phase('starting the validator');
    // Statements that show failure output get it from the validator's warm interpreters while they run.
    const failureOutputs = options.tasks !== undefined && options.tasks !== null && options.tasks.statement !== 'self-play' ? new Map<string, string>() : undefined;
    const injection = await runInjection({
      ...run,
      pool,
      count: options.count,
      seed: options.seed,
      strategies,
      codeCache: join(settings.home, 'code-cache'),
      logger,
      ...(options.combine === undefined ? {} : { combine: options.combine }),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.quotas === undefined ? {} : { quotas: options.quotas }),
      ...(failureOutputs === undefined ? {} : { failureOutputs: { tests: FAILING_TESTS_RUN, into: failureOutputs } }),
      onProgress: (event) => {
        if (event.kind === 'start') progress.phase('validating candidates', event.total);
        else progress.tick();
      },
    });
    recordRun(settings.home, 'inject', summarizeInjectRun(injection, new Date()));
    const tasks =
      options.tasks === undefined || options.tasks === null
        ? null
        : await buildRepoTasks(
            { repo, worktree: worktree.path, profile, provider, baseline: run.baseline },
            pool,
            { ...options.tasks, ...(llm === undefined ? {} : { llm }), ...(failureOutputs === undefined ? {} : { failureOutputs }) },
            settings,
            logger,
            progress,
          );
    return { ...injection, tasks, history };
  } finally {
    pool.close();
    await worktree.remove();
  }
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${Math.round((100 * part) / whole)}%`;
}

/** The human form of an injection report: the per-strategy table and the totals. */
export function formatInjectReport(report: InjectCommandReport): string {
  const rows = Object.entries(report.byStrategy)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([strategy, tally]) => [strategy, String(tally.tried), String(tally.kept), String(tally.known), percent(tally.kept + tally.known, tally.tried)]);
  rows.push(['total', String(report.tried), String(report.kept), String(report.known), percent(report.kept + report.known, report.tried)]);
  const header = ['strategy', 'tried', 'kept', 'in pool', 'yield'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  const table = [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
  const dropped = Object.entries(report.dropped).map(([reason, count]) => `${count} ${reason}`).join(', ');
  const rejected = Object.entries(report.rejected).map(([reason, count]) => `${count} ${reason}`).join(', ');
  const { validation } = report;
  const declined = Object.entries(validation.declined)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, 4)
    .map(([why, count]) => `${count}× ${why.length > 90 ? `${why.slice(0, 87)}...` : why}`);
  const afterVerdict = report.afterVerdict.slice(0, 3).map((entry) => `  ${entry.strategy}: ${entry.detail.length > 200 ? `${entry.detail.slice(0, 197)}...` : entry.detail}`);
  return [
    `${report.repo} @ ${report.commit.slice(0, 8)}, seed ${report.seed}`,
    '',
    table,
    '',
    `sites        ${report.sites.covered} covered entities; ${report.sites.skippedUncovered} skipped as uncovered; ${report.sites.linesKnown ? 'changes only in lines the clean suite ran' : 'which lines ran is unknown (the suite replaced the line tracer): changes anywhere in them'}`,
    ...(report.history === null
      ? []
      : [`history      ${report.history.versions} past version(s) of ${report.history.files} source file(s)${report.history.shallow ? ' (a shallow clone: only the commits it holds; git fetch --unshallow for more)' : ''}`]),
    `dropped      ${dropped || 'none'} (before any test ran)`,
    `rejected     ${rejected || 'none'}`,
    ...(report.afterVerdict.length === 0
      ? []
      : [`BUG          ${report.afterVerdict.length} candidate(s) the validator proved were rejected later (a disagreement in envgen: please report it):`, ...afterVerdict]),
    ...(report.cleanRun === null
      ? []
      : [
          `clean run    the bundle's own script on the clean repo: ${report.cleanRun.cached ? `from an earlier injection of this commit (${report.cleanRun.seconds.toFixed(1)} s cold then)` : `${report.cleanRun.seconds.toFixed(1)} s cold`}`,
          ...(report.cleanRun.flaky.length === 0
            ? []
            : [`flaky        ${report.cleanRun.flaky.length} test(s) passed in the baseline's two runs and not in this one, in no FAIL_TO_PASS or PASS_TO_PASS: ${report.cleanRun.flaky.slice(0, 3).join(', ')}`]),
        ]),
    ...(report.warmFlaky.length === 0
      ? []
      : [`flaky        ${report.warmFlaky.length} test(s) passed in one of the validator's warm clean runs and not in another, in no FAIL_TO_PASS or PASS_TO_PASS: ${report.warmFlaky.slice(0, 3).join(', ')}`]),
    ...(report.flipped.length === 0
      ? []
      : [`flipped      ${report.flipped.length} test(s) changed outcome between two runs of one bug's tree, flaky from then on (in no later FAIL_TO_PASS or PASS_TO_PASS): ${report.flipped.slice(0, 3).join(', ')}`]),
    ...(report.replay !== null
      ? [`replay       ${report.replay.agreed ? 'agreed' : 'DISAGREED'}: ${report.replay.detail} (${report.replay.strategy}, ${report.replay.seconds.toFixed(1)} s cold)`]
      : report.kept > 0
        ? ['replay       none needed: every kept bundle was checked cold (validated in a fresh interpreter)']
        : []),
    `validation   ${validation.resumed} resumed inside the suite, ${validation.collection} from collection, ${validation.scratch} whole suite from scratch, ${validation.reference} the reference way`,
    ...(declined.length === 0 ? [] : [`checkpoints  declined: ${declined.join('; ')}`]),
    `kept         ${report.kept} new instance(s) in the pool; ${report.known} already there`,
    `time         ${report.seconds.toFixed(1)} s; ${report.secondsPerKept === null ? '–' : `${report.secondsPerKept.toFixed(2)} s`} per kept instance`,
    ...(report.tasks === null ? [] : [`tasks        ${formatTasksReport(report.tasks)}`]),
  ].join('\n');
}
