import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { BUNDLE_FILE_NAMES } from '@envgen/core';
import type { Instance, Task } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { Pool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask, scratchBase } from '../../pool/src/synthetic.test-support.js';
import { DATASET_CARD_MARKER } from './dataset-card.js';
import { exportPool } from './export-pool.js';

const scratch: string[] = [];
const pools: Pool[] = [];

afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function makeScratch(prefix: string): string {
  const dir = mkdtempSync(join(scratchBase(), prefix));
  scratch.push(dir);
  return dir;
}

/** Everything a test needs to know about the synthetic pool it made. */
interface Fixture {
  pool: Pool;
  /** Instances that must be exported, in instance_id order, with their tasks. */
  expected: Array<{ instance: Instance; task: Task }>;
  noTask: string[];
  emptyStatement: string[];
  duplicatePatch: string[];
}

/**
 * `count` synthetic instances with tasks (statement kinds and gold labels varying), plus one
 * without a task, one whose statement is blank, and one whose patch repeats instance 0's in
 * another repo (the pool keeps both; the export must not).
 */
function makeFixture(count: number): Fixture {
  const pool = openPool(makeScratch('envgen-export-pool-'));
  pools.push(pool);
  const expected: Fixture['expected'] = [];
  const kinds = ['tests', 'self-play', 'issue'] as const;
  for (let index = 0; index < count; index += 1) {
    const instance = makeSyntheticInstance(index, {
      ...(index % 4 === 0 ? { FAIL_TO_PASS: [`tests/test_core.py::test_a_${index}`, `tests/test_core.py::test_b_${index}`] } : {}),
      // Every third one is a higher-order bug made from the previous instance's failed repair.
      ...(index % 3 === 2 ? { order: 2, parent: expected[index - 1]?.instance.instance_id ?? '' } : {}),
    });
    pool.addInstance(instance, makeSyntheticBundle(instance));
    const kind = kinds[index % kinds.length] ?? 'tests';
    const task = makeSyntheticTask(instance, {
      problem_statement: {
        kind,
        text: `Bug ${index}: "quotes", unicode é→ü, newline\nand a tab\t.`,
        created_at: instance.created_at,
        ...(kind === 'issue' ? { model: 'scripted', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } : {}),
      },
      ...(index % 5 === 0
        ? {
            file_changes: [
              { file: 'a.py', changes: { edited_entities: [], edited_modules: [], added_entities: ['a.py:new'], added_modules: ['a.py:new'] } },
              { file: 'b.py', changes: { edited_entities: [], edited_modules: [], added_entities: [], added_modules: [] } },
            ],
          }
        : {}),
    });
    pool.putTask(task);
    expected.push({ instance, task });
  }
  const untasked = makeSyntheticInstance(count);
  pool.addInstance(untasked, makeSyntheticBundle(untasked));
  const blank = makeSyntheticInstance(count + 1);
  pool.addInstance(blank, makeSyntheticBundle(blank));
  pool.putTask(makeSyntheticTask(blank, { problem_statement: { kind: 'tests', text: ' \n\t', created_at: blank.created_at } }));
  // Instance 0 is pytoolz/toolz; this one is uiri/toml with the same patch, so it sorts after it.
  const first = expected[0]?.instance;
  if (first === undefined) throw new Error('count must be at least 1');
  const duplicate = makeSyntheticInstance(count % 2 === 0 ? count + 3 : count + 2, { patch: first.patch });
  expect(duplicate.repo).not.toBe(first.repo);
  expect(pool.addInstance(duplicate, makeSyntheticBundle(duplicate))).toEqual({ status: 'added' });
  pool.putTask(makeSyntheticTask(duplicate));
  expect(duplicate.instance_id > first.instance_id).toBe(true);
  expected.sort((a, b) => (a.instance.instance_id < b.instance.instance_id ? -1 : 1));
  return { pool, expected, noTask: [untasked.instance_id], emptyStatement: [blank.instance_id], duplicatePatch: [duplicate.instance_id] };
}

function readJsonl(path: string): unknown[] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

