import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Table as ArrowTable, tableToIPC } from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, transformParquetStream } from 'parquet-wasm';
import type { RecordBatch as WasmRecordBatch } from 'parquet-wasm';
import { EnvgenError } from '@envgen/core';
import { makeRecordBatch } from './hf-schema.js';
import { toSwesmithRow } from './rows.js';
import type { ExportEntry, SwesmithRow } from './rows.js';

/** Rows per Parquet file unless told otherwise. */
export const DEFAULT_SHARD_ROWS = 10_000;
/** Rows per row group (and per Arrow batch built in memory) unless told otherwise. */
export const DEFAULT_ROW_GROUP_ROWS = 1_000;

/** How the hf writer cuts its output. */
export interface HfShardOptions {
  /** Rows per Parquet file (default {@link DEFAULT_SHARD_ROWS}). */
  shardRows?: number;
  /** Rows per row group (default {@link DEFAULT_ROW_GROUP_ROWS}); what is held in memory at once. */
  rowGroupRows?: number;
}

/** Hugging Face's shard naming: `train-00000-of-00003.parquet`, zero-based. */
export function formatShardName(index: number, total: number): string {
  return `train-${String(index).padStart(5, '0')}-of-${String(total).padStart(5, '0')}.parquet`;
}

/** True for a file name {@link formatShardName} makes. */
export function isShardName(name: string): boolean {
  return /^train-\d{5}-of-\d{5}\.parquet$/.test(name);
}

function makeWriterProperties(rowGroupRows: number) {
  return new WriterPropertiesBuilder().setCompression(Compression.ZSTD).setMaxRowGroupSize(rowGroupRows).build();
}

/** Moves rows into WebAssembly memory as one record batch (through Arrow IPC, the library's way in). */
function toWasmBatch(rows: readonly SwesmithRow[]): WasmRecordBatch {
  const table = WasmTable.fromIPCStream(tableToIPC(new ArrowTable([makeRecordBatch(rows)]), 'stream'));
  try {
    const batch = table.recordBatch(0);
    if (batch === undefined) throw new EnvgenError('internal', `parquet-wasm read no record batch back from ${rows.length} rows`);
    return batch;
  } finally {
    table.free();
  }
}

function checkCount(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new EnvgenError('usage', `${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * Streams entries into zstd Parquet shards under `dataDir`: one row group at a time goes
 * through Arrow into parquet-wasm's streaming writer and its bytes to disk, so memory holds
 * one row group, whatever the shard and dataset sizes. Files are named once their count is
 * known. Returns the file names, in order (none when there are no entries).
 */
export async function writeHfShards(entries: Iterable<ExportEntry>, dataDir: string, options: HfShardOptions = {}): Promise<string[]> {
  const shardRows = checkCount('the rows per shard', options.shardRows ?? DEFAULT_SHARD_ROWS);
  const rowGroupRows = Math.min(shardRows, checkCount('the rows per row group', options.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS));
  const iterator = entries[Symbol.iterator]();
  let next = iterator.next();
  const written: string[] = [];
  while (next.done !== true) {
    let inShard = 0;
    // parquet-wasm reports a failing source as its own "Dyn casting error": keep the real one.
    let sourceError: { error: unknown } | undefined;
    const batches = new ReadableStream<WasmRecordBatch>(
      {
        pull(controller) {
          try {
            const rows: SwesmithRow[] = [];
            while (next.done !== true && inShard < shardRows && rows.length < rowGroupRows) {
              rows.push(toSwesmithRow(next.value));
              inShard += 1;
              next = iterator.next();
            }
            if (rows.length > 0) controller.enqueue(toWasmBatch(rows));
            if (next.done === true || inShard >= shardRows) controller.close();
          } catch (error) {
            sourceError = { error };
            controller.error(error);
          }
        },
      },
      // Build a batch only when the writer asks for one: at most one row group in flight.
      { highWaterMark: 0 },
    );
    const temporary = join(dataDir, `shard-${written.length}.parquet`);
    const fd = openSync(temporary, 'wx');
    try {
      const bytes = (await transformParquetStream(batches, makeWriterProperties(rowGroupRows))) as ReadableStream<Uint8Array>;
      for await (const chunk of bytes) writeSync(fd, chunk);
    } catch (error) {
      throw sourceError === undefined ? error : sourceError.error;
    } finally {
      closeSync(fd);
    }
    written.push(temporary);
  }
  return written.map((temporary, index) => {
    const name = formatShardName(index, written.length);
    renameSync(temporary, join(dataDir, name));
    return name;
  });
}
