import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillSyntheticPool, scratchBase } from '@envgen/pool/test-support';
import type { ExportReport } from './export-command.js';
import { runCli } from './run-cli.test-support.js';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function makeDir(prefix: string): string {
  const dir = mkdtempSync(join(scratchBase(), prefix));
  dirs.push(dir);
  return dir;
}

/** A home whose pool has `tasked` instances with a task and `untasked` without one. */
function makeHome(tasked: number, untasked: number): string {
  const home = makeDir('envgen-cli-export-');
  fillSyntheticPool(home, tasked, untasked);
  return home;
}


describe('envgen export', () => {
  it('writes every asked format and says how many instances each got and how many lacked a task', async () => {
    const home = makeHome(7, 2);
    const out = makeDir('envgen-cli-export-out-');
    const { code, stdout, stderr } = await runCli(['export', '--format', 'swesmith,codescout,hf', '--out', out], home);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^swesmith\s+7 instances in \d+\.\d s → .*swesmith\.jsonl$/m);
    expect(stdout).toMatch(/^codescout\s+7 instances in \d+\.\d s → .*codescout\.jsonl$/m);
    expect(stdout).toMatch(/^hf\s+7 instances in \d+\.\d s → .*data\/train-00000-of-00001\.parquet, .*README\.md$/m);
    expect(stdout).toContain('skipped       2 without a task (run envgen tasks first)');
    expect(stdout).toContain('per repo      pytoolz/toolz 4 · uiri/toml 3');
    expect(readdirSync(out).sort()).toEqual(['README.md', 'codescout.jsonl', 'data', 'swesmith.jsonl']);
    expect(readFileSync(join(out, 'swesmith.jsonl'), 'utf8').trimEnd().split('\n')).toHaveLength(7);
  });

  it('prints the report as JSON with --json, filtered by repo', async () => {
    const home = makeHome(6, 1);
    const out = makeDir('envgen-cli-export-out-');
    const { code, stdout } = await runCli(['export', '--format', 'ssr', '--out', out, '--repo', 'uiri/toml', '--json'], home);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as ExportReport;
    expect(report).toMatchObject({ out, filter: { repo: 'uiri/toml' }, matching: 3, exported: 3, skipped: { noTask: 0, emptyStatement: 0, duplicatePatch: 0 } });
    expect(report.formats.map(({ format, exported }) => [format, exported])).toEqual([['ssr', 3]]);
    expect(readdirSync(out)).toHaveLength(3);
    for (const name of readdirSync(out)) expect(name.startsWith('uiri__toml.')).toBe(true);
  });

  it('exits 1 with what to do when no instance has a task, and writes nothing', async () => {
    const home = makeHome(0, 3);
    const out = makeDir('envgen-cli-export-out-');
    const { code, stdout } = await runCli(['export', '--format', 'swesmith', '--out', out], home);
    expect(code).toBe(1);
    expect(stdout).toContain('nothing exported: none of the 3 instances has a task yet; run envgen tasks first');
    expect(readdirSync(out)).toEqual([]);

    const json = await runCli(['export', '--format', 'hf', '--out', out, '--json'], home);
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stdout) as ExportReport).exported).toBe(0);
    expect(json.stderr).toContain('run envgen tasks first');
  });

  it('exits 2 on an unknown format, a missing --out, or a zero shard size', async () => {
    const home = makeHome(1, 0);
    const out = makeDir('envgen-cli-export-out-');
    const unknown = await runCli(['export', '--format', 'csv', '--out', out], home);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown export format "csv"');
    expect((await runCli(['export', '--format', 'hf'], home)).code).toBe(2);
    const zero = await runCli(['export', '--format', 'hf', '--out', out, '--shard-rows', '0'], home);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('rows per shard must be a positive integer');
  });

  it('shows examples in --help', async () => {
    const home = makeHome(0, 0);
    const { code, stdout } = await runCli(['export', '--help'], home);
    expect(code).toBe(0);
    expect(stdout).toContain('--format <formats>');
    expect(stdout).toContain('$ envgen export --format swesmith --out data/');
  });
});
