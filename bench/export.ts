/**
 * Export throughput and peak memory on a synthetic pool, streaming (what `envgen export`
 * does) against a naive export that materializes every row first, measured in the same run.
 * Each measurement runs in its own child process, so its peak RSS (getrusage maxRSS) is its
 * own; runs alternate streaming and naive, and medians are printed with the ratios.
 *
 *   node --conditions=@envgen/source --import tsx bench/export.ts [instances=100000] [runs=3] [formats=swesmith,codescout,ssr,hf]
 *
 * The pool (instances with realistic sizes: a ~1.3 KB patch, 60 PASS_TO_PASS tests, a ~1.5 KB
 * problem statement) is built once under .cache/export-bench/ and reused. Outputs go to
 * tmpfs (/dev/shm) so the disk does not set the pace; each is removed after its run.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Table as ArrowTable, tableToIPC } from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet } from 'parquet-wasm';
import { createRng, makeInstanceId } from '@envgen/core';
import type { Instance } from '@envgen/core';
import { EXPORT_FORMATS, exportPool, makeRecordBatch, toCodescoutRow, toSsrMetadata, toSwesmithRow } from '@envgen/export';
import type { ExportEntry, ExportFormat } from '@envgen/export';
import { openPool } from '@envgen/pool';
import type { Pool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticTask } from '../packages/pool/src/synthetic.test-support.js';
import { formatTable, median } from './stats.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const POOL_VERSION = 1;

type Mode = 'stream' | 'naive';

interface Measurement {
  format: ExportFormat;
  mode: Mode;
  rows: number;
  seconds: number;
  /** Peak resident set of the child, MiB. */
  peakMiB: number;
  /** Resident set after start-up (modules loaded, pool open), MiB. */
  baseMiB: number;
}

const REPOS = ['pytoolz/toolz', 'uiri/toml', 'python-jsonschema/jsonschema', 'pallets/click'] as const;
const STRATEGIES = ['change_operator', 'invert_if_else', 'remove_function_body', 'swap_arguments', 'history_revert'] as const;

/** A bench instance: sizes like a real one, varied by a seeded generator. */
function makeBenchInstance(index: number): Instance {
  const rng = createRng(`export-bench-${index}`);
  const repo = REPOS[index % REPOS.length] ?? REPOS[0];
  const strategy = STRATEGIES[Math.floor(index / REPOS.length) % STRATEGIES.length] ?? STRATEGIES[0];
  const [owner = '', name = ''] = repo.split('/');
  const commit = `${(index % REPOS.length).toString(16)}`.repeat(40);
  const file = `${name}/module_${index % 37}.py`;
  const context = Array.from({ length: 12 }, (_, line) => `     value_${line} = compute(value_${line - 1 < 0 ? 0 : line - 1}, ${rng.int(1000)})  # step ${line}\n`).join('');
  const patch = `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -${index + 1},27 +${index + 1},27 @@\n${context}-    return left + right  # ${index}\n+    return left - right  # ${index}\n${context}`;
  return {
    instance_id: makeInstanceId({ owner, name, commit, strategy, patch }),
    repo,
    base_commit: commit,
    patch,
    FAIL_TO_PASS: [`tests/test_module_${index % 37}.py::test_case_${index}`, `tests/test_module_${index % 37}.py::test_other_${index}`],
    PASS_TO_PASS: Array.from({ length: 60 }, (_, test) => `tests/test_module_${test % 9}.py::TestSuite::test_behaviour_${test}`),
    strategy,
    family: strategy === 'remove_function_body' ? 'removal' : strategy === 'history_revert' ? 'history' : 'procedural',
    seed: index,
    entities: [`${file}:compute`],
    description: `bench bug ${index}`,
    created_at: new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString(),
  };
}

function makeStatement(instance: Instance): string {
  const lines = instance.FAIL_TO_PASS.flatMap((test) => [
    `FAILED ${test}`,
    `    def ${test.split('::').at(-1) ?? 'test'}():`,
    '        result = compute_total([1, 2, 3], scale=2)',
    '>       assert result == 12',
    'E       assert 8 == 12',
    'E        +  where 8 = compute_total([1, 2, 3], scale=2)',
  ]);
  return `The following tests fail:\n\n${lines.join('\n')}\n\n${'Traceback context line for the failing call.\n'.repeat(20)}`;
}