/** The swesmith/hf row, written out field by field (not through the code under test). */
function expectedSwesmithRow({ instance, task }: Fixture['expected'][number]): Record<string, unknown> {
  return {
    instance_id: instance.instance_id,
    repo: instance.repo,
    base_commit: instance.base_commit,
    patch: instance.patch,
    FAIL_TO_PASS: instance.FAIL_TO_PASS,
    PASS_TO_PASS: instance.PASS_TO_PASS,
    problem_statement: task.problem_statement.text,
    statement_kind: task.problem_statement.kind,
    image_name: task.image_name,
    created_at: instance.created_at,
    strategy: instance.strategy,
    family: instance.family,
    file_changes: task.file_changes,
  };
}

describe('exportPool swesmith', () => {
  it('writes one JSON line per instance with a task, in instance_id order, with every SWE-smith field and the gold labels', async () => {
    const fixture = makeFixture(12);
    const out = makeScratch('envgen-export-out-');
    const result = await exportPool(fixture.pool, { format: 'swesmith', out });
    expect(result.files).toEqual(['swesmith.jsonl']);
    const rows = readJsonl(join(out, 'swesmith.jsonl'));
    expect(rows).toEqual(fixture.expected.map(expectedSwesmithRow));
    for (const row of rows as Array<Record<string, unknown>>) {
      expect(Object.keys(row)).toEqual([
        'instance_id', 'repo', 'base_commit', 'patch', 'FAIL_TO_PASS', 'PASS_TO_PASS', 'problem_statement',
        'statement_kind', 'image_name', 'created_at', 'strategy', 'family', 'file_changes',
      ]);
      expect(Array.isArray(row.FAIL_TO_PASS) && Array.isArray(row.PASS_TO_PASS) && Array.isArray(row.file_changes)).toBe(true);
      expect(typeof row.problem_statement === 'string' && row.problem_statement.trim() !== '').toBe(true);
      // The bug's description and entities point at the fix: never in a training row.
      expect(row).not.toHaveProperty('description');
      expect(row).not.toHaveProperty('entities');
    }
    expect(result.exported).toBe(12);
    expect(result.skipped).toEqual({ noTask: 1, emptyStatement: 1, duplicatePatch: 1 });
    expect(result.examples).toEqual({ emptyStatement: fixture.emptyStatement, duplicatePatch: fixture.duplicatePatch });
    expect(result.byRepo).toEqual([
      { key: 'pytoolz/toolz', count: 6 },
      { key: 'uiri/toml', count: 6 },
    ]);
    expect(result.byStatementKind.reduce((sum, { count }) => sum + count, 0)).toBe(12);
    expect(readdirSync(out)).toEqual(['swesmith.jsonl']);
  });

  it('exports only the filtered repo and strategy', async () => {
    const fixture = makeFixture(12);
    const out = makeScratch('envgen-export-out-');
    const result = await exportPool(fixture.pool, { format: 'swesmith', out, filter: { repo: 'uiri/toml', strategy: 'invert_if_else' } });
    const wanted = fixture.expected.filter(({ instance }) => instance.repo === 'uiri/toml' && instance.strategy === 'invert_if_else');
    expect(wanted.length).toBeGreaterThan(0);
    expect(readJsonl(join(out, 'swesmith.jsonl'))).toEqual(wanted.map(expectedSwesmithRow));
    expect(result.exported).toBe(wanted.length);
    expect(result.byStrategy).toEqual([{ key: 'invert_if_else', count: wanted.length }]);
  });

  it('writes the same bytes on a second run', async () => {
    const fixture = makeFixture(6);
    const first = makeScratch('envgen-export-out-');
    const second = makeScratch('envgen-export-out-');
    await exportPool(fixture.pool, { format: 'swesmith', out: first });
    await exportPool(fixture.pool, { format: 'swesmith', out: second });
    expect(readFileSync(join(second, 'swesmith.jsonl'))).toEqual(readFileSync(join(first, 'swesmith.jsonl')));
  });
});

