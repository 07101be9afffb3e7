import { existsSync, mkdirSync, opendirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { BUNDLE_FILE_NAMES, EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { GroupCount, Pool } from '@envgen/pool';
import { DATASET_CARD_MARKER, formatDatasetCard } from './dataset-card.js';
import { isShardName, writeHfShards } from './hf-writer.js';
import type { HfShardOptions } from './hf-writer.js';
import { createJsonlWriter } from './jsonl-writer.js';
import { toCodescoutRow, toSsrMetadata, toSwesmithRow } from './rows.js';
import type { ExportEntry } from './rows.js';
import { selectEntries, toGroupCounts } from './select-entries.js';
import type { ExportFilter, Selection } from './select-entries.js';
import { makeStagingPath, replacePath, sweepStaging } from './staging.js';

/** The dataset formats `envgen export` writes. */
export const EXPORT_FORMATS = ['swesmith', 'codescout', 'ssr', 'hf'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Where each format puts its rows inside the output directory. */
export const EXPORT_LAYOUTS: Record<ExportFormat, string> = {
  swesmith: 'swesmith.jsonl',
  codescout: 'codescout.jsonl',
  ssr: '<instance_id>/{bug_inject.diff,test_weaken.diff,test_files.txt,test_script.sh,test_parser.py,metadata.json}',
  hf: 'data/train-XXXXX-of-NNNNN.parquet + README.md',
};

/** Progress of one export: the number of candidates, then one event per instance read. */
export type ExportProgressEvent = { kind: 'start'; format: ExportFormat; total: number } | { kind: 'row' };

/** Options of {@link exportPool}. */
export interface ExportPoolOptions extends HfShardOptions {
  format: ExportFormat;
  /** The output directory (created if needed). Other formats' files in it are left alone. */
  out: string;
  filter?: ExportFilter;
  logger?: Logger;
  onProgress?: (event: ExportProgressEvent) => void;
}

/** What one export wrote and what it left out. */
export interface ExportResult {
  format: ExportFormat;
  /** Absolute output directory. */
  out: string;
  /** Where the rows are, relative to `out` (see {@link EXPORT_LAYOUTS}). */
  layout: string;
  /** Files written, relative to `out` (for ssr: none listed, one directory per exported instance). Empty when nothing was exported. */
  files: string[];
  /** Instances written. */
  exported: number;
  /** Instances matching the filter that were not written, per reason. */
  skipped: {
    /** No task yet: run `envgen tasks` first. */
    noTask: number;
    /** A blank problem statement. */
    emptyStatement: number;
    /** The same patch as an earlier instance. */
    duplicatePatch: number;
  };
  /** Up to ten skipped ids per reason. */
  examples: { emptyStatement: string[]; duplicatePatch: string[] };
  byRepo: GroupCount[];
  byStrategy: GroupCount[];
  byStatementKind: GroupCount[];
  seconds: number;
}

/** Rows between two yields to the event loop, so a progress bar can redraw during a long export. */
const YIELD_EVERY = 512;

/** Yields the entries, reporting each one and pausing now and then for the event loop. */
async function* paced(entries: Iterable<ExportEntry>, onProgress: ExportPoolOptions['onProgress']): AsyncGenerator<ExportEntry> {
  let count = 0;
  for (const entry of entries) {
    yield entry;
    onProgress?.({ kind: 'row' });
    count += 1;
    if (count % YIELD_EVERY === 0) await yieldToEventLoop();
  }
}

/** Reports each entry as it is read (the hf writer pulls synchronously, a row group at a time). */
function* reported(entries: Iterable<ExportEntry>, onProgress: ExportPoolOptions['onProgress']): Generator<ExportEntry> {
  for (const entry of entries) {
    yield entry;
    onProgress?.({ kind: 'row' });
  }
}

async function writeJsonl(selection: Selection, staging: string, toRow: (entry: ExportEntry) => unknown, onProgress: ExportPoolOptions['onProgress']): Promise<void> {
  const writer = createJsonlWriter(staging);
  try {
    for await (const entry of paced(selection.entries, onProgress)) writer.write(toRow(entry));
  } finally {
    writer.close();
  }
}

async function writeSsr(pool: Pool, selection: Selection, staging: string, onProgress: ExportPoolOptions['onProgress']): Promise<void> {
  mkdirSync(staging);
  for await (const entry of paced(selection.entries, onProgress)) {
    const id = entry.instance.instance_id;
    const bundle = pool.readBundle(id);
    const dir = join(staging, id);
    mkdirSync(dir);
    for (const name of BUNDLE_FILE_NAMES) writeFileSync(join(dir, name), bundle[name], name === 'test_script.sh' ? { mode: 0o755 } : {});
    writeFileSync(join(dir, 'metadata.json'), `${JSON.stringify(toSsrMetadata(entry), null, 2)}\n`);
  }
}

/** Moves every instance directory of a finished ssr staging directory into `out`, replacing older copies. */
function commitSsr(staging: string, out: string): void {
  const dir = opendirSync(staging);
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) replacePath(join(staging, entry.name), join(out, entry.name), out);
  } finally {
    dir.closeSync();
  }
}

/** Refuses to replace a README.md or data/ that an hf export did not write (the user's own files). */
function assertHfReplaceable(out: string): void {
  const card = join(out, 'README.md');
  if (existsSync(card) && !readFileSync(card, 'utf8').includes(DATASET_CARD_MARKER)) {
    throw new EnvgenError('usage', `${card} exists and was not written by envgen export; choose another --out for the hf export, or move that file away`);
  }
  const data = join(out, 'data');
  if (existsSync(data)) {
    const foreign = statSync(data).isDirectory() ? readdirSync(data).find((name) => !isShardName(name)) : 'data';
    if (foreign !== undefined) {
      throw new EnvgenError('usage', `${data} holds ${foreign}, which envgen export did not write; choose another --out for the hf export, or move it away`);
    }
  }
}

function prepareOut(out: string): void {
  try {
    mkdirSync(out, { recursive: true });
  } catch (error) {
    throw new EnvgenError('usage', `cannot create the output directory ${out} (${describeError(error)}); pass a writable directory with --out`, { cause: error });
  }
  if (!statSync(out).isDirectory()) throw new EnvgenError('usage', `${out} is not a directory; pass a directory with --out`);
}

/**
 * Exports the pool's instances that have a task, in `instance_id` order, in one format.
 * Streams: rows are read a page at a time and written as they come (hf: a row group at a
 * time), so memory stays flat however large the pool. Everything is written into a hidden
 * staging entry inside `out` and renamed into place at the end, so a killed export leaves
 * no half file; when nothing is exported, nothing in `out` changes.
 */
export async function exportPool(pool: Pool, options: ExportPoolOptions): Promise<ExportResult> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const out = resolve(options.out);
  const format = options.format;
  prepareOut(out);
  sweepStaging(out, logger);
  if (format === 'hf') assertHfReplaceable(out);
  const filter = options.filter ?? {};
  const selection = selectEntries(pool, filter, logger);
  options.onProgress?.({ kind: 'start', format, total: selection.candidates });
  const staging = makeStagingPath(out, format);
  const files: string[] = [];
  try {
    switch (format) {
      case 'swesmith':
      case 'codescout': {
        await writeJsonl(selection, staging, format === 'swesmith' ? toSwesmithRow : toCodescoutRow, options.onProgress);
        if (selection.tally.selected > 0) {
          replacePath(staging, join(out, EXPORT_LAYOUTS[format]), out);
          files.push(EXPORT_LAYOUTS[format]);
        }
        break;
      }
      case 'ssr': {
        await writeSsr(pool, selection, staging, options.onProgress);
        if (selection.tally.selected > 0) commitSsr(staging, out);
        break;
      }
      case 'hf': {
        mkdirSync(join(staging, 'data'), { recursive: true });
        const shards = await writeHfShards(reported(selection.entries, options.onProgress), join(staging, 'data'), options);
        if (selection.tally.selected > 0) {
          const card = formatDatasetCard({
            rows: selection.tally.selected,
            shards,
            byRepo: toGroupCounts(selection.tally.byRepo),
            byStrategy: toGroupCounts(selection.tally.byStrategy),
            byStatementKind: toGroupCounts(selection.tally.byStatementKind),
            filter,
          });
          writeFileSync(join(staging, 'README.md'), card);
          // Data first, card last: the card always describes files that are in place.
          replacePath(join(staging, 'data'), join(out, 'data'), out);
          replacePath(join(staging, 'README.md'), join(out, 'README.md'), out);
          files.push(...shards.map((shard) => `data/${shard}`), 'README.md');
        }
        break;
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const { tally } = selection;
  return {
    format,
    out,
    layout: EXPORT_LAYOUTS[format],
    files,
    exported: tally.selected,
    skipped: { noTask: tally.noTask, emptyStatement: tally.emptyStatement, duplicatePatch: tally.duplicatePatch },
    examples: tally.examples,
    byRepo: toGroupCounts(tally.byRepo),
    byStrategy: toGroupCounts(tally.byStrategy),
    byStatementKind: toGroupCounts(tally.byStatementKind),
    seconds: (performance.now() - started) / 1000,
  };
}
