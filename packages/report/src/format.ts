const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML and SVG content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

/** An integer with thousands separators, or a number with up to two decimals (`1,234`, `0.35`). */
export function formatFigure(value: number): string {
  if (Number.isInteger(value)) return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return String(Math.round(value * 100) / 100);
}

/** A fraction as a whole percentage (`0.305` → `31%`). */
export function formatPercent(value: number): string {
  return `${Math.round(value * 100)}%`;
}
