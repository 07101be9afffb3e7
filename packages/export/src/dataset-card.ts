import type { GroupCount } from '@envgen/pool';
import { HF_COLUMNS, formatFeatures } from './hf-schema.js';
import type { ColumnSpec, ColumnType } from './hf-schema.js';
import type { ExportFilter } from './select-entries.js';

/** The line that marks a README.md as written by `envgen export`, so a later export may replace it. */
export const DATASET_CARD_MARKER = '<!-- written by envgen export --format hf: re-running it replaces this file and data/ -->';

/** What the dataset card describes. */
export interface DatasetCardInput {
  rows: number;
  /** Shard file names under `data/`, in order. */
  shards: readonly string[];
  byRepo: readonly GroupCount[];
  byStrategy: readonly GroupCount[];
  byStatementKind: readonly GroupCount[];
  filter: ExportFilter;
}

function typeName(type: ColumnType): string {
  switch (type.kind) {
    case 'string':
      return 'string';
    case 'list':
      return `list of ${typeName(type.of)}`;
    case 'struct':
      return `struct {${type.fields.map((field) => field.name).join(', ')}}`;
  }
}

/** Field table rows; struct members are listed under their column as `column.member`. */
function fieldRows(columns: readonly ColumnSpec[], prefix = ''): string[] {
  return columns.flatMap((column) => {
    const name = `${prefix}${column.name}`;
    const row = `| \`${name}\` | ${typeName(column.type)} | ${column.description} |`;
    const inner = column.type.kind === 'list' ? column.type.of : column.type;
    return inner.kind === 'struct' ? [row, ...fieldRows(inner.fields, `${name}.`)] : [row];
  });
}

function countTable(title: string, counts: readonly GroupCount[]): string[] {
  return [`| ${title} | instances |`, '| --- | ---: |', ...counts.map(({ key, count }) => `| ${key.replaceAll('|', '\\|')} | ${count} |`)];
}

/**
 * The README.md of an hf export: YAML front matter (configs, features, split size) that the
 * Hugging Face Hub and `datasets` read, then counts per repo, strategy and statement kind, the
 * fields, and how to load it. Deterministic: the same pool gives the same card.
 */
export function formatDatasetCard(input: DatasetCardInput): string {
  const filtered = [input.filter.repo && `repo ${input.filter.repo}`, input.filter.strategy && `strategy ${input.filter.strategy}`, input.filter.family && `family ${input.filter.family}`]
    .filter(Boolean)
    .join(', ');
  return [
    '---',
    'pretty_name: envgen bug-localization and repair instances',
    'tags:',
    '  - code',
    '  - software-engineering',
    '  - bug-localization',
    '  - swe-smith',
    'configs:',
    '  - config_name: default',
    '    data_files:',
    '      - split: train',
    '        path: data/train-*',
    'dataset_info:',
    ...formatFeatures('  '),
    '  splits:',
    '    - name: train',
    `      num_examples: ${input.rows}`,
    '---',
    DATASET_CARD_MARKER,
    '',
    '# envgen instances',
    '',
    `${input.rows} validated bugs in real Python repositories, made by envgen${filtered ? ` (${filtered})` : ''}. Each bug is a patch`,
    'that makes the repository\'s own tests fail (FAIL_TO_PASS) while others keep passing',
    '(PASS_TO_PASS), with a problem statement for an agent and the gold localization of its fix',
    '(CodeScout\'s rules: files, modules and entities the fix edits or adds). No two rows share a patch.',
    '',
    `Files: ${input.shards.map((shard) => `\`data/${shard}\``).join(', ')} (Parquet, zstd), split \`train\`, in \`instance_id\` order.`,
    '',
    '## Counts',
    '',
    ...countTable('repo', input.byRepo),
    '',
    ...countTable('strategy', input.byStrategy),
    '',
    ...countTable('problem statement', input.byStatementKind),
    '',
    '## Fields',
    '',
    '| field | type | meaning |',
    '| --- | --- | --- |',
    ...fieldRows(HF_COLUMNS),
    '',
    '## Loading',
    '',
    '```python',
    'from datasets import load_dataset',
    '',
    'ds = load_dataset("parquet", data_dir="path/to/this/folder/data", split="train")',
    'print(ds[0]["instance_id"], ds[0]["file_changes"])',
    '```',
    '',
  ].join('\n');
}
