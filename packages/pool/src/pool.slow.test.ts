import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openPool } from './pool.js';
import { makeSyntheticBundle, makeSyntheticInstance, scratchBase } from './synthetic.test-support.js';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SOURCES = fileURLToPath(new URL('.', import.meta.url));
const homes: string[] = [];

afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function makeHome(base = tmpdir()): string {
  const home = mkdtempSync(join(base, 'envgen-pool-'));
  homes.push(home);
  return home;
}

/**
 * A separate node process driving the pool from TypeScript sources: `add FROM TO` adds the
 * synthetic instances FROM..TO-1 and prints each status; `attempt ID N REWARD SOLVED` records N
 * attempts. It prints `ready` and waits for a line on stdin, so tests can start several at once.
 */
function writeWorker(dir: string): string {
  const path = join(dir, 'pool-worker.ts');
  writeFileSync(
    path,
    `import { openPool } from ${JSON.stringify(join(SOURCES, 'index.ts'))};
import { makeSyntheticBundle, makeSyntheticInstance } from ${JSON.stringify(join(SOURCES, 'synthetic.test-support.ts'))};
const [home, mode, ...args] = process.argv.slice(2);
const pool = openPool(home);
process.stdout.write('ready\\n');
process.stdin.once('data', () => {
  if (mode === 'add') {
    for (let index = Number(args[0]); index < Number(args[1]); index += 1) {
      const instance = makeSyntheticInstance(index);
      process.stdout.write(pool.addInstance(instance, makeSyntheticBundle(instance)).status + '\\n');
    }
  } else {
    for (let n = 0; n < Number(args[1]); n += 1) pool.recordAttempt(args[0], { reward: Number(args[2]), solved: args[3] === 'true' });
  }
  pool.close();
  // Exit once everything written to stdout has been handed to the pipe.
  process.stdout.write('', () => process.exit(0));
});
`,
  );
  return path;
}

interface Worker {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  ready: Promise<void>;
  exited: Promise<number | null>;
}

function startWorker(script: string, args: string[], onLine?: (lines: string[]) => void): Worker {
  const child = spawn(process.execPath, ['--conditions=@envgen/source', '--import', 'tsx', script, ...args], { cwd: REPO_ROOT });
  const lines: string[] = [];
  let stderr = '';
  let markReady: () => void = () => undefined;
  let failReady: (error: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (line === 'ready') markReady();
      else lines.push(line);
    }
    onLine?.(lines);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    // 'close', not 'exit': only then has all of the child's output been read.
    child.on('close', (code) => {
      if (code !== 0 && code !== null) {
        const error = new Error(`pool worker failed (${code}): ${stderr}`);
        failReady(error);
        reject(error);
      } else {
        markReady();
        resolve(code);
      }
    });
  });
  // A worker that fails before anyone awaits its exit fails the test through `ready` or `exited`.
  exited.catch(() => undefined);
  return { child, lines, ready, exited };
}

function go(worker: Worker): void {
  worker.child.stdin.write('go\n');
}

