/**
 * Reward service throughput and latency, against naive ways of serving the same API.
 *
 *   node --conditions=@envgen/source --import tsx bench/reward-server.ts [runs] [seconds] [instances] [variants]
 *
 * Builds a pool of synthetic instances with tasks (default 2,000), then for each run starts
 * each server variant in a child process pinned to core 0 (`taskset -c 0` when available;
 * this process pins itself to core 1) and drives it over keep-alive connections with a raw
 * HTTP/1.1 load generator:
 *   - closed loop: 32 connections, each sending its next request when the last answered,
 *     for `seconds` (after a 1 s warm-up): the most requests/s one core serves, and p50/p99
 *     under that saturation;
 *   - open loop at 5,000 requests/s (the bar) for `seconds`: requests leave on a fixed
 *     schedule (1 ms ticks) whatever the answers do; p50/p99 from send to answer, the share
 *     sent more than 2 ms late (every connection busy, or this process not scheduled: a
 *     stall is shown, not hidden), and the p99 of the handler times the server logged.
 *     Skipped for a variant that cannot reach that rate closed-loop.
 * Workloads: POST /v1/score by instance id, with inline gold, and by id with record: true
 * (one SQLite write per request). Variants:
 *   - service: the reward server as shipped (gold LRU cache checked against the pool's data version);
 *   - no-cache: the same server reading the task from SQLite on every request;
 *   - naive: a bare node:http handler that opens the pool, reads the task and closes the
 *     pool per request (what a quick script around the reward functions would do).
 * Every server logs its JSON request lines to a file, as in production. Prints the median
 * over runs of each cell. Bars (issue 5): >= 5,000 scored requests/s on one core, p99 < 10 ms.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createLogger, createRng } from '@envgen/core';
import type { FileChanges } from '@envgen/core';
import { openPool } from '@envgen/pool';
import { makeSyntheticBundle, makeSyntheticInstance, makeSyntheticTask } from '@envgen/pool/test-support';
import { createGoldCache, createServiceLogger, startRewardServer } from '@envgen/reward-service';
import { isSolved, localizationReward } from '@envgen/rewards';
import { formatTable, median } from './stats.js';

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VARIANTS = ['service', 'no-cache', 'naive'] as const;
type Variant = (typeof VARIANTS)[number];
const CONNECTIONS = 32;
const OPEN_RATE = 5_000;
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

// ---- server side (this file re-run as a child: --serve <variant> <home> <log>) ----

async function serveNaive(home: string, log: (line: string) => void): Promise<{ port: number }> {
  const logger = createLogger({ format: 'json', write: log });
  const server = createServer((request, response) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { instance_id?: string; gold?: FileChanges[]; locations: unknown[]; record?: boolean };
      let status = 200;
      let answer: unknown;
      const pool = openPool(home);
      try {
        const gold = body.gold ?? pool.getTask(body.instance_id ?? '')?.file_changes;
        if (gold === undefined) {
          status = 404;
          answer = { error: { code: 'unknown-instance' } };
        } else {
          const breakdown = localizationReward(gold, { locations: body.locations });
          const solved = isSolved(breakdown);
          if (body.record === true && body.instance_id !== undefined) pool.recordAttempt(body.instance_id, { reward: breakdown.reward, solved });
          answer = { ...breakdown, solved };
        }
      } finally {
        pool.close();
      }
      const text = JSON.stringify(answer);
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
      logger.info('request', { method: request.method, path: request.url, status, ms: performance.now() - started, instance_id: body.instance_id });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port };
}

async function runServer(variant: Variant, home: string, logFile: string): Promise<void> {
  // Synchronous writes, as process.stderr makes them to a file or a pipe in production.
  const fd = openSync(logFile, 'w');
  const log = (line: string): void => void writeSync(fd, `${line}\n`);
  let port: number;
  if (variant === 'naive') port = (await serveNaive(home, log)).port;
  else {
    const server = await startRewardServer({
      home,
      port: 0,
      logger: createServiceLogger((text) => void writeSync(fd, text)),
      ...(variant === 'no-cache' ? { goldCache: { maxEntries: 0 } } : {}),
    });
    port = server.port;
  }
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  // Exit through process.exit so a --cpu-prof profile is written; and with the bench, whose pipe closes when it dies.
  process.once('SIGTERM', () => process.exit(0));
  process.stdin.on('close', () => process.exit(0)).resume();
}

// ---- load generator ----

/** One keep-alive HTTP/1.1 connection that sends a request when the last one answered. */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: ((status: number) => void) | undefined;
  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  /** Resolves with the response status once the whole response has arrived. */
  send(request: Buffer): Promise<number> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.socket.write(request);
    });
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const headerEnd = this.buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const head = this.buffer.toString('latin1', 0, headerEnd);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.buffer.length < headerEnd + 4 + length) return;
    const status = Number(head.slice(9, 12));
    this.buffer = this.buffer.subarray(headerEnd + 4 + length);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(status);
  }

  close(): void {
    this.socket.destroy();
  }
}

