import type { DifficultyBand, SpreadRow } from '@envgen/pool';
import { escapeXml, formatFigure, formatPercent } from './format.js';
import type { FrontierEntry, GrowthRound, InjectRunSummary, ReportInput, SolverRunSummary } from './report-input.js';
import { renderBarChart } from './svg-bar-chart.js';
import type { BarChartSpec, BarSeries } from './svg-bar-chart.js';

/** Band colors: untried grey, too hard red, frontier amber (the curriculum's target), too easy blue. */
const BANDS: ReadonlyArray<{ band: DifficultyBand; field: 'untried' | 'tooHard' | 'frontier' | 'tooEasy'; label: string; color: string }> = [
  { band: 'too-hard', field: 'tooHard', label: 'too hard', color: '#d9534f' },
  { band: 'frontier', field: 'frontier', label: 'frontier', color: '#f0a202' },
  { band: 'too-easy', field: 'tooEasy', label: 'too easy', color: '#3b7dd8' },
  { band: 'untried', field: 'untried', label: 'untried', color: '#b9c2cc' },
];
const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#eeca3b', '#b279a2', '#ff9da6', '#9d755d', '#bab0ac'];
const OTHER_COLOR = '#d5d9de';
/** Most categories a chart shows; the tables beside them list everything. */
const CHART_ROWS = 40;
/** Most runs and rounds a timeline chart shows (the latest). */
const TIMELINE = 60;
const SOLVE_LEVELS = ['file', 'module', 'entity'] as const;

function color(index: number): string {
  return PALETTE[index % PALETTE.length] ?? OTHER_COLOR;
}

function legend(series: readonly BarSeries[]): string {
  if (series.length < 2) return '';
  return `<ul class="legend">${series.map((entry) => `<li><span class="swatch" style="background:${entry.color}"></span>${escapeXml(entry.name)}</li>`).join('')}</ul>`;
}

/** Options of {@link renderReport}. */
export interface RenderReportOptions {
  /** Draws each chart as an SVG string (default {@link renderBarChart}); bench/report.ts plugs Vega in here to compare. */
  renderChart?: (spec: BarChartSpec) => string;
}

/** Draws one chart as an SVG string. */
type Draw = (spec: BarChartSpec) => string;

function figure(draw: Draw, caption: string, spec: BarChartSpec, note = ''): string {
  return `<figure class="card"><figcaption>${escapeXml(caption)}</figcaption>${legend(spec.series)}${draw(spec)}${note === '' ? '' : `<p class="note">${escapeXml(note)}</p>`}</figure>`;
}

function empty(caption: string, message: string): string {
  return `<figure class="card"><figcaption>${escapeXml(caption)}</figcaption><p class="empty">${escapeXml(message)}</p></figure>`;
}

function section(id: string, title: string, lead: string, body: string[]): string {
  return `<section id="${id}"><h2>${escapeXml(title)}</h2><p class="lead">${escapeXml(lead)}</p><div class="grid">${body.join('')}</div></section>`;
}

function shortTime(iso: string): string {
  return iso.replace('T', ' ').slice(0, 16);
}

function fixed(value: number | null, digits: number): string {
  return value === null ? '–' : value.toFixed(digits);
}

function tiles(total: SpreadRow): string {
  const tried = total.instances - total.untried;
  const entries: Array<[string, string, string]> = [
    ['instances', formatFigure(total.instances), 'in the pool'],
    ['tried', formatFigure(tried), 'with at least one attempt'],
    ['frontier', formatFigure(total.frontier), tried === 0 ? 'of the tried instances' : `${formatPercent(total.frontier / tried)} of the tried instances`],
    ['attempts', formatFigure(total.attempts), 'scored rollouts'],
    ['mean reward', fixed(total.meanReward, 3), 'of 3 (file + module + entity F1)'],
    ['solve rate', total.meanSolveRate === null ? '–' : formatPercent(total.meanSolveRate), 'mean over tried instances'],
  ];
  return `<div class="tiles">${entries
    .map(([label, value, detail]) => `<div class="tile" data-tile="${escapeXml(label)}"><div class="tile-value">${escapeXml(value)}</div><div class="tile-label">${escapeXml(label)}</div><div class="tile-detail">${escapeXml(detail)}</div></div>`)
    .join('')}</div>`;
}

