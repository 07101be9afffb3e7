import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fillSyntheticPool, makeSyntheticTask, scratchBase } from '../../packages/pool/src/synthetic.test-support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PYTHON = '/usr/bin/python3';
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function makeDir(prefix: string): string {
  const dir = mkdtempSync(join(scratchBase(), prefix));
  dirs.push(dir);
  return dir;
}

/** A home whose pool has `tasked` instances with a task (statement kinds cycling) and `untasked` without. */
function makeHome(tasked: number, untasked: number): string {
  const home = makeDir('envgen-e2e-export-');
  const kinds = ['tests', 'self-play', 'issue'] as const;
  fillSyntheticPool(home, tasked, untasked, (instance, index) =>
    makeSyntheticTask(instance, { problem_statement: { kind: kinds[index % kinds.length] ?? 'tests', text: `Instance ${index} fails: ünïcode "quoted"\n`, created_at: instance.created_at } }),
  );
  return home;
}

function cliArgs(args: string[]): string[] {
  return ['--conditions=@envgen/source', '--import', 'tsx', join(ROOT, 'test/support/run-cli.ts'), ...args];
}

/** Reads the export the way a Python user would (json and PyYAML, as `datasets` would see the card) and summarizes it. */
const PYTHON_CHECK = String.raw`
import json, os, sys, yaml
out = sys.argv[1]
summary = {}
for name in ("swesmith.jsonl", "codescout.jsonl"):
    rows = [json.loads(line) for line in open(os.path.join(out, name), encoding="utf-8")]
    bad = [r["instance_id"] for r in rows if not (isinstance(r["problem_statement"], str) and r["problem_statement"].strip()
           and isinstance(r["file_changes"], list) and all(isinstance(f["changes"]["edited_entities"], list) for f in r["file_changes"]))]
    if name == "swesmith.jsonl":
        bad += [r["instance_id"] for r in rows if not (isinstance(r["FAIL_TO_PASS"], list) and isinstance(r["PASS_TO_PASS"], list))]
    summary[name] = {"rows": len(rows), "keys": sorted(rows[0]), "bad": bad, "ids": [r["instance_id"] for r in rows]}
card = open(os.path.join(out, "README.md"), encoding="utf-8").read()
front = yaml.safe_load(card.split("---\n")[1])
summary["card"] = {
    "path": front["configs"][0]["data_files"][0]["path"],
    "features": [f["name"] for f in front["dataset_info"]["features"]],
    "file_changes": front["dataset_info"]["features"][-1],
    "examples": front["dataset_info"]["splits"][0]["num_examples"],
}
summary["shards"] = sorted(os.listdir(os.path.join(out, "data")))
summary["ssr"] = sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "bug_inject.diff")))
print(json.dumps(summary))
`;

interface PythonSummary {
  'swesmith.jsonl': { rows: number; keys: string[]; bad: string[]; ids: string[] };
  'codescout.jsonl': { rows: number; keys: string[]; bad: string[]; ids: string[] };
  card: { path: string; features: string[]; file_changes: unknown; examples: number };
  shards: string[];
  ssr: string[];
}

