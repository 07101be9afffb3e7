import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import type { Logger, StrategyFamily } from '@envgen/core';
import { EXPORT_FORMATS, exportPool } from '@envgen/export';
import type { ExportFilter, ExportFormat, ExportResult } from '@envgen/export';
import { BANDS, openPool } from '@envgen/pool';
import type { Band, GroupCount } from '@envgen/pool';
import type { Progress } from './progress.js';

/** The strategy families `--family` accepts. */
export const FAMILY_CHOICES = ['procedural', 'removal', 'history', 'combine', 'llm'] as const satisfies readonly StrategyFamily[];

/** Options of `envgen export`. */
export interface ExportOptions {
  /** Formats to write, in order; each is one streaming pass over the pool. */
  formats: ExportFormat[];
  /** The output directory. */
  out: string;
  repo?: string;
  strategy?: string;
  family?: StrategyFamily;
  /** Only instances in these difficulty bands (after `minAttempts` attempts, default 1). */
  bands?: Band[];
  minAttempts?: number;
  /** hf: rows per Parquet file (default 10 000). */
  shardRows?: number;
}

/** What `envgen export` wrote; `--json` prints exactly this object. */
export interface ExportReport {
  pool: string;
  out: string;
  filter: ExportFilter;
  /** Instances in the pool matching the filter, with a task or not. */
  matching: number;
  /** Instances written by every format (all formats write the same instances). */
  exported: number;
  skipped: ExportResult['skipped'];
  byRepo: GroupCount[];
  byStrategy: GroupCount[];
  byStatementKind: GroupCount[];
  /** One entry per format, in the order asked. */
  formats: Array<Pick<ExportResult, 'format' | 'layout' | 'files' | 'exported' | 'seconds'>>;
  examples: ExportResult['examples'];
}

/** Parses `--band`: a comma-separated list of difficulty bands. */
export function parseBands(value: string): Band[] {
  const bands: Band[] = [];
  for (const name of value.split(',').map((part) => part.trim()).filter(Boolean)) {
    const band = BANDS.find((known) => known === name);
    if (band === undefined) throw new EnvgenError('usage', `unknown band ${JSON.stringify(name)}; use ${BANDS.join(', ')}`);
    if (!bands.includes(band)) bands.push(band);
  }
  if (bands.length === 0) throw new EnvgenError('usage', `--band needs at least one of ${BANDS.join(', ')}`);
  return bands;
}

/** Parses `--format`: a comma-separated list of formats, or `all`. */
export function parseFormats(value: string): ExportFormat[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.includes('all')) return [...EXPORT_FORMATS];
  const formats: ExportFormat[] = [];
  for (const name of names) {
    const format = EXPORT_FORMATS.find((known) => known === name);
    if (format === undefined) throw new EnvgenError('usage', `unknown export format ${JSON.stringify(name)}; use ${EXPORT_FORMATS.join(', ')} or all`);
    if (!formats.includes(format)) formats.push(format);
  }
  if (formats.length === 0) throw new EnvgenError('usage', `--format needs at least one of ${EXPORT_FORMATS.join(', ')} or all`);
  return formats;
}

/**
 * `envgen export`: streams the pool's instances that have a task into each format under
 * `out`. Instances without a task, with a blank statement or with an already exported patch
 * are counted, not written.
 */
