import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { SpreadRow } from '@envgen/pool';
import { formatTable } from './pool-command.js';

/** Options of `envgen pool stats`. */
export interface PoolStatsOptions {
  repo?: string;
  strategy?: string;
}

/** What `envgen pool stats` found; `--json` prints exactly this object. */
export interface PoolStatsReport {
  pool: string;
  filter: { repo?: string; strategy?: string };
  /** The whole selection, keyed `all`. */
  total: SpreadRow;
  byRepo: SpreadRow[];
  byStrategy: SpreadRow[];
}

/** `envgen pool stats`: how the instances spread over untried, too hard, frontier and too easy, per repo and per strategy. */
export async function runPoolStats(options: PoolStatsOptions, settings: Settings, logger: Logger): Promise<PoolStatsReport> {
  const pool = openPool(settings.home, { logger });
  try {
    const filter = {
      ...(options.repo === undefined ? {} : { repo: options.repo }),
      ...(options.strategy === undefined ? {} : { strategy: options.strategy }),
    };
    const [total] = pool.spread(null, filter);
    return {
      pool: pool.dir,
      filter,
      total: total as SpreadRow,
      byRepo: pool.spread('repo', filter),
      byStrategy: pool.spread('strategy', filter),
    };
  } finally {
    pool.close();
  }
}

function formatNumber(value: number | null): string {
  return value === null ? '-' : value.toFixed(3);
}

function spreadTable(title: string, rows: SpreadRow[]): string {
  return formatTable(
    [title, 'instances', 'untried', 'too hard', 'frontier', 'too easy', 'attempts', 'mean reward', 'solve rate'],
    rows.map((row) => [
      row.key,
      String(row.instances),
      String(row.untried),
      String(row.tooHard),
      String(row.frontier),
      String(row.tooEasy),
      String(row.attempts),
      formatNumber(row.meanReward),
      formatNumber(row.meanSolveRate),
    ]),
    new Set([1, 2, 3, 4, 5, 6, 7, 8]),
  );
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${Math.round((100 * part) / whole)}%`;
}

/** The human form of a `envgen pool stats` report. */
export function formatPoolStats(report: PoolStatsReport): string {
  const filtered = [report.filter.repo && `repo ${report.filter.repo}`, report.filter.strategy && `strategy ${report.filter.strategy}`].filter(Boolean).join(', ');
  const { total } = report;
  if (total.instances === 0) {
    return filtered === ''
      ? `the pool at ${report.pool} is empty; add instances with: envgen inject --repo <repo>`
      : `no instance of ${filtered} in the pool at ${report.pool}`;
  }
  const lines = [spreadTable('repo', report.byRepo), '', spreadTable('strategy', report.byStrategy), '', spreadTable('', [total]), ''];
  const tried = total.instances - total.untried;
  if (tried === 0) {
    lines.push(`no outcomes recorded yet for the ${total.instances} instances${filtered ? ` of ${filtered}` : ''}; score rollouts through envgen serve (POST /v1/outcomes) to fill this in`);
  } else {
    lines.push(
      `frontier ${total.frontier} of ${tried} tried instances (${percent(total.frontier, tried)}): solve rate strictly between 0 and 1; too hard ${total.tooHard}, too easy ${total.tooEasy}, untried ${total.untried}`,
    );
  }
  lines.push(`solve rate is the mean over tried instances; mean reward is over all ${total.attempts} attempts (pool at ${report.pool}${filtered ? `, ${filtered}` : ''})`);
  return lines.join('\n');
}
