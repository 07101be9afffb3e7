/**
 * The pool report on a large synthetic pool, and the choice of chart renderer (issue 12).
 *
 *   node --conditions=@envgen/source --import tsx bench/report.ts [instances=100000] [runs=5]
 *
 * The pool (synthetic instances with tasks, made over 30 days, outcomes in every band, a
 * rejection per three instances, inject and solver run records, 30 growth rounds) is built
 * once on tmpfs (/dev/shm/envgen-report-bench-N) and reused. Measured, medians of `runs`:
 *   - `envgen report` end to end (gather + render + write), the figure the bars hold to;
 *   - gathering the figures from the pool alone;
 *   - rendering the page from the same figures with the hand-written SVG renderer
 *     (packages/report) and with Vega-Lite compiled and rendered headless by Vega's view
 *     API (`view.toSVG()`), the same charts from the same specs; page sizes of both.
 * Bars: the report written in <= 10 s and <= 5 MB. Exit code 1 when a bar is missed.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { renderReport } from '@envgen/report';
import type { BarChartSpec } from '@envgen/report';
import { gatherReport, runReport } from '../apps/cli/src/report-command.js';
import { fillReportPool, makeSyntheticRounds } from '../apps/cli/src/report-pool.test-support.js';
import { formatTable, median } from './stats.js';

const instances = Number(process.argv[2] ?? 100_000);
const runs = Number(process.argv[3] ?? 5);
const MAX_SECONDS = 10;
const MAX_BYTES = 5 * 1024 * 1024;

const home = `/dev/shm/envgen-report-bench-${instances}`;
const ready = join(home, 'ready');
if (!existsSync(ready)) {
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const started = performance.now();
  console.log(`building a pool of ${instances} synthetic instances in ${home} ...`);
  fillReportPool(home, instances, { rounds: makeSyntheticRounds(30) });
  writeFileSync(ready, '');
  console.log(`built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
const settings = resolveConfig({ env: { HOME: home }, flags: { home } });

/** The same chart as a Vega-Lite spec: one row per (category, series) value, colors fixed per series. */
function toVegaLite(spec: BarChartSpec): vegaLite.TopLevelSpec {
  const values = spec.categories.flatMap((category, index) => spec.series.map((series, order) => ({ category, series: series.name, order, value: series.values[index] ?? 0 })));
  const horizontal = spec.orientation === 'horizontal';
  const grouped = spec.layout === 'grouped';
  const category = { field: 'category', type: 'nominal' as const, sort: [...spec.categories], title: null };
  const value = { field: 'value', type: 'quantitative' as const, stack: grouped ? null : ('zero' as const), title: null, ...(spec.max === undefined ? {} : { scale: { domainMax: spec.max } }) };
  const offset = grouped ? { [horizontal ? 'yOffset' : 'xOffset']: { field: 'series', sort: spec.series.map((series) => series.name) } } : {};
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    description: spec.title,
    width: 640,
    height: horizontal ? Math.max(spec.categories.length, 1) * (grouped ? 8 + spec.series.length * 11 : 24) : 220,
    data: { values },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      [horizontal ? 'y' : 'x']: category,
      [horizontal ? 'x' : 'y']: value,
      color: { field: 'series', type: 'nominal', scale: { domain: spec.series.map((series) => series.name), range: spec.series.map((series) => series.color) }, legend: null },
      order: { field: 'order' },
      ...offset,
    },
  } as vegaLite.TopLevelSpec;
}

/** The page with every chart drawn by Vega: specs collected in a first pass, drawn asynchronously, then put in place. */
async function renderWithVega(input: Awaited<ReturnType<typeof gatherReport>>): Promise<string> {
  const specs: BarChartSpec[] = [];
  const page = renderReport(input, {
    renderChart: (spec) => {
      specs.push(spec);
      return `<!--chart ${specs.length - 1}-->`;
    },
  });
  const svgs = await Promise.all(
    specs.map(async (spec) => {
      const view = new vega.View(vega.parse(vegaLite.compile(toVegaLite(spec)).spec), { renderer: 'none' });
      const svg = await view.toSVG();
      view.finalize();
      return svg;
    }),
  );
  return page.replace(/<!--chart (\d+)-->/g, (_match, index: string) => svgs[Number(index)] ?? '');
}

function time<T>(work: () => T): { seconds: number; value: T } {
  const started = performance.now();
  const value = work();
  return { seconds: (performance.now() - started) / 1000, value };
}

async function timeAsync<T>(work: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { seconds: (performance.now() - started) / 1000, value };
}

const out = join(home, 'report.html');
const whole: number[] = [];
const gather: number[] = [];
const ours: number[] = [];
const withVega: number[] = [];
let bytes = 0;
let oursBytes = 0;
let vegaBytes = 0;
for (let run = 0; run < runs; run += 1) {
  const report = await runReport({ out }, settings, silentLogger);
  whole.push(report.seconds);
  bytes = report.bytes;
  const gathered = await timeAsync(() => gatherReport(settings, silentLogger));
  gather.push(gathered.seconds);
  const hand = time(() => renderReport(gathered.value));
  ours.push(hand.seconds);
  oursBytes = Buffer.byteLength(hand.value);
  const drawn = await timeAsync(() => renderWithVega(gathered.value));
  withVega.push(drawn.seconds);
  vegaBytes = Buffer.byteLength(drawn.value);
}

const mib = (value: number) => `${(value / 1024 / 1024).toFixed(2)} MiB`;
const seconds = (value: number) => `${value.toFixed(3)} s`;
console.log(`\npool of ${instances} instances, ${runs} runs, medians\n`);
console.log(
  formatTable(
    ['measure', 'seconds', 'page size'],
    [
      ['envgen report, end to end', seconds(median(whole)), mib(bytes)],
      ['gather the figures from the pool', seconds(median(gather)), ''],
      ['render: hand-written SVG', seconds(median(ours)), mib(oursBytes)],
      ['render: Vega-Lite + vega view.toSVG()', seconds(median(withVega)), mib(vegaBytes)],
    ],
  ),
);
console.log(`\nVega / hand-written: ${(median(withVega) / median(ours)).toFixed(1)}x the render time, ${(vegaBytes / oursBytes).toFixed(2)}x the page size`);
const met = median(whole) <= MAX_SECONDS && bytes <= MAX_BYTES;
console.log(`bars (written in <= ${MAX_SECONDS} s, <= ${mib(MAX_BYTES)}): ${met ? 'met' : 'MISSED'}`);
if (!met) process.exitCode = 1;
