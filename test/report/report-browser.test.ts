import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolStatsReport } from '@envgen/cli';
import { scratchBase } from '@envgen/pool/test-support';
import { reportRound } from '../../apps/cli/src/growth-rounds.js';
import { fillReportPool, makeSyntheticRounds } from '../../apps/cli/src/report-pool.test-support.js';
import { runCli } from '../../apps/cli/src/run-cli.test-support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where the screenshot is kept for a person (or CI) to look at. */
const ARTIFACTS = join(ROOT, '.cache', 'test-artifacts');
const ROUNDS = makeSyntheticRounds(8);

let home: string;
let browser: Browser;
let page: string;
let stats: PoolStatsReport;

beforeAll(async () => {
  home = mkdtempSync(join(scratchBase(), 'envgen-report-browser-'));
  fillReportPool(home, 400, { days: 20, rounds: ROUNDS });
  page = join(home, 'report.html');
  expect((await runCli(['report', '--out', page], home)).code).toBe(0);
  stats = JSON.parse((await runCli(['pool', 'stats', '--json'], home)).stdout) as PoolStatsReport;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  rmSync(home, { recursive: true, force: true });
});

function figure(value: number | null, digits: number): string {
  if (value === null) return '–';
  return digits === 0 ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',') : value.toFixed(digits);
}

describe('the report in headless Chromium', () => {
  it('opens from disk with no console error and no request leaving the file; every chart has marks; the figures are the pool stats', async () => {
    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    const requests: string[] = [];
    tab.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') errors.push(message.text());
    });
    tab.on('pageerror', (error) => errors.push(error.message));
    tab.on('request', (request) => requests.push(request.url()));
    const url = pathToFileURL(page).href;
    await tab.goto(url, { waitUntil: 'load' });

    expect(errors).toEqual([]);
    expect(requests).toEqual([url]);

    const charts = await tab.$$eval('svg.chart', (svgs) =>
      svgs.map((svg) => ({
        title: svg.getAttribute('aria-label'),
        marks: [...svg.querySelectorAll('rect.mark')].filter((mark) => mark.getBoundingClientRect().width > 0 && mark.getBoundingClientRect().height > 0).length,
      })),
    );
    expect(charts.length).toBe(13);
    for (const chart of charts) expect(chart.marks, chart.title ?? '').toBeGreaterThan(0);

    // Every spread figure, as the browser shows it, is the one envgen pool stats --json prints.
    const cells = await tab.$$eval('tr[data-group] td[data-field]', (tds) =>
      tds.map((td) => ({ group: td.parentElement?.dataset['group'] ?? '', key: td.parentElement?.dataset['key'] ?? '', field: td.dataset['field'] ?? '', value: td.dataset['value'] ?? '', text: td.textContent ?? '' })),
    );
    const rows = { byRepo: stats.byRepo, byStrategy: stats.byStrategy, total: [stats.total] } as const;
    const expected = Object.entries(rows).flatMap(([group, list]) =>
      list.flatMap((row) =>
        (['instances', 'untried', 'tooHard', 'frontier', 'tooEasy', 'attempts', 'solved', 'meanReward', 'meanSolveRate'] as const).map((field) => ({
          group,
          key: row.key,
          field,
          value: String(row[field]),
          text: figure(row[field], field === 'meanReward' || field === 'meanSolveRate' ? 3 : 0),
        })),
      ),
    );
    expect(cells).toEqual(expected);
    expect(await tab.textContent('[data-tile=instances] .tile-value')).toBe(figure(stats.total.instances, 0));
    expect(await tab.textContent('[data-tile=frontier] .tile-value')).toBe(figure(stats.total.frontier, 0));

    // The band chart's marks are the same figures.
    const bands = await tab.$$eval('svg[aria-label="Bands per repo"] rect.mark', (marks) => marks.map((mark) => [mark.getAttribute('data-category'), mark.getAttribute('data-series'), Number(mark.getAttribute('data-value'))]));
    const bandFields = [['too hard', 'tooHard'], ['frontier', 'frontier'], ['too easy', 'tooEasy'], ['untried', 'untried']] as const;
    expect(bands).toEqual(stats.byRepo.flatMap((row) => bandFields.filter(([, field]) => row[field] > 0).map(([label, field]) => [row.key, label, row[field]])));

    // The rounds the pool holds, one bar pair per round.
    const gained = await tab.$$eval('svg[aria-label="Candidates and kept instances per round"] rect.mark', (marks) => marks.map((mark) => [mark.getAttribute('data-category'), mark.getAttribute('data-series'), Number(mark.getAttribute('data-value'))]));
    expect(gained).toEqual(ROUNDS.map(reportRound).flatMap((round) => [[round.id, 'candidates', round.candidates], [round.id, 'kept', round.kept]]));

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'report.png');
    await tab.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(50_000);
    await tab.close();
  });
});