function httpRequest(path: string, body: unknown): Buffer {
  const text = JSON.stringify(body);
  return Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** Server CPU time (user + system) per answered request, in µs: what one core costs per request whatever else runs. */
  cpuMicros?: number;
  /** Open loop: the share of requests sent more than 1 ms after their scheduled time. */
  late?: number;
  /** Open loop: p99 of the handler times the server logged (request read to response written), ms. */
  serverP99?: number;
}

/** p99 of the `ms` of the request lines logged from byte `from` of `logFile` on. */
function loggedP99(logFile: string, from: number): number {
  const text = readFileSync(logFile).subarray(from).toString('utf8');
  const times = text
    .split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => (JSON.parse(line) as { ms: number }).ms);
  return percentile(Float64Array.from(times).sort(), 0.99);
}

/** User + system CPU time of a process so far, in ms (from /proc; NaN elsewhere). */
function cpuMillis(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

function percentile(sorted: Float64Array, fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

function summarize(latencies: number[], seconds: number, errors: number): LoadResult {
  const sorted = Float64Array.from(latencies).sort();
  return { requestsPerSecond: latencies.length / seconds, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), errors };
}

async function closedLoop(connections: Connection[], requests: Buffer[], seconds: number, serverPid: number): Promise<LoadResult> {
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const warmEnd = performance.now() + 1000;
  const end = warmEnd + seconds * 1000;
  let cpuStart = Number.NaN;
  setTimeout(() => {
    cpuStart = cpuMillis(serverPid);
  }, 1000);
  await Promise.all(
    connections.map(async (connection) => {
      for (;;) {
        const started = performance.now();
        if (started >= end) return;
        const status = await connection.send(requests[next++ % requests.length] as Buffer);
        if (started < warmEnd) continue;
        if (status !== 200) errors += 1;
        latencies.push(performance.now() - started);
      }
    }),
  );
  const cpuMicros = ((cpuMillis(serverPid) - cpuStart) * 1000) / latencies.length;
  return { ...summarize(latencies, seconds, errors), cpuMicros };
}

async function openLoop(connections: Connection[], requests: Buffer[], seconds: number, rate: number): Promise<LoadResult> {
  const idle = [...connections];
  const total = Math.round(rate * seconds);
  const start = performance.now() + 200;
  const dueAt = (index: number): number => start + (index * 1000) / rate;
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let late = 0;
  let answered = 0;
  return new Promise((resolve) => {
    const dispatch = (): void => {
      const now = performance.now();
      while (sent < total && idle.length > 0 && dueAt(sent) <= now) {
        const connection = idle.pop() as Connection;
        // Sent more than 2 ms after its time (the timer ticks every 1 ms): every connection
        // was busy (a slow server) or this process was not scheduled.
        if (now - dueAt(sent) > 2) late += 1;
        void connection.send(requests[sent % requests.length] as Buffer).then((status) => {
          latencies.push(performance.now() - now);
          if (status !== 200) errors += 1;
          idle.push(connection);
          answered += 1;
          if (answered === total) {
            const elapsed = (performance.now() - start) / 1000;
            resolve({ ...summarize(latencies, elapsed, errors), late: late / total });
          } else dispatch();
        });
        sent += 1;
      }
    };
    // Wakes every millisecond rather than spinning: a spinning generator would push the
    // machine's other work onto the server's core. Requests leave in 1 ms bursts.
    const timer = setInterval(() => {
      dispatch();
      if (sent === total) clearInterval(timer);
    }, 1);
  });
}

// ---- the bench ----

interface Workload {
  name: string;
  requests: Buffer[];
}

function buildPool(home: string, count: number): Workload[] {
  const rng = createRng('bench-reward-server');
  const pool = openPool(home);
  const byId: Buffer[] = [];
  const inline: Buffer[] = [];
  const record: Buffer[] = [];
  for (let index = 0; index < count; index += 1) {
    const instance = makeSyntheticInstance(index);
    pool.addInstance(instance, makeSyntheticBundle(instance));
    // Gold like real tasks: one or two files, a method and a function.
    const files = Array.from({ length: 1 + rng.int(2) }, (_, n) => `pkg/sub${index % 13}/mod${n}_${index % 7}.py`);
    const gold: FileChanges[] = files.map((file) => ({
      file,
      changes: { edited_entities: [`${file}:Klass${index}.method`, `${file}:func_${index}`], edited_modules: [`${file}:Klass${index}`, `${file}:func_${index}`], added_entities: [], added_modules: [] },
    }));
    pool.putTask(makeSyntheticTask(instance, { file_changes: gold }));
    // Predictions: a third exact, a third partial, a third wrong.
    const kind = rng.int(3);
    const first = files[0] as string;
    const locations =
      kind === 0
        ? files.flatMap((file) => [{ file, class_name: `Klass${index}`, function_name: 'method' }, { file, function_name: `func_${index}` }])
        : kind === 1
          ? [{ file: first, class_name: `Klass${index}`, function_name: 'method' }, { file: 'pkg/other.py', function_name: 'helper' }]
          : [{ file: 'pkg/elsewhere.py', class_name: 'Other', function_name: 'run' }];
    byId.push(httpRequest('/v1/score', { instance_id: instance.instance_id, locations }));
    inline.push(httpRequest('/v1/score', { gold, locations }));
    record.push(httpRequest('/v1/score', { instance_id: instance.instance_id, locations, record: true }));
  }
  pool.close();
  const order = rng.shuffle(Array.from({ length: count }, (_, index) => index));
  const shuffled = (list: Buffer[]): Buffer[] => order.map((index) => list[index] as Buffer);
  return [
    { name: 'score by id', requests: shuffled(byId) },
    { name: 'score inline gold', requests: shuffled(inline) },
    { name: 'score by id + record', requests: shuffled(record) },
  ];
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
}

async function startVariant(variant: Variant, home: string, logFile: string, pinned: boolean): Promise<{ child: ChildProcess; port: number }> {
  // BENCH_CPU_PROF=<dir> writes each server's V8 CPU profile there, to see where its time goes.
  const profile = process.env['BENCH_CPU_PROF'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['BENCH_CPU_PROF']] : [];
  const node = [process.execPath, ...profile, '--conditions=@envgen/source', '--import', 'tsx', SELF, '--serve', variant, home, logFile];
  const [command, ...args] = pinned ? ['taskset', '-c', '0', ...node] : node;
  const child = spawn(command as string, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)));
  });
  return { child, port };
}