export async function runExport(options: ExportOptions, settings: Settings, logger: Logger, progress: Progress): Promise<ExportReport> {
  const filter: ExportFilter = {
    ...(options.repo === undefined ? {} : { repo: options.repo }),
    ...(options.strategy === undefined ? {} : { strategy: options.strategy }),
    ...(options.family === undefined ? {} : { family: options.family }),
    ...(options.bands === undefined ? {} : { bands: options.bands }),
    ...(options.minAttempts === undefined ? {} : { minAttempts: options.minAttempts }),
  };
  const pool = openPool(settings.home, { logger });
  try {
    const results: ExportResult[] = [];
    for (const format of options.formats) {
      results.push(
        await exportPool(pool, {
          format,
          out: options.out,
          filter,
          logger,
          ...(options.shardRows === undefined ? {} : { shardRows: options.shardRows }),
          onProgress: (event) => {
            if (event.kind === 'start') progress.phase(`exporting ${event.format}`, event.total);
            else progress.tick();
          },
        }),
      );
    }
    const [first] = results;
    if (first === undefined) throw new EnvgenError('usage', `--format needs at least one of ${EXPORT_FORMATS.join(', ')}`);
    return {
      pool: pool.dir,
      out: first.out,
      filter,
      // Every match is exported or skipped for one reason (a pool.count would scan the index again).
      matching: first.exported + first.skipped.noTask + first.skipped.emptyStatement + first.skipped.duplicatePatch,
      exported: first.exported,
      skipped: first.skipped,
      byRepo: first.byRepo,
      byStrategy: first.byStrategy,
      byStatementKind: first.byStatementKind,
      formats: results.map(({ format, layout, files, exported, seconds }) => ({ format, layout, files, exported, seconds })),
      examples: first.examples,
    };
  } finally {
    pool.close();
  }
}

function formatCounts(counts: readonly GroupCount[]): string {
  return counts.map(({ key, count }) => `${key} ${count}`).join(' · ');
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** Why nothing was exported, with what to do; `undefined` when something was. */
export function explainEmptyExport(report: ExportReport): string | undefined {
  if (report.exported > 0) return undefined;
  const filtered = [report.filter.repo && `repo ${report.filter.repo}`, report.filter.strategy && `strategy ${report.filter.strategy}`, report.filter.family && `family ${report.filter.family}`, report.filter.bands && `band ${report.filter.bands.join(' or ')}`]
    .filter(Boolean)
    .join(', ');
  if (report.matching === 0) {
    return `nothing exported: no instance${filtered ? ` of ${filtered}` : ''} in the pool at ${report.pool}; add instances with: envgen inject --repo <repo>`;
  }
  if (report.skipped.noTask === report.matching) {
    return `nothing exported: none of the ${plural(report.matching, 'instance')}${filtered ? ` of ${filtered}` : ''} has a task yet; run envgen tasks first`;
  }
  return `nothing exported: of ${plural(report.matching, 'matching instance')}, ${report.skipped.noTask} have no task (run envgen tasks first) and ${report.skipped.emptyStatement} an empty problem statement`;
}

/** The human form of an export report. */
export function formatExportReport(report: ExportReport): string {
  const empty = explainEmptyExport(report);
  if (empty !== undefined) return empty;
  const width = Math.max(...report.formats.map(({ format }) => format.length));
  const lines = report.formats.map(({ format, layout, files, exported, seconds }) => {
    const where = format === 'ssr' ? `${report.out}/${layout}` : files.map((file) => `${report.out}/${file}`).join(', ');
    return `${format.padEnd(width)}  ${plural(exported, 'instance')} in ${seconds.toFixed(1)} s → ${where}`;
  });
  const skipped = [
    report.skipped.noTask > 0 && `${report.skipped.noTask} without a task (run envgen tasks first)`,
    report.skipped.emptyStatement > 0 && `${report.skipped.emptyStatement} with an empty problem statement`,
    report.skipped.duplicatePatch > 0 && `${report.skipped.duplicatePatch} duplicate patch${report.skipped.duplicatePatch === 1 ? '' : 'es'}`,
  ].filter(Boolean);
  return [
    ...lines,
    '',
    `per repo      ${formatCounts(report.byRepo)}`,
    `per strategy  ${formatCounts(report.byStrategy)}`,
    `statements    ${formatCounts(report.byStatementKind)}`,
    `skipped       ${skipped.length === 0 ? 'none' : skipped.join(' · ')}`,
  ].join('\n');
}
