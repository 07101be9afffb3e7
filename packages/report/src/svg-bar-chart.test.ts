import { describe, expect, it } from 'vitest';
import { renderBarChart } from './svg-bar-chart.js';

interface Mark {
  series: string;
  category: string;
  value: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

function marks(svg: string): Mark[] {
  return [...svg.matchAll(/<rect class="mark" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="[^"]*" data-series="([^"]*)" data-category="([^"]*)" data-value="([^"]*)">/g)].map((match) => ({
    x: Number(match[1]),
    y: Number(match[2]),
    width: Number(match[3]),
    height: Number(match[4]),
    series: match[5] ?? '',
    category: match[6] ?? '',
    value: Number(match[7]),
  }));
}

const series = [
  { name: 'kept', color: '#2e9e5b', values: [3, 0, 5] },
  { name: 'rejected', color: '#d9534f', values: [1, 2, 0] },
];

describe('renderBarChart', () => {
  it('draws one mark per non-zero value, stacked from the axis, with its figure and a tooltip', () => {
    const svg = renderBarChart({ title: 'Yield', categories: ['a', 'b', 'c'], series });
    expect(svg).toMatch(/^<svg class="chart" xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 720 \d+" role="img" aria-label="Yield"/);
    const drawn = marks(svg);
    expect(drawn.map((mark) => [mark.category, mark.series, mark.value])).toEqual([
      ['a', 'kept', 3],
      ['a', 'rejected', 1],
      ['b', 'rejected', 2],
      ['c', 'kept', 5],
    ]);
    const [aKept, aRejected, , cKept] = drawn as [Mark, Mark, Mark, Mark];
    // Stacked: the second series sits on the first; heights are proportional to the values.
    expect(aRejected.y + aRejected.height).toBeCloseTo(aKept.y, 0);
    expect(aKept.height / cKept.height).toBeCloseTo(3 / 5, 1);
    expect(svg).toContain('<title>a · kept: 3</title>');
    // Ticks run to a round number at or above the largest stack (5).
    expect(svg).toMatch(/>5<\/text>/);
  });

  it('puts grouped series side by side and horizontal bars after their labels, with totals', () => {
    const svg = renderBarChart({ title: 'F1', categories: ['agent', 'baseline'], series, layout: 'grouped', orientation: 'horizontal', max: 10, format: (value) => value.toFixed(1) });
    const drawn = marks(svg);
    const [agentKept, agentRejected] = drawn as [Mark, Mark];
    expect(agentKept.x).toBe(agentRejected.x);
    expect(agentRejected.y).toBeGreaterThan(agentKept.y);
    expect(agentKept.width / agentRejected.width).toBeCloseTo(3, 1);
    // The axis reaches the given maximum; the total of a grouped row is its largest bar.
    expect(svg).toMatch(/>10\.0<\/text>/);
    expect(svg).toMatch(/<text class="total"[^>]*>3\.0<\/text>/);
  });

  it('escapes text, clips long labels (the full one in a tooltip) and thins crowded rotated labels', () => {
    const long = `pkg/${'x'.repeat(60)}`;
    const svg = renderBarChart({ title: '<a & "b">', categories: [long, '<script>'], series: [{ name: 's', color: '#000', values: [1, 2] }], orientation: 'horizontal' });
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;script&gt;');
    expect(svg).toContain('aria-label="&lt;a &amp; &quot;b&quot;&gt;"');
    expect(svg).toContain(`<title>${long}</title>${long.slice(0, 33)}…</text>`);
    const days = Array.from({ length: 200 }, (_, index) => `day ${index}`);
    const crowded = renderBarChart({ title: 'days', categories: days, series: [{ name: 's', color: '#000', values: days.map(() => 1) }] });
    expect(marks(crowded)).toHaveLength(200);
    const labels = crowded.match(/<text class="label"/g) ?? [];
    expect(labels.length).toBeLessThan(60);
    expect(labels.length).toBeGreaterThan(20);
  });

  it('draws axes without marks when every value is zero', () => {
    const svg = renderBarChart({ title: 'none', categories: ['a'], series: [{ name: 's', color: '#000', values: [0] }] });
    expect(marks(svg)).toEqual([]);
    expect(svg).toContain('class="grid"');
  });
});
