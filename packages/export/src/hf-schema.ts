import { Field, List, RecordBatch, Schema, Struct, Utf8, makeData } from 'apache-arrow';
import type { Data, DataType } from 'apache-arrow';
import type { SwesmithRow } from './rows.js';

/** The column types the hf export uses. */
export type ColumnType = { kind: 'string' } | { kind: 'list'; of: ColumnType } | { kind: 'struct'; fields: ColumnSpec[] };

/** One column (or struct member): name, type and what it holds. */
export interface ColumnSpec {
  name: string;
  type: ColumnType;
  description: string;
}

const STRING: ColumnType = { kind: 'string' };
const STRING_LIST: ColumnType = { kind: 'list', of: STRING };

const CHANGES: ColumnSpec[] = [
  { name: 'edited_entities', type: STRING_LIST, description: '`path:Class.method` or `path:func` the fix edits (or deletes)' },
  { name: 'edited_modules', type: STRING_LIST, description: '`path:Class` or `path:func` around the edited lines' },
  { name: 'added_entities', type: STRING_LIST, description: 'entities the fix creates' },
  { name: 'added_modules', type: STRING_LIST, description: 'modules of the entities the fix creates' },
];

/**
 * The hf dataset's columns, in order: the {@link SwesmithRow} fields. The Arrow schema, the
 * dataset card's `features` and its field table are all derived from this one list.
 */
export const HF_COLUMNS: readonly ColumnSpec[] = [
  { name: 'instance_id', type: STRING, description: '`<owner>__<name>.<sha8>.<strategy>__<hash8>`; hash8 derives from the patch, so ids are stable across runs and machines' },
  { name: 'repo', type: STRING, description: 'the GitHub repository, `owner/name`' },
  { name: 'base_commit', type: STRING, description: 'the clean commit the bug is applied to' },
  { name: 'patch', type: STRING, description: 'the bug as a git-style unified diff (clean → buggy); the fix is its reverse' },
  { name: 'FAIL_TO_PASS', type: STRING_LIST, description: 'tests that fail with the bug and pass on the clean commit' },
  { name: 'PASS_TO_PASS', type: STRING_LIST, description: 'tests that pass both with and without the bug' },
  { name: 'problem_statement', type: STRING, description: 'the text an agent is given; never empty' },
  { name: 'statement_kind', type: STRING, description: 'how the statement was made: `tests` (failing tests and their output), `self-play` (reversed test weakening) or `issue` (written by an LLM)' },
  { name: 'image_name', type: STRING, description: 'the Docker image the tests run in' },
  { name: 'created_at', type: STRING, description: 'when the instance was made (ISO 8601, UTC)' },
  { name: 'strategy', type: STRING, description: 'the bug-injection strategy, e.g. `change_operator`, `remove_function_body`' },
  { name: 'family', type: STRING, description: 'the strategy family: `procedural`, `removal`, `history`, `combine` or `llm`' },
  {
    name: 'file_changes',
    type: {
      kind: 'list',
      of: {
        kind: 'struct',
        fields: [
          { name: 'file', type: STRING, description: 'repo-relative path of a file the fix changes' },
          { name: 'changes', type: { kind: 'struct', fields: CHANGES }, description: 'the gold entities and modules in that file' },
        ],
      },
    },
    description: 'gold localization of the fix, per file (CodeScout\'s format)',
  },
];

function toArrowType(type: ColumnType): DataType {
  switch (type.kind) {
    case 'string':
      return new Utf8();
    case 'list':
      return new List(new Field('item', toArrowType(type.of), false));
    case 'struct':
      return new Struct(type.fields.map((field) => new Field(field.name, toArrowType(field.type), false)));
  }
}

/** The Arrow schema of the hf export's Parquet files. */
export const HF_ARROW_SCHEMA = new Schema(HF_COLUMNS.map((column) => new Field(column.name, toArrowType(column.type), false)));

/** Arrow's own builders (`vectorFromArray`) take ~0.4 ms per row on these nested lists; filling the buffers directly is ~20× faster. */
function buildData(type: ColumnType, values: readonly unknown[]): Data {
  switch (type.kind) {
    case 'string': {
      const strings = values as readonly string[];
      const offsets = new Int32Array(strings.length + 1);
      // One encode per column; when it is all ASCII, characters are bytes and the offsets are free.
      const joined = strings.join('');
      const data = Buffer.from(joined, 'utf8');
      const ascii = data.length === joined.length;
      let end = 0;
      for (let index = 0; index < strings.length; index += 1) {
        const value = strings[index] ?? '';
        end += ascii ? value.length : Buffer.byteLength(value, 'utf8');
        offsets[index + 1] = end;
      }
      return makeData({ type: new Utf8(), length: strings.length, nullCount: 0, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, data.length) });
    }
    case 'list': {
      const offsets = new Int32Array(values.length + 1);
      const items: unknown[] = [];
      for (let index = 0; index < values.length; index += 1) {
        const list = values[index] as readonly unknown[];
        for (const item of list) items.push(item);
        offsets[index + 1] = items.length;
      }
      const child = buildData(type.of, items);
      return makeData({ type: toArrowType(type) as List, length: values.length, nullCount: 0, valueOffsets: offsets, child });
    }
    case 'struct': {
      const children = type.fields.map((field) => buildData(field.type, values.map((value) => (value as Record<string, unknown>)[field.name])));
      return makeData({ type: toArrowType(type) as Struct, length: values.length, nullCount: 0, children });
    }
  }
}

const ROW_TYPE: ColumnType = { kind: 'struct', fields: [...HF_COLUMNS] };

/** One Arrow record batch holding `rows`, in the {@link HF_ARROW_SCHEMA}. */
export function makeRecordBatch(rows: readonly SwesmithRow[]): RecordBatch {
  return new RecordBatch(HF_ARROW_SCHEMA, buildData(ROW_TYPE, rows) as Data<Struct>);
}

function featureLines(type: ColumnType, indent: string): string[] {
  switch (type.kind) {
    case 'string':
      return [`${indent}dtype: string`];
    case 'list':
      if (type.of.kind === 'string') return [`${indent}list: string`];
      if (type.of.kind === 'struct') return [`${indent}list:`, ...structLines(type.of.fields, `${indent}  `)];
      return [`${indent}list:`, ...featureLines(type.of, `${indent}  `)];
    case 'struct':
      return [`${indent}struct:`, ...structLines(type.fields, `${indent}  `)];
  }
}

function structLines(fields: readonly ColumnSpec[], indent: string): string[] {
  return fields.flatMap((field) => {
    const [first = '', ...rest] = featureLines(field.type, `${indent}  `);
    return [`${indent}- name: ${field.name}`, first, ...rest];
  });
}

/** The `dataset_info.features` YAML of the dataset card (Hugging Face's notation), as lines indented by `indent`. */
export function formatFeatures(indent: string): string[] {
  return [`${indent}features:`, ...structLines(HF_COLUMNS, `${indent}  `)];
}