async function bench(): Promise<void> {
  const runs = Number(process.argv[2] ?? 3);
  const seconds = Number(process.argv[3] ?? 4);
  const count = Number(process.argv[4] ?? 2_000);
  const variants = (process.argv[5]?.split(',') ?? VARIANTS) as Variant[];
  const pinned = hasTaskset();
  if (pinned) execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' });
  // On disk like a real ~/.cache/envgen, so recorded outcomes pay for SQLite's writes and checkpoints.
  const work = mkdtempSync(join(tmpdir(), 'envgen-bench-reward-'));
  const home = join(work, 'home');
  const started = performance.now();
  const workloads = buildPool(home, count);
  console.log(`pool of ${count} instances with tasks built in ${((performance.now() - started) / 1000).toFixed(1)} s; ${runs} runs × ${seconds} s per cell; servers ${pinned ? 'pinned to core 0, load generator to core 1' : 'unpinned (no taskset)'}; load ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);

  // The gold lookup alone, in this process: LRU hit (one data_version read) vs reading and parsing the task.
  const pool = openPool(home);
  const ids = [...pool.listInstances({ limit: count })].map((entry) => entry.instance.instance_id);
  for (const [name, maxEntries] of [['cached', 10_000], ['no cache', 0]] as const) {
    const cache = createGoldCache(pool, { maxEntries });
    for (const id of ids) cache.lookup(id);
    const lookups = 200_000;
    const begun = performance.now();
    for (let index = 0; index < lookups; index += 1) cache.lookup(ids[index % ids.length] as string);
    console.log(`gold lookup, ${name}: ${(((performance.now() - begun) * 1000) / lookups).toFixed(2)} µs`);
  }
  pool.close();

  const cells = new Map<string, { closed: LoadResult[]; open: LoadResult[] }>();
  const cell = (variant: Variant, workload: string) => {
    const key = `${variant}\t${workload}`;
    let entry = cells.get(key);
    if (entry === undefined) {
      entry = { closed: [], open: [] };
      cells.set(key, entry);
    }
    return entry;
  };
  for (let run = 0; run < runs; run += 1) {
    for (const variant of variants) {
      const logFile = join(work, `${variant}.log`);
      const { child, port } = await startVariant(variant, home, logFile, pinned);
      try {
        const connections = await Promise.all(Array.from({ length: CONNECTIONS }, () => Connection.open(port)));
        for (const workload of workloads) {
          const closed = await closedLoop(connections, workload.requests, seconds, child.pid as number);
          cell(variant, workload.name).closed.push(closed);
          // An open loop above what the server sustains only measures a growing queue.
          let open: LoadResult | undefined;
          if (closed.requestsPerSecond >= OPEN_RATE * 1.1) {
            const logged = statSync(logFile).size;
            open = await openLoop(connections, workload.requests, seconds, OPEN_RATE);
            await new Promise((resolve) => setTimeout(resolve, 50));
            open.serverP99 = loggedP99(logFile, logged);
            cell(variant, workload.name).open.push(open);
          }
          console.log(
            `run ${run + 1} ${variant.padEnd(8)} ${workload.name.padEnd(21)} ${Math.round(closed.requestsPerSecond)} req/s (p50 ${closed.p50.toFixed(2)} p99 ${closed.p99.toFixed(2)} ms, ${closed.errors} errors, ${closed.cpuMicros?.toFixed(0)} µs CPU/request)` +
              (open === undefined
                ? ''
                : `; at ${OPEN_RATE}/s: ${Math.round(open.requestsPerSecond)} req/s, p50 ${open.p50.toFixed(2)} p99 ${open.p99.toFixed(2)} ms, server p99 ${open.serverP99?.toFixed(2)} ms, ${((open.late ?? 0) * 100).toFixed(1)}% sent late`),
          );
        }
        for (const connection of connections) connection.close();
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    }
  }
  rmSync(work, { recursive: true, force: true });

  const rows: string[][] = [];
  for (const [key, { closed, open }] of cells) {
    const [variant = '', workload = ''] = key.split('\t');
    const med = (results: LoadResult[], pick: (result: LoadResult) => number, digits: number): string =>
      results.length === 0 ? 'n/a' : median(results.map(pick)).toFixed(digits);
    rows.push([
      variant,
      workload,
      med(closed, (result) => result.requestsPerSecond, 0),
      med(closed, (result) => result.cpuMicros ?? Number.NaN, 0),
      med(closed, (result) => 1e6 / (result.cpuMicros ?? Number.NaN), 0),
      med(closed, (result) => result.p50, 2),
      med(closed, (result) => result.p99, 2),
      med(open, (result) => result.p50, 2),
      med(open, (result) => result.p99, 2),
      med(open, (result) => result.serverP99 ?? Number.NaN, 2),
      med(open, (result) => (result.late ?? 0) * 100, 1),
      String([...closed, ...open].reduce((sum, result) => sum + result.errors, 0)),
    ]);
  }
  console.log(
    `\nmedians over ${runs} runs (closed loop: ${CONNECTIONS} keep-alive connections; open loop: ${OPEN_RATE} req/s; latencies in ms; req/CPU-s: requests per second of server CPU, what one uncontended core would serve)\n`,
  );
  console.log(
    formatTable(['server', 'workload', 'req/s', 'CPU µs/req', 'req/CPU-s', 'p50', 'p99', `p50 @${OPEN_RATE}/s`, `p99 @${OPEN_RATE}/s`, 'server p99', '% late', 'errors'], rows),
  );
  const service = cells.get('service\tscore by id');
  if (service !== undefined) {
    const rate = median(service.closed.map((result) => result.requestsPerSecond));
    const p99 = service.open.length > 0 ? median(service.open.map((result) => result.p99)) : Number.NaN;
    console.log(`\nbar: >= 5,000 scored req/s on one core with p99 < 10 ms -> ${Math.round(rate)} req/s, p99 ${p99.toFixed(2)} ms at ${OPEN_RATE}/s: ${rate >= 5000 && p99 < 10 ? 'met' : 'NOT met'}`);
  }
}

if (process.argv[2] === '--serve') await runServer(process.argv[3] as Variant, process.argv[4] ?? '', process.argv[5] ?? '/dev/null');
else await bench();