describe('pool across processes', () => {
  it('stays consistent when a writer is killed with SIGKILL mid-run, and a rerun adds only what is missing', async () => {
    const home = makeHome();
    const script = writeWorker(home);
    // Far more than the three runs' kills add up to (128): the parent reads the writer's lines
    // in chunks and its SIGKILL lands some adds later, which on a fast machine let the third
    // run of 150 finish before it was killed.
    const total = 600;
    // Three runs, each killed after a different number of new instances.
    for (const killAfter of [17, 40, 71]) {
      const worker = startWorker(script, [home, 'add', '0', String(total)], (lines) => {
        if (lines.filter((line) => line === 'added').length >= killAfter) worker.child.kill('SIGKILL');
      });
      await worker.ready;
      go(worker);
      expect(await worker.exited).toBeNull();
    }

    const pool = openPool(home);
    try {
      const stored = [...pool.listInstances()];
      expect(stored.length).toBeGreaterThanOrEqual(17 + 40 + 71);
      expect(stored.length).toBeLessThan(total);
      for (const { instance } of stored) {
        expect(pool.readBundle(instance.instance_id)).toEqual(makeSyntheticBundle(instance));
      }
      // Reopening swept every staging dir and orphan: the directory names are exactly the rows.
      expect(readdirSync(join(pool.dir, 'bundles')).sort()).toEqual(stored.map(({ instance }) => instance.instance_id).sort());

      const statuses = { added: 0, exists: 0 };
      for (let index = 0; index < total; index += 1) {
        const instance = makeSyntheticInstance(index);
        const { status } = pool.addInstance(instance, makeSyntheticBundle(instance));
        if (status === 'duplicate-patch' || status === 'id-collision') throw new Error(`no synthetic patch repeats (${status})`);
        statuses[status] += 1;
      }
      expect(statuses).toEqual({ added: total - stored.length, exists: stored.length });
      expect(pool.count()).toBe(total);
    } finally {
      pool.close();
    }
  });

  it('loses no attempt when two processes record outcomes at once', async () => {
    const home = makeHome();
    const script = writeWorker(home);
    const instance = makeSyntheticInstance(0);
    const pool = openPool(home);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    const workers = [
      startWorker(script, [home, 'attempt', instance.instance_id, '400', '1', 'true']),
      startWorker(script, [home, 'attempt', instance.instance_id, '400', '0.5', 'false']),
    ];
    await Promise.all(workers.map((worker) => worker.ready));
    workers.forEach(go);
    // The test process writes too, between the workers' updates.
    for (let n = 0; n < 200; n += 1) pool.recordAttempt(instance.instance_id, { reward: 0, solved: false });
    expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0]);
    expect(pool.stats(instance.instance_id)).toEqual({ attempts: 1000, solved: 400, meanReward: (400 + 200) / 1000, solveRate: 0.4 });
    pool.close();
  });

  it('adds each instance exactly once when two processes add the same instances at once', async () => {
    const home = makeHome();
    const script = writeWorker(home);
    const workers = [startWorker(script, [home, 'add', '0', '60']), startWorker(script, [home, 'add', '0', '60'])];
    await Promise.all(workers.map((worker) => worker.ready));
    workers.forEach(go);
    expect(await Promise.all(workers.map((worker) => worker.exited))).toEqual([0, 0]);
    const all = workers.flatMap((worker) => worker.lines);
    const counts: Record<string, number> = {};
    for (const status of all) counts[status] = (counts[status] ?? 0) + 1;
    expect(counts).toEqual({ added: 60, exists: 60 });
    const pool = openPool(home);
    expect(pool.count()).toBe(60);
    expect(readdirSync(join(pool.dir, 'bundles'))).toHaveLength(60);
    pool.close();
  });

  it('streams 20k instances with flat memory', () => {
    const home = makeHome(scratchBase());
    const pool = openPool(home);
    const total = 20_000;
    const passToPass = Array.from({ length: 80 }, (_, n) => `tests/test_core.py::TestCore::test_behaviour_number_${n}`);
    for (let index = 0; index < total; index += 1) {
      const instance = makeSyntheticInstance(index, { PASS_TO_PASS: passToPass });
      pool.addInstance(instance, makeSyntheticBundle(instance));
    }
    const heap = (): number => process.memoryUsage().heapUsed;
    const before = heap();
    let peak = before;
    let seen = 0;
    let lastId = '';
    for (const { instance } of pool.listInstances()) {
      expect(instance.instance_id > lastId).toBe(true);
      lastId = instance.instance_id;
      seen += 1;
      if (seen % 500 === 0) peak = Math.max(peak, heap());
    }
    const streamedGrowth = peak - before;
    // Control: holding every row at once needs far more than the bound asserted for streaming.
    const held = [...pool.listInstances()];
    const heldGrowth = heap() - before;
    pool.close();
    expect(seen).toBe(total);
    expect(held).toHaveLength(total);
    const figures = `heap growth streaming ${(streamedGrowth / 2 ** 20).toFixed(1)} MiB, holding all ${(heldGrowth / 2 ** 20).toFixed(1)} MiB`;
    expect(heldGrowth, figures).toBeGreaterThan(100 * 2 ** 20);
    expect(streamedGrowth, figures).toBeLessThan(heldGrowth / 4);
  });
});
