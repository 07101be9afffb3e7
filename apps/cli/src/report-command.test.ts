import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { scratchBase } from '@envgen/pool/test-support';
import type { SpreadRow } from '@envgen/pool';
import type { PoolStatsReport } from './pool-stats.js';
import type { ReportCommandReport } from './report-command.js';
import { fillReportPool, makeSyntheticRounds } from './report-pool.test-support.js';
import { readRuns, recordRun } from './run-records.js';
import { runCli } from './run-cli.test-support.js';

const homes: string[] = [];

afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function freshHome(): string {
  const home = mkdtempSync(join(scratchBase(), 'envgen-cli-report-'));
  homes.push(home);
  return home;
}

/** The figures of the page's spread tables, as `pool stats --json` would hold them. */
function pageSpread(html: string): Record<string, Record<string, Record<string, number | null>>> {
  const groups: Record<string, Record<string, Record<string, number | null>>> = {};
  for (const tr of html.matchAll(/<tr data-group="(\w+)" data-key="([^"]*)">([\s\S]*?)<\/tr>/g)) {
    const cells: Record<string, number | null> = {};
    for (const td of (tr[3] ?? '').matchAll(/data-field="(\w+)" data-value="([^"]*)"/g)) cells[td[1] ?? ''] = td[2] === 'null' ? null : Number(td[2]);
    (groups[tr[1] ?? ''] ??= {})[tr[2] ?? ''] = cells;
  }
  return groups;
}

function keyed(rows: SpreadRow[]): Record<string, Omit<SpreadRow, 'key'>> {
  return Object.fromEntries(rows.map(({ key, ...figures }) => [key, figures]));
}

describe('envgen report', () => {
  it('writes one page whose figures equal envgen pool stats --json', async () => {
    const home = freshHome();
    fillReportPool(home, 60, { days: 6, rounds: makeSyntheticRounds(4) });
    const out = join(home, 'out', 'report.html');
    const written = await runCli(['report', '--out', out, '--json'], home);
    expect(written.code).toBe(0);
    const summary = JSON.parse(written.stdout) as ReportCommandReport;
    expect(summary).toMatchObject({ out, instances: 60, charts: 13 });
    const html = readFileSync(out, 'utf8');
    expect(summary.bytes).toBe(Buffer.byteLength(html));
    expect(existsSync(`${out}.partial`)).toBe(false);

    const stats = JSON.parse((await runCli(['pool', 'stats', '--json'], home)).stdout) as PoolStatsReport;
    const page = pageSpread(html);
    expect(page['byRepo']).toEqual(keyed(stats.byRepo));
    expect(page['byStrategy']).toEqual(keyed(stats.byStrategy));
    expect(page['total']).toEqual(keyed([stats.total]));
    expect(stats.total.frontier).toBeGreaterThan(0);
    expect(html.match(/<details class="instance"/g)).toHaveLength(Math.min(50, stats.total.frontier));
    // Every round of the table is on the page, with its plan.
    for (const round of makeSyntheticRounds(4)) expect(html).toContain(`data-category="${round.roundId}" data-value="${round.newInstances}"`);
    expect(html).toContain('<h3>Plan of round r4');
  });

  it('shows an empty pool, with no growth rounds yet', async () => {
    const home = freshHome();
    const out = join(home, 'report.html');
    const empty = await runCli(['report', '--out', out], home);
    expect(empty.stdout).toMatch(/^report of 0 instance\(s\) written to .*report\.html \(\d+ KiB, 0 charts, [\d.]+ s\); open it in a browser\n$/);
    expect(readFileSync(out, 'utf8')).toContain('no growth rounds yet');
  });

  it('has --help with an example', async () => {
    const help = await runCli(['report', '--help'], freshHome());
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/\$ envgen report --out report\.html/);
  });
});

describe('run records', () => {
  it('keeps each run summary as a file and reads them back oldest first', () => {
    const home = freshHome();
    expect(readRuns(home, 'solver')).toEqual([]);
    const run = (at: string) => ({ finishedAt: at, runId: at, solver: 'baseline', model: null, scored: 1, meanReward: 3, solveRate: 1, levels: { file: 1, module: 1, entity: 1 }, seconds: 1 });
    const later = recordRun(home, 'solver', run('2025-01-02T00:00:00.000Z'));
    recordRun(home, 'solver', run('2025-01-01T00:00:00.000Z'));
    expect(later).toMatch(/runs\/solver\/20250102T000000000Z-[0-9a-f]{6}\.json$/);
    expect(readRuns(home, 'solver').map((record) => record.runId)).toEqual(['2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z']);
    expect(readRuns(home, 'inject')).toEqual([]);
  });
});
