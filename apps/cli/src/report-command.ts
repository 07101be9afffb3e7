import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { renderReport } from '@envgen/report';
import type { PeriodUnit, ReportInput } from '@envgen/report';
import { readGrowthRounds } from './growth-rounds.js';
import { runPoolStats } from './pool-stats.js';
import { readRuns } from './run-records.js';
import { formatShowReport } from './tasks-command.js';

/** Frontier instances the report lists with what `envgen show` prints. */
const FRONTIER_SHOWN = 50;
/** Equal solve-rate bins of the distribution chart. */
const SOLVE_RATE_BINS = 10;

const HOUR = 3_600_000;
/** Timeline granularity by the pool's age, and how many characters of `created_at` name a period. */
const PERIODS: ReadonlyArray<{ unit: PeriodUnit; upTo: number; length: number }> = [
  { unit: 'minute', upTo: 3 * HOUR, length: 16 },
  { unit: 'hour', upTo: 4 * 24 * HOUR, length: 13 },
  { unit: 'day', upTo: 240 * 24 * HOUR, length: 10 },
  { unit: 'month', upTo: Number.POSITIVE_INFINITY, length: 7 },
];

function periodFor(range: { first: string; last: string } | null): { unit: PeriodUnit; length: number } {
  const span = range === null ? 0 : Date.parse(range.last) - Date.parse(range.first);
  const period = PERIODS.find((entry) => span <= entry.upTo) ?? { unit: 'month', length: 7 };
  return { unit: period.unit, length: period.length };
}

/**
 * Gathers every figure of the report: the spread from the code of `envgen pool stats`, the
 * growth timeline, solve rates, the frontier and rejections from the pool, inject and solver
 * runs from their records, growth rounds as `envgen rounds` lists them.
 */
export async function gatherReport(settings: Settings, logger: Logger, now = new Date()): Promise<ReportInput> {
  const stats = await runPoolStats({}, settings, logger);
  const pool = openPool(settings.home, { logger });
  try {
    const period = periodFor(pool.createdRange());
    const frontier = pool.listFrontier(FRONTIER_SHOWN).map((entry) => ({
      instanceId: entry.instance.instance_id,
      repo: entry.instance.repo,
      strategy: entry.instance.strategy,
      attempts: entry.stats.attempts,
      solveRate: entry.stats.solveRate ?? 0,
      meanReward: entry.stats.meanReward ?? 0,
      show: formatShowReport({ ...entry, bundleDir: pool.bundleDir(entry.instance.instance_id) }),
    }));
    return {
      generatedAt: now.toISOString(),
      pool: stats.pool,
      spread: { total: stats.total, byRepo: stats.byRepo, byStrategy: stats.byStrategy },
      growth: { unit: period.unit, rows: pool.growth(period.length) },
      solveRates: pool.solveRateHistogram(SOLVE_RATE_BINS),
      rejections: pool.rejectionCounts(),
      injectRuns: readRuns(settings.home, 'inject'),
      solverRuns: readRuns(settings.home, 'solver'),
      rounds: readGrowthRounds(pool),
      frontier: { total: stats.total.frontier, shown: frontier },
    };
  } finally {
    pool.close();
  }
}

/** Options of `envgen report`. */
export interface ReportOptions {
  /** The HTML file to write. */
  out: string;
}

/** What `envgen report` wrote. */
export interface ReportCommandReport {
  out: string;
  bytes: number;
  seconds: number;
  instances: number;
  /** Charts on the page (empty sections have none). */
  charts: number;
}

/**
 * `envgen report`: writes the pool report, one self-contained HTML file (static SVG charts,
 * no script, no request), aside and renamed into place.
 */
export async function runReport(options: ReportOptions, settings: Settings, logger: Logger): Promise<ReportCommandReport> {
  const started = performance.now();
  const input = await gatherReport(settings, logger);
  const html = renderReport(input);
  const out = resolve(options.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.partial`, html);
  renameSync(`${out}.partial`, out);
  return {
    out,
    bytes: Buffer.byteLength(html),
    seconds: (performance.now() - started) / 1000,
    instances: input.spread.total.instances,
    charts: html.split('<svg class="chart"').length - 1,
  };
}

/** The human line of `envgen report`. */
export function formatReportSummary(report: ReportCommandReport): string {
  return `report of ${report.instances} instance(s) written to ${report.out} (${(report.bytes / 1024).toFixed(0)} KiB, ${report.charts} charts, ${report.seconds.toFixed(1)} s); open it in a browser`;
}
