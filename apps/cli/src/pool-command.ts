import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { GroupCount } from '@envgen/pool';

/** Options of `envgen pool list`. */
export interface PoolListOptions {
  repo?: string;
  strategy?: string;
  /** Rows to show; 0 shows every matching instance. */
  limit: number;
}

/** One listed instance. */
export interface PoolListRow {
  instance_id: string;
  repo: string;
  strategy: string;
  failToPass: number;
  passToPass: number;
  created_at: string;
  attempts: number;
  solveRate: number | null;
}

/** What `envgen pool list` found; `--json` prints exactly this object. */
export interface PoolListReport {
  pool: string;
  filter: { repo?: string; strategy?: string };
  /** Instances in the whole pool. */
  total: number;
  /** Instances matching the filter. */
  matching: number;
  instances: PoolListRow[];
  byRepo: GroupCount[];
  byStrategy: GroupCount[];
}

/** `envgen pool list`: the pool's instances (streamed, so the limit bounds memory) and counts per repo and strategy. */
export async function runPoolList(options: PoolListOptions, settings: Settings, logger: Logger): Promise<PoolListReport> {
  const pool = openPool(settings.home, { logger });
  try {
    const filter = {
      ...(options.repo === undefined ? {} : { repo: options.repo }),
      ...(options.strategy === undefined ? {} : { strategy: options.strategy }),
    };
    const instances: PoolListRow[] = [];
    for (const { instance, stats } of pool.listInstances({ ...filter, ...(options.limit > 0 ? { limit: options.limit } : {}) })) {
      instances.push({
        instance_id: instance.instance_id,
        repo: instance.repo,
        strategy: instance.strategy,
        failToPass: instance.FAIL_TO_PASS.length,
        passToPass: instance.PASS_TO_PASS.length,
        created_at: instance.created_at,
        attempts: stats.attempts,
        solveRate: stats.solveRate,
      });
    }
    return {
      pool: pool.dir,
      filter,
      total: pool.count(),
      matching: pool.count(filter),
      instances,
      byRepo: pool.countsBy('repo', filter),
      byStrategy: pool.countsBy('strategy', filter),
    };
  } finally {
    pool.close();
  }
}

/** A text table indented two spaces; columns in `rightAligned` are padded on the left. */
export function formatTable(header: string[], rows: string[][], rightAligned: ReadonlySet<number>): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (rightAligned.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].map((text) => `  ${text}`).join('\n');
}

function formatCounts(counts: GroupCount[]): string {
  return counts.map(({ key, count }) => `${key} ${count}`).join(' · ');
}

/** The human form of a `envgen pool list` report. */
export function formatPoolList(report: PoolListReport): string {
  if (report.total === 0) return `the pool at ${report.pool} is empty; add instances with: envgen inject --repo <repo>`;
  const filtered = [report.filter.repo && `repo ${report.filter.repo}`, report.filter.strategy && `strategy ${report.filter.strategy}`].filter(Boolean).join(', ');
  if (report.matching === 0) return `no instance of ${filtered} among the ${report.total} in ${report.pool}`;
  const table = formatTable(
    ['instance', 'repo', 'strategy', 'F2P', 'P2P', 'created'],
    report.instances.map((row) => [
      row.instance_id,
      row.repo,
      row.strategy,
      String(row.failToPass),
      String(row.passToPass),
      row.created_at.slice(0, 16).replace('T', ' '),
    ]),
    new Set([3, 4]),
  );
  const shown =
    report.instances.length < report.matching
      ? `showing ${report.instances.length} of ${report.matching} instances${filtered ? ` of ${filtered}` : ''}; --limit 0 shows all`
      : `${report.matching} instance${report.matching === 1 ? '' : 's'}${filtered ? ` of ${filtered}` : ''}`;
  return [
    table,
    '',
    `  per repo      ${formatCounts(report.byRepo)}`,
    `  per strategy  ${formatCounts(report.byStrategy)}`,
    '',
    `${shown} (pool of ${report.total} at ${report.pool})`,
  ].join('\n');
}