function topRows(rows: readonly SpreadRow[]): { rows: SpreadRow[]; note: string } {
  return rows.length <= CHART_ROWS ? { rows: [...rows], note: '' } : { rows: rows.slice(0, CHART_ROWS), note: `the ${CHART_ROWS} largest of ${rows.length}; the table lists all` };
}

function bandChart(draw: Draw, title: string, rows: readonly SpreadRow[]): string {
  if (rows.length === 0) return empty(title, 'no instances yet');
  const shown = topRows(rows);
  return figure(
    draw,
    title,
    {
      title,
      orientation: 'horizontal',
      categories: shown.rows.map((row) => row.key),
      series: BANDS.map(({ label, field, color: fill }) => ({ name: label, color: fill, values: shown.rows.map((row) => row[field]) })),
    },
    shown.note,
  );
}

/** Value columns of the spread tables: the `pool stats --json` field each shows, and how. */
const SPREAD_COLUMNS: ReadonlyArray<{ field: keyof SpreadRow; title: string; show: (row: SpreadRow) => string }> = [
  { field: 'instances', title: 'instances', show: (row) => formatFigure(row.instances) },
  { field: 'untried', title: 'untried', show: (row) => formatFigure(row.untried) },
  { field: 'tooHard', title: 'too hard', show: (row) => formatFigure(row.tooHard) },
  { field: 'frontier', title: 'frontier', show: (row) => formatFigure(row.frontier) },
  { field: 'tooEasy', title: 'too easy', show: (row) => formatFigure(row.tooEasy) },
  { field: 'attempts', title: 'attempts', show: (row) => formatFigure(row.attempts) },
  { field: 'solved', title: 'solved', show: (row) => formatFigure(row.solved) },
  { field: 'meanReward', title: 'mean reward', show: (row) => fixed(row.meanReward, 3) },
  { field: 'meanSolveRate', title: 'solve rate', show: (row) => fixed(row.meanSolveRate, 3) },
];

