/**
 * One growth round on debian:toolz with the baseline solver, run in-process and as a BullMQ
 * flow with 1 and 2 workers (in the grow process, sharing its home), each on a fresh pool in a
 * copy of one warmed home (mirrors and baseline cached), the same seed every time. Prints
 * medians of the round's seconds and the queue's overhead against in-process.
 *
 *   node --conditions=@envgen/source --import tsx bench/grow.ts [runs] [budget]
 *
 * Bar (issue 10): the queue's overhead ≤ 5% of the round's time.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '@envgen/cli';
import { obliterateQueues } from '@envgen/grow';
import type { GrowthRound } from '@envgen/pool';
import { formatTable, median } from './stats.js';

const runs = Number(process.argv[2] ?? 3);
const budget = process.argv[3] ?? '30';
const corpus = process.env.ENVGEN_HOME ?? new URL('../.cache/envgen-test-home', import.meta.url).pathname;
const REDIS = process.env.ENVGEN_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function cli(args: string[], home: string): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await main([...args, '--home', home], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: { HOME: home },
  });
  if (code !== 0) throw new Error(`envgen ${args.join(' ')} exited ${code}: ${stderr}`);
  return stdout;
}

const warm = mkdtempSync(join(tmpdir(), 'envgen-bench-grow-'));
for (const dir of ['debian', 'mirrors']) if (existsSync(join(corpus, dir))) cpSync(join(corpus, dir), join(warm, dir), { recursive: true });
await cli(['env', '--repo', 'debian:toolz', '--json'], warm);

const modes: Array<{ name: string; flags: string[] }> = [
  { name: 'in-process', flags: [] },
  { name: 'BullMQ, 1 worker', flags: ['--local-workers', '1'] },
  { name: 'BullMQ, 2 workers', flags: ['--local-workers', '2'] },
];
const seconds = new Map<string, number[]>(modes.map((mode) => [mode.name, []]));
const perNew = new Map<string, number[]>(modes.map((mode) => [mode.name, []]));
for (let run = 0; run < runs; run += 1) {
  for (const mode of modes) {
    const home = mkdtempSync(join(tmpdir(), 'envgen-bench-grow-run-'));
    cpSync(warm, home, { recursive: true });
    const prefix = `envgen-bench-grow-${process.pid}-${run}`;
    try {
      await cli(['repos', 'add', 'debian:toolz'], home);
      const redis = mode.flags.length === 0 ? [] : ['--redis', REDIS, '--queue-prefix', prefix];
      const round = JSON.parse(await cli(['grow', '--once', '--budget', budget, '--rollouts', '2', '--seed', '1', ...redis, ...mode.flags, '--json'], home)) as GrowthRound;
      seconds.get(mode.name)?.push(round.seconds);
      if (round.secondsPerKept !== null) perNew.get(mode.name)?.push(round.secondsPerKept);
      process.stderr.write(`${mode.name} run ${run + 1}: ${round.seconds.toFixed(1)} s, ${round.newInstances} new\n`);
    } finally {
      if (mode.flags.length > 0) await obliterateQueues({ url: REDIS, prefix });
      rmSync(home, { recursive: true, force: true });
    }
  }
}
rmSync(warm, { recursive: true, force: true });

const base = median(seconds.get('in-process') ?? []);
const rows = modes.map((mode) => {
  const m = median(seconds.get(mode.name) ?? []);
  return [mode.name, `${m.toFixed(1)} s`, `${median(perNew.get(mode.name) ?? []).toFixed(2)} s`, mode.flags.length === 0 ? '–' : `${(((m - base) / base) * 100).toFixed(1)}%`];
});
process.stdout.write(`${formatTable(['round on debian:toolz', 'round (median)', 's per new instance', 'vs in-process'], rows)}\n`);
