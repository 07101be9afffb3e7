/**
 * Per-command overhead of each sandbox backend against running the same command directly.
 *
 *   npx tsx --conditions=@envgen/source bench/sandbox-overhead.ts [runs]
 *
 * Runs `/usr/bin/python3 -c pass` and `true` `runs` times (default 30) with child_process,
 * in one `local` sandbox and, when an engine answers, in one `docker` sandbox (one container
 * reused for every command), interleaved round by round, and prints the median milliseconds of each, the
 * overhead (median sandboxed − median plain) and the ratio.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeError } from '@envgen/core';
import { createSandboxProvider } from '@envgen/sandbox';
import type { Sandbox, SandboxKind } from '@envgen/sandbox';

const runs = Number(process.argv[2] ?? 30);
const commands: Record<string, string[]> = {
  'python3 -c pass': ['/usr/bin/python3', '-c', 'pass'],
  true: ['true'],
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

interface Runner {
  backend: string;
  run(argv: string[]): Promise<void>;
}

const worktree = await mkdtemp(path.join(os.tmpdir(), 'envgen-bench-'));
const runners: Runner[] = [
  {
    backend: 'plain',
    async run(argv) {
      const result = spawnSync(argv[0] ?? '', argv.slice(1), { cwd: worktree, stdio: 'pipe' });
      if (result.status !== 0) throw new Error(`${argv.join(' ')} failed`);
    },
  },
];
const sandboxes: Sandbox[] = [];
for (const kind of ['local', 'docker'] as SandboxKind[]) {
  const provider = createSandboxProvider(kind);
  try {
    await provider.ensureAvailable();
  } catch (error) {
    console.log(`${kind}: skipped (${describeError(error)})`);
    continue;
  }
  const sandbox = await provider.open({ worktree });
  sandboxes.push(sandbox);
  runners.push({
    backend: kind,
    async run(argv) {
      const result = await sandbox.exec(argv);
      if (result.status !== 'exited' || result.exitCode !== 0) throw new Error(`${kind}: ${JSON.stringify(result)}`);
    },
  });
}

// Interleaved (one run of every cell per round) so load from elsewhere hits all cells alike.
const samples = new Map<string, number[]>();
for (let round = -1; round < runs; round += 1) {
  for (const runner of runners) {
    for (const [name, argv] of Object.entries(commands)) {
      const started = performance.now();
      await runner.run(argv);
      const elapsed = performance.now() - started;
      if (round >= 0) samples.set(`${runner.backend}\t${name}`, [...(samples.get(`${runner.backend}\t${name}`) ?? []), elapsed]);
    }
  }
}
await Promise.all(sandboxes.map((sandbox) => sandbox.dispose()));
await rm(worktree, { recursive: true, force: true });

const rows: string[][] = [['backend', 'command', 'median ms', 'plain ms', 'overhead ms', 'ratio']];
for (const runner of runners) {
  for (const name of Object.keys(commands)) {
    const ms = median(samples.get(`${runner.backend}\t${name}`) ?? []);
    const base = median(samples.get(`plain\t${name}`) ?? []);
    rows.push([runner.backend, name, ms.toFixed(1), base.toFixed(1), (ms - base).toFixed(1), (ms / base).toFixed(2)]);
  }
}
const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
console.log(`median of ${runs} runs per command`);
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '));
