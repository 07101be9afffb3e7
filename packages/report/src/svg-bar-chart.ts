import { escapeXml, formatFigure } from './format.js';

/** One colored series of a bar chart: a value per category. */
export interface BarSeries {
  name: string;
  color: string;
  values: readonly number[];
}

/** A bar chart: categories along one axis, one or more series stacked or side by side. */
export interface BarChartSpec {
  /** The chart's accessible name (the svg's `<title>`). */
  title: string;
  categories: readonly string[];
  series: readonly BarSeries[];
  /** Default `stacked`. */
  layout?: 'stacked' | 'grouped';
  /** `vertical` bars rise from a category axis at the bottom (default); `horizontal` bars grow right from labels. */
  orientation?: 'vertical' | 'horizontal';
  /** Formats the axis ticks, the totals and the tooltips (default {@link formatFigure}). */
  format?: (value: number) => string;
  /** The value axis reaches at least this (e.g. 1 for rates). */
  max?: number;
}

const WIDTH = 720;
const FONT = 11;
/** Average glyph width of the 11 px sans-serif font, to size label margins without a text engine. */
const GLYPH = 6.2;
const MAX_LABEL = 34;

/** A step of 1, 2 or 5 times a power of ten giving about `count` ticks up to `max`. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
}

function ticksUpTo(max: number): { top: number; ticks: number[] } {
  if (max <= 0) return { top: 1, ticks: [0, 1] };
  const step = niceStep(max, 5);
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let tick = 0; tick <= top + step / 2; tick += step) ticks.push(Number(tick.toPrecision(12)));
  return { top, ticks };
}

function clip(label: string): string {
  return label.length <= MAX_LABEL ? label : `${label.slice(0, MAX_LABEL - 1)}…`;
}

function round(value: number): string {
  return String(Math.round(value * 10) / 10);
}

interface Bar {
  category: number;
  series: number;
  /** Where the bar starts and ends on the value axis. */
  from: number;
  to: number;
  value: number;
}

function layoutBars(spec: BarChartSpec): { bars: Bar[]; totals: number[] } {
  const bars: Bar[] = [];
  const totals = spec.categories.map(() => 0);
  spec.categories.forEach((_category, category) => {
    let base = 0;
    spec.series.forEach((series, index) => {
      const value = series.values[category] ?? 0;
      if (spec.layout === 'grouped') {
        totals[category] = Math.max(totals[category] ?? 0, value);
        if (value > 0) bars.push({ category, series: index, from: 0, to: value, value });
        return;
      }
      totals[category] = (totals[category] ?? 0) + value;
      if (value > 0) bars.push({ category, series: index, from: base, to: base + value, value });
      base += value;
    });
  });
  return { bars, totals };
}

function markTitle(spec: BarChartSpec, bar: Bar, format: (value: number) => string): string {
  const series = spec.series[bar.series];
  const name = spec.series.length > 1 && series ? ` · ${series.name}` : '';
  return `${spec.categories[bar.category] ?? ''}${name}: ${format(bar.value)}`;
}

function rect(spec: BarChartSpec, bar: Bar, format: (value: number) => string, x: number, y: number, width: number, height: number): string {
  const series = spec.series[bar.series];
  return (
    `<rect class="mark" x="${round(x)}" y="${round(y)}" width="${round(Math.max(width, 0.5))}" height="${round(Math.max(height, 0.5))}" fill="${series?.color ?? '#888'}"` +
    ` data-series="${escapeXml(series?.name ?? '')}" data-category="${escapeXml(spec.categories[bar.category] ?? '')}" data-value="${bar.value}">` +
    `<title>${escapeXml(markTitle(spec, bar, format))}</title></rect>`
  );
}

function svg(spec: BarChartSpec, height: number, body: string[]): string {
  return (
    `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${round(height)}" role="img" aria-label="${escapeXml(spec.title)}" font-size="${FONT}">` +
    `<title>${escapeXml(spec.title)}</title>${body.join('')}</svg>`
  );
}