describe('envgen export, end to end', () => {
  it('writes all four formats from a real CLI process, and Python reads every file', () => {
    const home = makeHome(250, 20);
    const out = makeDir('envgen-e2e-export-out-');
    const run = spawnSync(process.execPath, cliArgs(['export', '--format', 'all', '--out', out, '--shard-rows', '100', '--home', home, '--json']), {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { exported: number; skipped: { noTask: number }; formats: Array<{ format: string; exported: number }> };
    expect(report.exported).toBe(250);
    expect(report.skipped.noTask).toBe(20);
    expect(report.formats.map(({ format, exported }) => `${format}:${exported}`)).toEqual(['swesmith:250', 'codescout:250', 'ssr:250', 'hf:250']);

    const summary = JSON.parse(execFileSync(PYTHON, ['-c', PYTHON_CHECK, out], { encoding: 'utf8' })) as PythonSummary;
    const ids = [...summary['swesmith.jsonl'].ids];
    expect(ids).toHaveLength(250);
    expect([...ids].sort()).toEqual(ids);
    expect(summary['swesmith.jsonl'].bad).toEqual([]);
    expect(summary['swesmith.jsonl'].keys).toEqual(
      ['FAIL_TO_PASS', 'PASS_TO_PASS', 'base_commit', 'created_at', 'family', 'file_changes', 'image_name', 'instance_id', 'patch', 'problem_statement', 'repo', 'statement_kind', 'strategy'],
    );
    expect(summary['codescout.jsonl']).toMatchObject({ rows: 250, bad: [], keys: ['base_commit', 'file_changes', 'instance_id', 'patch', 'problem_statement', 'repo'], ids });
    expect(summary.ssr).toEqual(ids);
    expect(summary.shards).toEqual(['00000', '00001', '00002'].map((index) => `train-${index}-of-00003.parquet`));
    expect(summary.card).toMatchObject({ path: 'data/train-*', examples: 250 });
    expect(summary.card.features).toEqual([
      'instance_id', 'repo', 'base_commit', 'patch', 'FAIL_TO_PASS', 'PASS_TO_PASS', 'problem_statement', 'statement_kind', 'image_name', 'created_at', 'strategy', 'family', 'file_changes',
    ]);
    expect(summary.card.file_changes).toEqual({
      name: 'file_changes',
      list: [
        { name: 'file', dtype: 'string' },
        {
          name: 'changes',
          struct: ['edited_entities', 'edited_modules', 'added_entities', 'added_modules'].map((name) => ({ name, list: 'string' })),
        },
      ],
    });
  });

  it('a killed hf export leaves the earlier export whole; the next export sweeps its leftovers', async () => {
    const home = makeHome(4000, 0);
    const out = makeDir('envgen-e2e-export-out-');
    const first = spawnSync(process.execPath, cliArgs(['export', '--format', 'hf', '--out', out, '--repo', 'uiri/toml', '--home', home]), { cwd: ROOT, encoding: 'utf8' });
    expect(first.status, first.stderr).toBe(0);
    const card = readFileSync(join(out, 'README.md'));
    const shard = readFileSync(join(out, 'data', 'train-00000-of-00001.parquet'));

    // The whole pool, 500 rows a shard: killed once the first shard of the new export is on disk.
    const child = spawn(process.execPath, cliArgs(['export', '--format', 'hf', '--out', out, '--shard-rows', '500', '--home', home]), {
      cwd: ROOT,
      stdio: 'ignore',
      detached: true,
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 120_000;
    let staging: string | undefined;
    while (Date.now() < deadline && staging === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const entry = readdirSync(out).find((name) => name.startsWith('.envgen-export.'));
      if (entry !== undefined && existsSync(join(out, entry, 'data', 'shard-1.parquet'))) staging = entry;
    }
    process.kill(-(child.pid as number), 'SIGKILL');
    await exited;
    expect(staging).toBeDefined();
    expect(readdirSync(out).sort()).toEqual([staging, 'README.md', 'data'].sort());
    expect(readFileSync(join(out, 'README.md'))).toEqual(card);
    expect(readdirSync(join(out, 'data'))).toEqual(['train-00000-of-00001.parquet']);
    expect(readFileSync(join(out, 'data', 'train-00000-of-00001.parquet'))).toEqual(shard);

    const rerun = spawnSync(process.execPath, cliArgs(['export', '--format', 'hf', '--out', out, '--shard-rows', '500', '--home', home]), { cwd: ROOT, encoding: 'utf8' });
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain('removed 1 unfinished export(s)');
    expect(readdirSync(out).sort()).toEqual(['README.md', 'data']);
    expect(readdirSync(join(out, 'data'))).toHaveLength(8);
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain('num_examples: 4000');
  });
});