/** Opens the cached bench pool of `count` instances, building it on first use. */
function ensurePool(count: number): string {
  const home = join(ROOT, '.cache', 'export-bench', `pool-${count}-v${POOL_VERSION}`);
  const done = join(home, 'complete');
  if (existsSync(done)) return home;
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const started = performance.now();
  const pool = openPool(home);
  try {
    for (let index = 0; index < count; index += 1) {
      const instance = makeBenchInstance(index);
      pool.addInstance(instance, makeSyntheticBundle(instance));
      pool.putTask(makeSyntheticTask(instance, { problem_statement: { kind: 'tests', text: makeStatement(instance), created_at: instance.created_at } }));
      if ((index + 1) % 10_000 === 0) process.stderr.write(`  built ${index + 1}/${count} instances (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
    }
  } finally {
    pool.close();
  }
  writeFileSync(done, `${count}\n`);
  return home;
}

/** Every exportable entry at once: what the naive export starts from. */
function readAllEntries(pool: Pool): ExportEntry[] {
  const entries: ExportEntry[] = [];
  for (const { instance, task } of pool.listInstances({ hasTask: true })) if (task !== null) entries.push({ instance, task });
  return entries;
}

/** The naive export: materialize all rows, then write them in one go. */
function exportNaive(pool: Pool, format: ExportFormat, out: string): number {
  const entries = readAllEntries(pool);
  switch (format) {
    case 'swesmith':
    case 'codescout': {
      const rows = entries.map(format === 'swesmith' ? toSwesmithRow : toCodescoutRow);
      // All lines at once (one joined string would pass V8's ~512 MiB string limit at 100k rows).
      const lines = rows.map((row) => `${JSON.stringify(row)}\n`);
      const fd = openSync(join(out, `${format}.jsonl`), 'wx');
      try {
        for (const line of lines) writeSync(fd, line);
      } finally {
        closeSync(fd);
      }
      return rows.length;
    }
    case 'ssr': {
      const bundles = entries.map((entry) => ({ entry, files: pool.readBundle(entry.instance.instance_id) }));
      for (const { entry, files } of bundles) {
        const dir = join(out, entry.instance.instance_id);
        mkdirSync(dir);
        for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
        writeFileSync(join(dir, 'metadata.json'), `${JSON.stringify(toSsrMetadata(entry), null, 2)}\n`);
      }
      return bundles.length;
    }
    case 'hf': {
      const rows = entries.map(toSwesmithRow);
      const table = WasmTable.fromIPCStream(tableToIPC(new ArrowTable([makeRecordBatch(rows)]), 'stream'));
      const bytes = writeParquet(table, new WriterPropertiesBuilder().setCompression(Compression.ZSTD).build());
      mkdirSync(join(out, 'data'));
      writeFileSync(join(out, 'data', 'train-00000-of-00001.parquet'), bytes);
      return rows.length;
    }
  }
}

async function runChild(format: ExportFormat, mode: Mode, home: string): Promise<void> {
  const pool = openPool(home);
  const out = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : ROOT, 'envgen-export-bench-'));
  try {
    const baseMiB = process.memoryUsage().rss / 2 ** 20;
    const started = performance.now();
    const rows = mode === 'stream' ? (await exportPool(pool, { format, out })).exported : exportNaive(pool, format, out);
    const seconds = (performance.now() - started) / 1000;
    const peakMiB = process.resourceUsage().maxRSS / 1024;
    const measurement: Measurement = { format, mode, rows, seconds, peakMiB, baseMiB };
    process.stdout.write(`${JSON.stringify(measurement)}\n`);
  } finally {
    pool.close();
    rmSync(out, { recursive: true, force: true });
  }
}

function measure(format: ExportFormat, mode: Mode, home: string): Measurement | { format: ExportFormat; mode: Mode; failed: string } {
  const child = spawnSync(process.execPath, ['--conditions=@envgen/source', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', format, mode, home], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !line.startsWith('{')) {
    return { format, mode, failed: `exit ${child.status ?? child.signal}: ${child.stderr.trim().split('\n').slice(-3).join(' | ')}` };
  }
  return JSON.parse(line) as Measurement;
}

async function runParent(): Promise<void> {
  const count = Number(process.argv[2] ?? 100_000);
  const runs = Number(process.argv[3] ?? 3);
  const formats = (process.argv[4] ?? EXPORT_FORMATS.join(',')).split(',') as ExportFormat[];
  process.stderr.write(`export bench: ${count} instances, ${runs} run(s) per format and mode\n`);
  const home = ensurePool(count);
  const results = new Map<string, Measurement[]>();
  const failures: string[] = [];
  for (const format of formats) {
    for (let run = 0; run < runs; run += 1) {
      for (const mode of ['stream', 'naive'] as const) {
        const result = measure(format, mode, home);
        if ('failed' in result) {
          failures.push(`${format} ${mode} run ${run + 1}: ${result.failed}`);
          process.stderr.write(`  ${format} ${mode}: FAILED ${result.failed}\n`);
          continue;
        }
        process.stderr.write(`  ${format} ${mode}: ${result.rows} rows in ${result.seconds.toFixed(2)} s, peak ${result.peakMiB.toFixed(0)} MiB\n`);
        const key = `${format} ${mode}`;
        results.set(key, [...(results.get(key) ?? []), result]);
      }
    }
  }
  const rows: string[][] = [];
  for (const format of formats) {
    const summary = (mode: Mode) => {
      const list = results.get(`${format} ${mode}`) ?? [];
      if (list.length === 0) return undefined;
      return {
        rowsPerSecond: median(list.map((m) => m.rows / m.seconds)),
        peakMiB: median(list.map((m) => m.peakMiB)),
        baseMiB: median(list.map((m) => m.baseMiB)),
        rows: list[0]?.rows ?? 0,
      };
    };
    const stream = summary('stream');
    const naive = summary('naive');
    for (const [mode, value] of [['stream', stream], ['naive', naive]] as const) {
      rows.push([
        format,
        mode,
        value ? String(value.rows) : '–',
        value ? value.rowsPerSecond.toFixed(0) : 'failed',
        value ? value.peakMiB.toFixed(0) : 'failed',
        value ? value.baseMiB.toFixed(0) : '–',
        mode === 'naive' && stream && naive ? `${(naive.peakMiB / stream.peakMiB).toFixed(1)}× RSS, ${(stream.rowsPerSecond / naive.rowsPerSecond).toFixed(2)}× speed` : '',
      ]);
    }
  }
  process.stdout.write(
    `\n${formatTable(['format', 'mode', 'rows', 'rows/s (median)', 'peak RSS MiB (median)', 'RSS at start MiB', 'naive/stream peak, stream/naive speed'], rows)}\n`,
  );
  if (failures.length > 0) process.stdout.write(`\nfailed runs:\n${failures.map((line) => `  ${line}`).join('\n')}\n`);
}

if (process.argv[2] === '--child') {
  await runChild(process.argv[3] as ExportFormat, process.argv[4] as Mode, process.argv[5] ?? '');
} else {
  await runParent();
}