function renderHorizontal(spec: BarChartSpec, format: (value: number) => string): string {
  const { bars, totals } = layoutBars(spec);
  const { top, ticks } = ticksUpTo(Math.max(spec.max ?? 0, ...totals));
  const longest = Math.max(0, ...spec.categories.map((category) => clip(category).length));
  const left = Math.ceil(longest * GLYPH) + 12;
  const right = 64;
  const plot = WIDTH - left - right;
  const grouped = spec.layout === 'grouped';
  const row = grouped ? 8 + spec.series.length * 11 : 24;
  const thick = grouped ? 10 : 16;
  const header = 6;
  const height = header + spec.categories.length * row + 22;
  const x = (value: number): number => left + (value / top) * plot;
  const body: string[] = [];
  for (const tick of ticks) {
    body.push(`<line class="grid" x1="${round(x(tick))}" x2="${round(x(tick))}" y1="${header}" y2="${round(height - 18)}"/>`);
    body.push(`<text class="tick" x="${round(x(tick))}" y="${round(height - 5)}" text-anchor="middle">${escapeXml(format(tick))}</text>`);
  }
  spec.categories.forEach((category, index) => {
    const middle = header + index * row + row / 2;
    body.push(`<text class="label" x="${left - 8}" y="${round(middle + FONT / 3)}" text-anchor="end"><title>${escapeXml(category)}</title>${escapeXml(clip(category))}</text>`);
    body.push(`<text class="total" x="${round(x(totals[index] ?? 0) + 6)}" y="${round(middle + FONT / 3)}">${escapeXml(format(totals[index] ?? 0))}</text>`);
  });
  for (const bar of bars) {
    const rowTop = header + bar.category * row;
    const y = grouped ? rowTop + 4 + bar.series * 11 : rowTop + (row - thick) / 2;
    body.push(rect(spec, bar, format, x(bar.from), y, x(bar.to) - x(bar.from), thick));
  }
  return svg(spec, height, body);
}

function renderVertical(spec: BarChartSpec, format: (value: number) => string): string {
  const { bars, totals } = layoutBars(spec);
  const { top, ticks } = ticksUpTo(Math.max(spec.max ?? 0, ...totals));
  const left = Math.ceil(Math.max(...ticks.map((tick) => format(tick).length)) * GLYPH) + 12;
  const count = Math.max(spec.categories.length, 1);
  const band = (WIDTH - left - 12) / count;
  const longest = Math.max(0, ...spec.categories.map((category) => clip(category).length));
  const rotate = longest * GLYPH > band - 4;
  // Rotated labels 14 px apart at least: every `every`-th category is labelled.
  const every = rotate ? Math.max(1, Math.ceil(14 / band)) : 1;
  const bottom = rotate ? Math.ceil(longest * GLYPH * 0.72) + 14 : 22;
  const plotTop = 10;
  const plotBottom = 220;
  const height = plotBottom + bottom;
  const y = (value: number): number => plotBottom - (value / top) * (plotBottom - plotTop);
  const grouped = spec.layout === 'grouped';
  const barWidth = grouped ? (band * 0.8) / Math.max(spec.series.length, 1) : Math.min(band * 0.8, 48);
  const body: string[] = [];
  for (const tick of ticks) {
    body.push(`<line class="grid" x1="${left}" x2="${WIDTH - 12}" y1="${round(y(tick))}" y2="${round(y(tick))}"/>`);
    body.push(`<text class="tick" x="${left - 6}" y="${round(y(tick) + FONT / 3)}" text-anchor="end">${escapeXml(format(tick))}</text>`);
  }
  spec.categories.forEach((category, index) => {
    if (index % every !== 0) return;
    const middle = left + index * band + band / 2;
    const text = escapeXml(clip(category));
    body.push(
      rotate
        ? `<text class="label" transform="translate(${round(middle + 3)},${plotBottom + 8}) rotate(-45)" text-anchor="end"><title>${escapeXml(category)}</title>${text}</text>`
        : `<text class="label" x="${round(middle)}" y="${plotBottom + 15}" text-anchor="middle"><title>${escapeXml(category)}</title>${text}</text>`,
    );
  });
  for (const bar of bars) {
    const start = left + bar.category * band + (grouped ? band * 0.1 + bar.series * barWidth : (band - barWidth) / 2);
    body.push(rect(spec, bar, format, start, y(bar.to), barWidth, y(bar.from) - y(bar.to)));
  }
  body.push(`<line class="axis" x1="${left}" x2="${WIDTH - 12}" y1="${plotBottom}" y2="${plotBottom}"/>`);
  return svg(spec, height, body);
}

/**
 * Renders a bar chart as a static, self-contained SVG string: grid, ticks, labels and one
 * `rect.mark` per non-zero value, each carrying its series, category and value as data
 * attributes and a `<title>` tooltip. No fonts, scripts or links outside it.
 */
export function renderBarChart(spec: BarChartSpec): string {
  const format = spec.format ?? formatFigure;
  return spec.orientation === 'horizontal' ? renderHorizontal(spec, format) : renderVertical(spec, format);
}