/** A spread table; every cell carries the exact figure (`data-value`) of `envgen pool stats --json` it shows. */
function spreadTable(title: string, group: 'byRepo' | 'byStrategy' | 'total', rows: readonly SpreadRow[]): string {
  const head = `<tr><th>${escapeXml(title)}</th>${SPREAD_COLUMNS.map((column) => `<th>${column.title}</th>`).join('')}</tr>`;
  const body = rows
    .map(
      (row) =>
        `<tr data-group="${group}" data-key="${escapeXml(row.key)}"><td>${escapeXml(row.key)}</td>${SPREAD_COLUMNS.map(
          (column) => `<td class="num" data-field="${column.field}" data-value="${row[column.field] ?? 'null'}">${column.show(row)}</td>`,
        ).join('')}</tr>`,
    )
    .join('');
  return `<table class="figures"><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

function difficultySection(input: ReportInput, draw: Draw): string {
  const { spread } = input;
  return section('difficulty', 'Difficulty', 'Where the instances stand for the current solver: never solved (too hard), sometimes solved (the frontier), always solved (too easy), or not tried yet. The same figures as envgen pool stats --json.', [
    bandChart(draw, 'Bands per repo', spread.byRepo),
    bandChart(draw, 'Bands per strategy', spread.byStrategy),
    `<div class="card wide">${spreadTable('repo', 'byRepo', spread.byRepo)}${spreadTable('strategy', 'byStrategy', spread.byStrategy)}${spreadTable('', 'total', [spread.total])}</div>`,
  ]);
}

function cumulative(periods: readonly string[], rows: ReportInput['growth']['rows'], keyOf: (row: ReportInput['growth']['rows'][number]) => string, keys: readonly string[]): number[][] {
  const index = new Map(periods.map((period, position) => [period, position]));
  const added = keys.map(() => periods.map(() => 0));
  for (const row of rows) {
    const series = added[keys.indexOf(keyOf(row))];
    const at = index.get(row.period);
    if (series !== undefined && at !== undefined) series[at] = (series[at] ?? 0) + row.count;
  }
  return added.map((values) => {
    let sum = 0;
    return values.map((value) => (sum += value));
  });
}

function growthSection(input: ReportInput, draw: Draw): string {
  const { rows, unit } = input.growth;
  if (rows.length === 0) return section('growth', 'Pool size over time', 'Instances in the pool by the time they were made.', [empty('Pool size', 'the pool is empty; add instances with: envgen inject --repo <repo>')]);
  const periods = [...new Set(rows.map((row) => row.period))].sort();
  const families = [...new Set(rows.map((row) => row.family))].sort();
  const byFamily = cumulative(periods, rows, (row) => row.family, families);
  const bands = BANDS.map((entry) => entry.band);
  const byBand = cumulative(periods, rows, (row) => row.band, bands);
  const categories = periods.map((period) => period.replace('T', ' '));
  return section('growth', 'Pool size over time', `Instances in the pool at the end of each ${unit}, by strategy family and by the band each instance stands in now.`, [
    figure(draw, 'By strategy family', { title: 'Pool size by strategy family', categories, series: families.map((family, index) => ({ name: family, color: color(index), values: byFamily[index] ?? [] })) }),
    figure(draw, 'By band (as of now)', { title: 'Pool size by band', categories, series: BANDS.map((entry, index) => ({ name: entry.label, color: entry.color, values: byBand[index] ?? [] })) }),
  ]);
}

interface Tally {
  tried: number;
  kept: number;
  known: number;
  rejected: number;
}

function addTally(into: Map<string, Tally>, key: string, tally: Tally): void {
  const sum = into.get(key) ?? { tried: 0, kept: 0, known: 0, rejected: 0 };
  sum.tried += tally.tried;
  sum.kept += tally.kept;
  sum.known += tally.known;
  sum.rejected += tally.rejected;
  into.set(key, sum);
}

function yieldChart(draw: Draw, title: string, tallies: Map<string, Tally>): string {
  const entries = [...tallies].sort(([a, x], [b, y]) => y.tried - x.tried || (a < b ? -1 : 1)).slice(0, CHART_ROWS);
  const pick = (field: keyof Tally) => entries.map(([, tally]) => tally[field]);
  return figure(draw, title, {
    title,
    orientation: 'horizontal',
    categories: entries.map(([key, tally]) => `${key} (${tally.tried === 0 ? '–' : formatPercent((tally.kept + tally.known) / tally.tried)})`),
    series: [
      { name: 'kept', color: '#2e9e5b', values: pick('kept') },
      { name: 'already in the pool', color: '#9fd6b4', values: pick('known') },
      { name: 'rejected', color: '#d9534f', values: pick('rejected') },
    ],
  }, 'candidates validated, summed over the recorded inject runs; yield in brackets');
}

function rejectionChart(input: ReportInput, draw: Draw): string {
  const title = 'Rejection reasons per repo';
  if (input.rejections.length === 0) return empty(title, 'no rejected candidate remembered yet');
  const reasons = [...new Set(input.rejections.map((row) => row.reason))];
  const totals = new Map<string, number>();
  for (const row of input.rejections) totals.set(row.repo, (totals.get(row.repo) ?? 0) + row.count);
  const repos = [...totals].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).slice(0, CHART_ROWS).map(([repo]) => repo);
  const series = reasons.map((reason, index) => ({
    name: reason,
    color: color(index + 3),
    values: repos.map((repo) => input.rejections.find((row) => row.repo === repo && row.reason === reason)?.count ?? 0),
  }));
  return figure(draw, title, { title, orientation: 'horizontal', categories: repos, series }, 'every candidate the pool remembers as rejected, with why');
}

function yieldSection(input: ReportInput, draw: Draw): string {
  const byStrategy = new Map<string, Tally>();
  const byRepo = new Map<string, Tally>();
  for (const run of input.injectRuns) {
    for (const [strategy, tally] of Object.entries(run.byStrategy)) addTally(byStrategy, strategy, tally);
    addTally(byRepo, run.repo, { tried: run.tried, kept: run.kept, known: run.known, rejected: Object.values(run.rejected).reduce((sum, count) => sum + count, 0) });
  }
  const noRuns = 'no inject run recorded yet (envgen inject records each run)';
  return section('yield', 'Yield', 'What share of the validated candidates became instances, per strategy and per repo, and why the others were rejected.', [
    byStrategy.size === 0 ? empty('Yield per strategy', noRuns) : yieldChart(draw, 'Yield per strategy', byStrategy),
    byRepo.size === 0 ? empty('Yield per repo', noRuns) : yieldChart(draw, 'Yield per repo', byRepo),
    rejectionChart(input, draw),
  ]);
}

function solverLabel(run: SolverRunSummary): string {
  return run.model === null ? run.solver : `${run.solver} · ${run.model}`;
}

function solversSection(input: ReportInput, draw: Draw): string {
  const bins = input.solveRates.length;
  const tried = input.solveRates.reduce((sum, count) => sum + count, 0);
  const histogram =
    tried === 0
      ? empty('Solve rate distribution', 'no outcomes recorded yet: run envgen run, or score rollouts through envgen serve')
      : figure(draw, 'Solve rate distribution', {
          title: 'Tried instances per solve rate',
          categories: input.solveRates.map((_count, bin) => `${Math.round((100 * bin) / bins)}–${Math.round((100 * (bin + 1)) / bins)}%`),
          series: [{ name: 'instances', color: '#4c78a8', values: input.solveRates }],
        }, `${formatFigure(tried)} tried instances; 0% is too hard, 100% too easy`);
  const groups = new Map<string, { scored: number; runs: number; sums: Record<(typeof SOLVE_LEVELS)[number], number> }>();
  for (const run of input.solverRuns) {
    if (run.levels === null || run.scored === 0) continue;
    const group = groups.get(solverLabel(run)) ?? { scored: 0, runs: 0, sums: { file: 0, module: 0, entity: 0 } };
    group.runs += 1;
    group.scored += run.scored;
    for (const level of SOLVE_LEVELS) group.sums[level] += run.levels[level] * run.scored;
    groups.set(solverLabel(run), group);
  }
  const solvers = [...groups.keys()].sort();
  const levels =
    solvers.length === 0
      ? empty('Reward per level', 'no solver run recorded yet (envgen run records each run)')
      : figure(draw, 'Reward per level', {
          title: 'Mean F1 per localization level, per solver',
          orientation: 'horizontal',
          layout: 'grouped',
          max: 1,
          format: (value) => value.toFixed(2),
          categories: solvers,
          series: SOLVE_LEVELS.map((level, index) => ({ name: `${level} F1`, color: color(index), values: solvers.map((solver) => {
            const group = groups.get(solver);
            return group === undefined ? 0 : group.sums[level] / group.scored;
          }) })),
        }, `over ${solvers.map((solver) => `${formatFigure(groups.get(solver)?.scored ?? 0)} scored rollouts of ${solver}`).join(', ')}`);
  return section('solvers', 'Solvers', 'How hard the pool is for the solvers that ran on it.', [histogram, levels]);
}

function roundsCharts(rounds: readonly GrowthRound[], draw: Draw): string[] {
  const shown = rounds.slice(-TIMELINE);
  const categories = shown.map((round) => round.id);
  const totals = new Map<string, number>();
  for (const round of shown) for (const arm of round.plan) totals.set(`${arm.repo} · ${arm.strategy}`, (totals.get(`${arm.repo} · ${arm.strategy}`) ?? 0) + arm.candidates);
  const arms = [...totals].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).map(([arm]) => arm);
  const named = arms.slice(0, PALETTE.length - 1);
  const allocation = (keep: (arm: string) => boolean) => shown.map((round) => round.plan.filter((arm) => keep(`${arm.repo} · ${arm.strategy}`)).reduce((sum, arm) => sum + arm.candidates, 0));
  const series: BarSeries[] = named.map((arm, index) => ({ name: arm, color: color(index), values: allocation((name) => name === arm) }));
  if (arms.length > named.length) series.push({ name: 'other arms', color: OTHER_COLOR, values: allocation((name) => !named.includes(name)) });
  const latest = shown.at(-1);
  const reasons = latest === undefined ? '' : `<div class="card wide"><h3>Plan of round ${escapeXml(latest.id)} (${escapeXml(shortTime(latest.started))})</h3><table><thead><tr><th>repo</th><th>strategy</th><th>candidates</th><th>why</th></tr></thead><tbody>${latest.plan
    .map((arm) => `<tr><td>${escapeXml(arm.repo)}</td><td>${escapeXml(arm.strategy)}</td><td class="num">${formatFigure(arm.candidates)}</td><td>${escapeXml(arm.reason)}</td></tr>`)
    .join('')}</tbody></table></div>`;
  return [
    figure(draw, 'Allocation per arm', { title: 'Candidates per arm, per round', categories, series }),
    figure(draw, 'Instances gained', { title: 'Candidates and kept instances per round', layout: 'grouped', categories, series: [
      { name: 'candidates', color: '#b9c2cc', values: shown.map((round) => round.candidates) },
      { name: 'kept', color: '#2e9e5b', values: shown.map((round) => round.kept) },
    ] }),
    figure(draw, 'Seconds per kept instance', { title: 'Seconds per kept instance, per round', categories, series: [{ name: 's per kept', color: '#4c78a8', values: shown.map((round) => round.secondsPerKept ?? 0) }], format: (value) => value.toFixed(1) }),
    reasons,
  ];
}

function roundsSection(input: ReportInput, draw: Draw): string {
  const lead = 'What each growth round planned per (repo, strategy) arm, what it gained, and at what cost.';
  const { rounds } = input;
  if (rounds.length === 0) return section('rounds', 'Growth rounds', lead, [empty('Growth rounds', 'no growth rounds yet')]);
  return section('rounds', 'Growth rounds', lead, roundsCharts(rounds, draw));
}

function runLabel(run: InjectRunSummary): string {
  return `${shortTime(run.finishedAt)} ${run.repo}`;
}

function validationSection(input: ReportInput, draw: Draw): string {
  const lead = 'Wall seconds per kept instance of each inject run (validation, weakening, checks and the pool), latest last.';
  if (input.injectRuns.length === 0) return section('validation', 'Validation speed', lead, [empty('Seconds per kept instance', 'no inject run recorded yet (envgen inject records each run)')]);
  const shown = input.injectRuns.slice(-TIMELINE);
  const rows = shown
    .slice(-20)
    .reverse()
    .map(
      (run) =>
        `<tr><td>${escapeXml(shortTime(run.finishedAt))}</td><td>${escapeXml(run.repo)}</td><td class="num">${run.seed}</td><td class="num">${formatFigure(run.tried)}</td><td class="num">${formatFigure(run.kept)}</td><td class="num">${run.seconds.toFixed(1)}</td><td class="num">${fixed(run.secondsPerKept, 2)}</td></tr>`,
    )
    .join('');
  return section('validation', 'Validation speed', lead, [
    figure(draw, 'Seconds per kept instance', {
      title: 'Seconds per kept instance, per inject run',
      categories: shown.map(runLabel),
      series: [{ name: 's per kept', color: '#4c78a8', values: shown.map((run) => run.secondsPerKept ?? 0) }],
      format: (value) => value.toFixed(2),
    }, shown.length < input.injectRuns.length ? `the latest ${shown.length} of ${input.injectRuns.length} runs` : ''),
    `<div class="card"><h3>Latest runs</h3><table><thead><tr><th>finished</th><th>repo</th><th>seed</th><th>tried</th><th>kept</th><th>s</th><th>s per kept</th></tr></thead><tbody>${rows}</tbody></table></div>`,
  ]);
}

function frontierItem(entry: FrontierEntry): string {
  return `<details class="instance" data-instance="${escapeXml(entry.instanceId)}"><summary><span class="rate">${formatPercent(entry.solveRate)}</span> <code>${escapeXml(entry.instanceId)}</code> <span class="meta">${escapeXml(entry.strategy)} · ${formatFigure(entry.attempts)} attempts · mean reward ${entry.meanReward.toFixed(2)}</span></summary><pre>${escapeXml(entry.show)}</pre></details>`;
}

function frontierSection(input: ReportInput): string {
  const { total, shown } = input.frontier;
  const lead = 'Instances the solvers sometimes solve, hardest first (lowest solve rate, then most attempts); open one to see what envgen show prints.';
  if (shown.length === 0) return section('frontier', 'Frontier', lead, [empty('Frontier instances', 'no instance on the frontier yet')]);
  const more = total > shown.length ? `<p class="note">the hardest ${shown.length} of ${formatFigure(total)}; list them all with envgen pool list</p>` : '';
  return section('frontier', 'Frontier', lead, [`<div class="card wide">${shown.map(frontierItem).join('')}${more}</div>`]);
}

const STYLE = `
:root{color-scheme:light;--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#f5f7fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
header{background:#102a43;color:#f0f4f8;padding:20px 32px}
header h1{margin:0;font-size:22px;font-weight:600}
header p{margin:4px 0 0;color:#bcccdc;font-size:13px}
nav{display:flex;gap:16px;flex-wrap:wrap;margin-top:12px}
nav a{color:#9fb3c8;text-decoration:none;font-size:13px}
main{max-width:1480px;margin:0 auto;padding:20px 32px 48px}
section{margin-top:28px}
h2{font-size:18px;margin:0 0 2px}
h3{font-size:14px;margin:0 0 8px}
.lead{margin:0 0 12px;color:var(--muted)}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px}
.tile{background:#fff;border-radius:8px;padding:14px 16px;box-shadow:0 1px 2px rgba(16,42,67,.08)}
.tile-value{font-size:28px;font-weight:600}
.tile[data-tile=frontier] .tile-value{color:#c77d00}
.tile-label{font-weight:600;text-transform:uppercase;font-size:11px;letter-spacing:.06em;color:var(--muted)}
.tile-detail{font-size:12px;color:var(--muted)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:16px}
.card{background:#fff;border-radius:8px;padding:14px 16px;margin:0;box-shadow:0 1px 2px rgba(16,42,67,.08);min-width:0}
.wide{grid-column:1/-1;overflow-x:auto}
figcaption{font-weight:600;margin-bottom:4px}
svg.chart{width:100%;height:auto;display:block}
svg .grid{stroke:var(--line)}
svg .axis{stroke:#9aa5b1}
svg text{fill:var(--muted);font-family:inherit}
svg .label{fill:var(--ink)}
svg .total{fill:var(--ink);font-weight:600}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 14px;margin:0 0 6px;padding:0;font-size:12px;color:var(--muted)}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.note{margin:6px 0 0;font-size:12px;color:var(--muted)}
.empty{color:var(--muted);font-style:italic;margin:24px 0;text-align:center}
table{border-collapse:collapse;width:100%;font-size:13px;margin-bottom:14px}
th{text-align:left;font-weight:600;color:var(--muted);border-bottom:1px solid var(--line);padding:4px 8px;white-space:nowrap}
td{border-bottom:1px solid var(--line);padding:4px 8px}
td.num,th:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
tr[data-group=total] td{font-weight:600}
details.instance{border-bottom:1px solid var(--line);padding:6px 0}
details.instance summary{cursor:pointer}
.rate{display:inline-block;min-width:44px;font-weight:600;color:#c77d00}
.meta{color:var(--muted);font-size:12px}
pre{background:#f5f7fa;border-radius:6px;padding:10px;overflow-x:auto;font-size:12px;white-space:pre-wrap}
`;

/** No script, no request: everything the page shows is inside it. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/**
 * The pool report as one self-contained HTML page: figures, tables and static SVG charts,
 * no script and a content security policy that forbids every request, so it opens from a
 * disk or a CI artifact exactly as it was written.
 */
export function renderReport(input: ReportInput, options: RenderReportOptions = {}): string {
  const draw = options.renderChart ?? renderBarChart;
  const sections: Array<[string, string, (input: ReportInput, draw: Draw) => string]> = [
    ['difficulty', 'Difficulty', difficultySection],
    ['growth', 'Pool size', growthSection],
    ['yield', 'Yield', yieldSection],
    ['solvers', 'Solvers', solversSection],
    ['rounds', 'Growth rounds', roundsSection],
    ['validation', 'Validation speed', validationSection],
    ['frontier', 'Frontier', frontierSection],
  ];
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>envgen pool report · ${escapeXml(shortTime(input.generatedAt))}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<header><h1>envgen pool report</h1><p>${escapeXml(input.pool)} · made ${escapeXml(shortTime(input.generatedAt))} UTC</p><nav>${sections.map(([id, title]) => `<a href="#${id}">${title}</a>`).join('')}</nav></header>`,
    `<main>${tiles(input.spread.total)}${sections.map(([, , render]) => render(input, draw)).join('')}</main>`,
    '</body></html>',
  ].join('\n');
}