describe('exportPool codescout', () => {
  it('writes instance_id, repo, base_commit, patch, problem_statement and file_changes per row', async () => {
    const fixture = makeFixture(10);
    const out = makeScratch('envgen-export-out-');
    const result = await exportPool(fixture.pool, { format: 'codescout', out });
    expect(result.files).toEqual(['codescout.jsonl']);
    const rows = readJsonl(join(out, 'codescout.jsonl')) as Array<Record<string, unknown>>;
    expect(rows).toEqual(
      fixture.expected.map(({ instance, task }) => ({
        instance_id: instance.instance_id,
        repo: instance.repo,
        base_commit: instance.base_commit,
        patch: instance.patch,
        problem_statement: task.problem_statement.text,
        file_changes: task.file_changes,
      })),
    );
    for (const row of rows) {
      expect(Object.keys(row)).toEqual(['instance_id', 'repo', 'base_commit', 'patch', 'problem_statement', 'file_changes']);
      for (const fileChange of row.file_changes as Array<{ file: unknown; changes: Record<string, unknown> }>) {
        expect(typeof fileChange.file).toBe('string');
        expect(Object.keys(fileChange.changes)).toEqual(['edited_entities', 'edited_modules', 'added_entities', 'added_modules']);
        for (const list of Object.values(fileChange.changes)) expect(Array.isArray(list)).toBe(true);
      }
    }
  });
});

describe('exportPool ssr', () => {
  it('writes one directory per instance with the five bundle files byte for byte and a metadata.json', async () => {
    const fixture = makeFixture(8);
    const out = makeScratch('envgen-export-out-');
    const result = await exportPool(fixture.pool, { format: 'ssr', out });
    expect(result.exported).toBe(8);
    expect(readdirSync(out).sort()).toEqual(fixture.expected.map(({ instance }) => instance.instance_id));
    for (const { instance, task } of fixture.expected) {
      const dir = join(out, instance.instance_id);
      expect(readdirSync(dir).sort()).toEqual([...BUNDLE_FILE_NAMES, 'metadata.json'].sort());
      const bundle = fixture.pool.readBundle(instance.instance_id);
      for (const name of BUNDLE_FILE_NAMES) expect(readFileSync(join(dir, name))).toEqual(Buffer.from(bundle[name], 'utf8'));
      expect(statSync(join(dir, 'test_script.sh')).mode & 0o111).not.toBe(0);
      expect(JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8'))).toEqual({
        instance_id: instance.instance_id,
        repo: instance.repo,
        base_commit: instance.base_commit,
        strategy: instance.strategy,
        family: instance.family,
        image_name: task.image_name,
        created_at: instance.created_at,
        FAIL_TO_PASS: instance.FAIL_TO_PASS,
        PASS_TO_PASS: instance.PASS_TO_PASS,
        role: instance.order === 2 ? 'solver' : 'injector',
        order: instance.order ?? 1,
        parent: instance.parent ?? null,
      });
    }
    const higher = fixture.expected.filter(({ instance }) => instance.order === 2).map(({ instance }) => JSON.parse(readFileSync(join(out, instance.instance_id, 'metadata.json'), 'utf8')) as Record<string, unknown>);
    expect(higher.length).toBeGreaterThan(0);
    for (const metadata of higher) expect(metadata).toMatchObject({ role: 'solver', order: 2, parent: expect.stringMatching(/__/) });
  });
});

async function readParquet(path: string): Promise<{ rows: Array<Record<string, unknown>>; rowGroups: number; codecs: Set<string> }> {
  const buffer = readFileSync(path);
  const file = buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength);
  const metadata = parquetMetadata(file);
  const codecs = new Set(metadata.row_groups.flatMap((group) => group.columns.map((column) => String(column.meta_data?.codec))));
  const rows = (await parquetReadObjects({ file, compressors })) as Array<Record<string, unknown>>;
  return { rows, rowGroups: metadata.row_groups.length, codecs };
}

describe('exportPool hf', () => {
  it('writes zstd Parquet shards that another reader reads back row for row, and a dataset card', async () => {
    const fixture = makeFixture(23);
    const out = makeScratch('envgen-export-out-');
    const result = await exportPool(fixture.pool, { format: 'hf', out, shardRows: 10, rowGroupRows: 4 });
    const shards = ['train-00000-of-00003.parquet', 'train-00001-of-00003.parquet', 'train-00002-of-00003.parquet'];
    expect(result.files).toEqual([...shards.map((shard) => `data/${shard}`), 'README.md']);
    expect(readdirSync(join(out, 'data'))).toEqual(shards);
    const rows: Array<Record<string, unknown>> = [];
    const sizes: number[] = [];
    for (const shard of shards) {
      const read = await readParquet(join(out, 'data', shard));
      expect(read.codecs).toEqual(new Set(['ZSTD']));
      expect(read.rowGroups).toBe(Math.ceil(read.rows.length / 4));
      sizes.push(read.rows.length);
      rows.push(...read.rows);
    }
    expect(sizes).toEqual([10, 10, 3]);
    expect(rows).toEqual(fixture.expected.map(expectedSwesmithRow));

    const card = readFileSync(join(out, 'README.md'), 'utf8');
    expect(card.startsWith('---\n')).toBe(true);
    expect(card).toContain(DATASET_CARD_MARKER);
    expect(card).toContain('        path: data/train-*');
    expect(card).toContain('      num_examples: 23');
    expect(card).toContain('    - name: FAIL_TO_PASS\n      list: string');
    expect(card).toContain('| pytoolz/toolz | 12 |');
    expect(card).toContain('| uiri/toml | 11 |');
    for (const { key, count } of result.byStrategy) expect(card).toContain(`| ${key} | ${count} |`);
  });

  it('replaces an earlier hf export whole (fewer shards leave no stale file) but refuses a README.md it did not write', async () => {
    const fixture = makeFixture(9);
    const out = makeScratch('envgen-export-out-');
    await exportPool(fixture.pool, { format: 'hf', out, shardRows: 2 });
    expect(readdirSync(join(out, 'data'))).toHaveLength(5);
    await exportPool(fixture.pool, { format: 'hf', out, shardRows: 5 });
    expect(readdirSync(join(out, 'data'))).toEqual(['train-00000-of-00002.parquet', 'train-00001-of-00002.parquet']);

    const foreign = makeScratch('envgen-export-out-');
    writeFileSync(join(foreign, 'README.md'), '# my project\n');
    await expect(exportPool(fixture.pool, { format: 'hf', out: foreign })).rejects.toMatchObject({ code: 'usage' });
    expect(readFileSync(join(foreign, 'README.md'), 'utf8')).toBe('# my project\n');
    expect(readdirSync(foreign)).toEqual(['README.md']);
  });

  it('writes the same bytes on a second run', async () => {
    const fixture = makeFixture(7);
    const first = makeScratch('envgen-export-out-');
    const second = makeScratch('envgen-export-out-');
    await exportPool(fixture.pool, { format: 'hf', out: first });
    await exportPool(fixture.pool, { format: 'hf', out: second });
    for (const name of ['data/train-00000-of-00001.parquet', 'README.md']) {
      expect(readFileSync(join(second, name))).toEqual(readFileSync(join(first, name)));
    }
  });
});

describe('exportPool output safety', () => {
  it('leaves an earlier export untouched and no staging behind when an export dies midway', async () => {
    const fixture = makeFixture(40);
    const out = makeScratch('envgen-export-out-');
    await exportPool(fixture.pool, { format: 'swesmith', out, filter: { repo: 'uiri/toml' } });
    const before = readFileSync(join(out, 'swesmith.jsonl'));
    let rows = 0;
    for (const format of ['swesmith', 'hf', 'ssr'] as const) {
      const failing = exportPool(fixture.pool, {
        format,
        out,
        onProgress: (event) => {
          if (event.kind === 'row' && ++rows % 30 === 0) throw new Error('interrupted');
        },
      });
      await expect(failing).rejects.toThrow('interrupted');
    }
    expect(readdirSync(out)).toEqual(['swesmith.jsonl']);
    expect(readFileSync(join(out, 'swesmith.jsonl'))).toEqual(before);
  });

  it("removes a killed export's staging entry and changes nothing when no instance has a task", async () => {
    const pool = openPool(makeScratch('envgen-export-pool-'));
    pools.push(pool);
    const instance = makeSyntheticInstance(0);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    const out = makeScratch('envgen-export-out-');
    writeFileSync(join(out, 'swesmith.jsonl'), 'earlier\n');
    // A pid far above pid_max: a dead writer's staging file.
    const stale = join(out, '.envgen-export.999999999.abcdef.swesmith');
    mkdirSync(stale);
    const result = await exportPool(pool, { format: 'swesmith', out });
    expect(result).toMatchObject({ exported: 0, files: [], skipped: { noTask: 1, emptyStatement: 0, duplicatePatch: 0 } });
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(out)).toEqual(['swesmith.jsonl']);
    expect(readFileSync(join(out, 'swesmith.jsonl'), 'utf8')).toBe('earlier\n');
  });
});
