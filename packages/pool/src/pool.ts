import { existsSync, mkdirSync, opendirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { EnvgenError, describeError, sha256, silentLogger } from '@envgen/core';
import type { BundleFiles, Instance, Logger, RejectionReason, Task } from '@envgen/core';
import { assertSafeId, hashBundle, isAbandonedStaging, isStaging, readBundleDir, stageBundle } from './bundle-dir.js';
import { migrateSchema } from './schema.js';
import type {
  AddResult,
  ArmOutcomeCount,
  AttemptOutcome,
  Band,
  GrowthRound,
  RecordOnceResult,
  RegisteredRepo,
  GroupCount,
  GrowthRow,
  InstanceStats,
  ListOptions,
  OpenPoolOptions,
  PoolEntry,
  PoolFilter,
  CleanRun,
  CleanRunKey,
  Rejection,
  RejectionCount,
  RejectionKey,
  SpreadRow,
} from './types.js';

/** Rows per page when streaming a listing; each page is one short query, so the connection stays free between pages. */
const PAGE_SIZE = 256;

/** The columns {@link Pool.countsBy} can group by. */
export type GroupColumn = 'repo' | 'strategy' | 'family';

/** The embedded store of instances. Every method is synchronous; several processes may share one pool. */
export interface Pool {
  /** The pool's directory, `<home>/pool`. */
  readonly dir: string;
  /**
   * Stores an instance with its bundle. The bundle directory is complete on disk before the
   * index row commits, so a killed process never leaves a row without its bundle.
   */
  addInstance(instance: Instance, bundle: BundleFiles): AddResult;
  /** True when an instance with this id is stored (one indexed lookup). */
  hasInstance(id: string): boolean;
  getInstance(id: string): Instance | undefined;
  /** The directory holding the instance's five bundle files. */
  bundleDir(id: string): string;
  /** Reads the instance's bundle; throws `store-corrupt` when the instance is unknown or its files are gone. */
  readBundle(id: string): BundleFiles;
  /** Streams instances in `instance_id` order, a page at a time: memory stays flat however large the pool. */
  listInstances(options?: ListOptions): IterableIterator<PoolEntry>;
  count(filter?: PoolFilter): number;
  /** Instance counts per value of `column`, largest first. */
  countsBy(column: GroupColumn, filter?: PoolFilter): GroupCount[];
  /**
   * The difficulty spread (untried, too hard, frontier, too easy, attempts, mean reward) per
   * value of `groupBy`, largest group first; with `groupBy` null, one row keyed `all` for
   * the whole selection (zeros on an empty pool). One aggregate query.
   */
  spread(groupBy: GroupColumn | null, filter?: PoolFilter): SpreadRow[];
  /** The first and last `created_at` of the selection; `null` when it is empty. */
  createdRange(filter?: PoolFilter): { first: string; last: string } | null;
  /**
   * Instances per creation period (`created_at` cut to `periodLength` characters: 10 a day,
   * 13 an hour, 16 a minute), family and current band, in period order. One aggregate query.
   */
  growth(periodLength: number, filter?: PoolFilter): GrowthRow[];
  /**
   * Tried instances per solve-rate bin: bin `i` of `bins` holds rates in [i/bins, (i+1)/bins),
   * the last one 1 too. One aggregate query.
   */
  solveRateHistogram(bins: number, filter?: PoolFilter): number[];
  /** Frontier instances, hardest first (lowest solve rate, then most attempts, then id), at most `limit`. */
  listFrontier(limit: number, filter?: PoolFilter): PoolEntry[];
  /** Remembered rejections per repo and reason, most first. */
  rejectionCounts(): RejectionCount[];
  /**
   * A number that changes whenever another connection (this process or another) commits to
   * the index, and never for this connection's own writes (SQLite's `data_version`). Caches
   * of what other processes write (tasks) compare it to know they may be stale.
   */
  dataVersion(): number;
  /** Adds one scored attempt in a single transaction; `undefined` when the instance is unknown. */
  recordAttempt(id: string, outcome: AttemptOutcome): InstanceStats | undefined;
  stats(id: string): InstanceStats | undefined;
  /** Stores (or replaces) the task built for a stored instance; throws `store-corrupt` when the instance is unknown. */
  putTask(task: Task): void;
  getTask(id: string): Task | undefined;
  /**
   * Adds one scored attempt unless an attempt with this `key` was recorded before (a result
   * delivered twice counts once); one transaction.
   */
  recordAttemptOnce(key: string, id: string, outcome: AttemptOutcome): RecordOnceResult;
  /** Instance counts per (repo, strategy, attempts, solved): what the growth policy reads. */
  armOutcomes(): ArmOutcomeCount[];
  /** Registers a repo for growth rounds, or updates its spec and weight; true when it was new. */
  putRepo(repo: Omit<RegisteredRepo, 'addedAt'>): boolean;
  /** Registered repos, by name. */
  listRepos(): RegisteredRepo[];
  /** Unregisters a repo (by `owner/name` or by the spec it was added with); false when none matched. Its instances stay. */
  removeRepo(repoOrSpec: string): boolean;
  /** Stores a growth round, replacing the stored one with its id. */
  putRound(round: GrowthRound): void;
  getRound(id: string): GrowthRound | undefined;
  /** Stored rounds, oldest first. */
  listRounds(): GrowthRound[];
  /** Remembers that a candidate was rejected, so a resumed run need not validate it again. */
  markRejected(key: RejectionKey, reason: RejectionReason, detail: string): void;
  getRejection(key: RejectionKey): Rejection | undefined;
  /** Keeps a bundle script's cold run on a clean tree, so a later injection of the same commit need not run it again. */
  putCleanRun(key: CleanRunKey, run: Omit<CleanRun, 'ranAt'>): void;
  /** The kept run of `key`, or undefined (also when its row does not hold one: it is then run again and replaced). */
  getCleanRun(key: CleanRunKey): CleanRun | undefined;
  close(): void;
}

/** The hash the pool dedupes patches by; use it for {@link RejectionKey.patchHash} too. */
export function hashPatch(patch: string): string {
  return sha256(patch);
}

interface StatsRow {
  attempts: number;
  solved: number;
  reward_sum: number;
}

function toStats(row: StatsRow): InstanceStats {
  return {
    attempts: row.attempts,
    solved: row.solved,
    meanReward: row.attempts === 0 ? null : row.reward_sum / row.attempts,
    solveRate: row.attempts === 0 ? null : row.solved / row.attempts,
  };
}

interface SpreadSqlRow {
  key: string;
  instances: number;
  untried: number | null;
  too_hard: number | null;
  frontier: number | null;
  too_easy: number | null;
  attempts: number | null;
  solved: number | null;
  reward_sum: number | null;
  mean_solve_rate: number | null;
}

function toSpread(row: SpreadSqlRow): SpreadRow {
  const attempts = row.attempts ?? 0;
  return {
    key: row.key,
    instances: row.instances,
    untried: row.untried ?? 0,
    tooHard: row.too_hard ?? 0,
    frontier: row.frontier ?? 0,
    tooEasy: row.too_easy ?? 0,
    attempts,
    solved: row.solved ?? 0,
    meanReward: attempts === 0 ? null : (row.reward_sum ?? 0) / attempts,
    meanSolveRate: row.mean_solve_rate,
  };
}

// SUM over an empty selection is NULL; toSpread turns those into zeros.
const SPREAD_COLUMNS = `COUNT(*) AS instances,
  SUM(i.attempts = 0) AS untried,
  SUM(i.attempts > 0 AND i.solved = 0) AS too_hard,
  SUM(i.solved > 0 AND i.solved < i.attempts) AS frontier,
  SUM(i.attempts > 0 AND i.solved = i.attempts) AS too_easy,
  SUM(i.attempts) AS attempts,
  SUM(i.solved) AS solved,
  SUM(i.reward_sum) AS reward_sum,
  AVG(CASE WHEN i.attempts > 0 THEN CAST(i.solved AS REAL) / i.attempts END) AS mean_solve_rate`;

/** SQL selecting instances in `bands` once they have `minAttempts` attempts (an integer, so inlined). */
function bandCondition(bands: readonly Band[], minAttempts: number): string {
  const m = Math.max(1, Math.floor(minAttempts));
  const sql: Record<Band, string> = {
    untried: `i.attempts < ${m}`,
    'too-hard': `(i.attempts >= ${m} AND i.solved = 0)`,
    frontier: `(i.attempts >= ${m} AND i.solved > 0 AND i.solved < i.attempts)`,
    'too-easy': `(i.attempts >= ${m} AND i.solved = i.attempts)`,
  };
  return bands.length === 0 ? '0' : `(${bands.map((band) => sql[band]).join(' OR ')})`;
}

function whereClause(filter: PoolFilter, afterId?: string): { sql: string; params: string[] } {
  const conditions: string[] = [];
  const params: string[] = [];
  for (const column of ['repo', 'strategy', 'family'] as const) {
    const value = filter[column];
    if (value !== undefined) {
      conditions.push(`i.${column} = ?`);
      params.push(value);
    }
  }
  if (filter.hasTask !== undefined) conditions.push(filter.hasTask ? 't.instance_id IS NOT NULL' : 't.instance_id IS NULL');
  if (filter.bands !== undefined) conditions.push(bandCondition(filter.bands, filter.minAttempts ?? 1));
  if (afterId !== undefined) {
    conditions.push('i.instance_id > ?');
    params.push(afterId);
  }
  return { sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params };
}

/** The band of an instance row; the same boundaries as {@link SPREAD_COLUMNS}. */
const BAND = `CASE WHEN i.attempts = 0 THEN 'untried' WHEN i.solved = 0 THEN 'too-hard' WHEN i.solved = i.attempts THEN 'too-easy' ELSE 'frontier' END`;

/** Listings join the task table, so filters on it and the entries' tasks come from one query. */
const FROM = 'FROM instances i LEFT JOIN tasks t ON t.instance_id = i.instance_id';

/** Counts join the task table only when they filter on it: the join costs seconds at 100k rows. */
function countFrom(filter: PoolFilter): string {
  return filter.hasTask === undefined ? 'FROM instances i' : FROM;
}

class SqlitePool implements Pool {
  readonly dir: string;
  private readonly bundlesDir: string;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    dir: string,
    private readonly db: Database.Database,
    private readonly logger: Logger,
  ) {
    this.dir = dir;
    this.bundlesDir = join(dir, 'bundles');
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private parseInstance(body: string, id: string): Instance {
    try {
      return JSON.parse(body) as Instance;
    } catch (error) {
      throw new EnvgenError('store-corrupt', `the pool row of ${id} holds unreadable JSON (${describeError(error)}); delete ${this.dir} and re-run envgen inject`, {
        cause: error,
      });
    }
  }

  private parseTask(body: string | null, id: string): Task | null {
    if (body === null) return null;
    try {
      return JSON.parse(body) as Task;
    } catch (error) {
      throw new EnvgenError('store-corrupt', `the task of ${id} holds unreadable JSON (${describeError(error)}); rebuild it with: envgen tasks --rebuild`, {
        cause: error,
      });
    }
  }

  private findDuplicatePatch(instance: Instance, patchHash: string): string | undefined {
    const row = this.statement('SELECT instance_id FROM instances WHERE repo = ? AND base_commit = ? AND patch_hash = ?').get(
      instance.repo,
      instance.base_commit,
      patchHash,
    ) as { instance_id: string } | undefined;
    return row?.instance_id;
  }

  private precheck(instance: Instance, patchHash: string): AddResult | undefined {
    const stored = this.statement('SELECT patch_hash FROM instances WHERE instance_id = ?').get(instance.instance_id) as { patch_hash: string } | undefined;
    // hash8 is 32 bits: two different bugs of one repo, commit and strategy can share an id.
    if (stored !== undefined) return stored.patch_hash === patchHash ? { status: 'exists' } : { status: 'id-collision' };
    const duplicateOf = this.findDuplicatePatch(instance, patchHash);
    if (duplicateOf === undefined) return undefined;
    // Another process may commit this very instance between the two reads above.
    return duplicateOf === instance.instance_id ? { status: 'exists' } : { status: 'duplicate-patch', duplicateOf };
  }

  addInstance(instance: Instance, bundle: BundleFiles): AddResult {
    const id = instance.instance_id;
    const target = this.bundleDir(id);
    const patchHash = hashPatch(instance.patch);
    // Cheap answer for a resumed run, before writing any file.
    const early = this.precheck(instance, patchHash);
    if (early) return early;

    const staging = stageBundle(this.bundlesDir, bundle);
    let placed = false;
    try {
      // The write lock is held from here to the commit, so no other process is between its
      // rename and its commit: a bundle directory without a row is a killed writer's orphan.
      return this.db
        .transaction((): AddResult => {
          const settled = this.precheck(instance, patchHash);
          if (settled) return settled;
          if (existsSync(target)) rmSync(target, { recursive: true, force: true });
          renameSync(staging, target);
          placed = true;
          this.statement(
            `INSERT INTO instances (instance_id, repo, base_commit, strategy, family, patch_hash, f2p_count, p2p_count, created_at, body, bundle_hash)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            id,
            instance.repo,
            instance.base_commit,
            instance.strategy,
            instance.family,
            patchHash,
            instance.FAIL_TO_PASS.length,
            instance.PASS_TO_PASS.length,
            instance.created_at,
            JSON.stringify(instance),
            hashBundle(bundle),
          );
          return { status: 'added' };
        })
        .immediate();
    } catch (error) {
      if (placed) rmSync(target, { recursive: true, force: true });
      throw error;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  hasInstance(id: string): boolean {
    return this.statement('SELECT 1 FROM instances WHERE instance_id = ?').get(id) !== undefined;
  }

  getInstance(id: string): Instance | undefined {
    const row = this.statement('SELECT body FROM instances WHERE instance_id = ?').get(id) as { body: string } | undefined;
    return row === undefined ? undefined : this.parseInstance(row.body, id);
  }

  bundleDir(id: string): string {
    assertSafeId(id);
    return join(this.bundlesDir, id);
  }

  readBundle(id: string): BundleFiles {
    const row = this.statement('SELECT bundle_hash FROM instances WHERE instance_id = ?').get(id) as { bundle_hash: string } | undefined;
    if (row === undefined) {
      throw new EnvgenError('store-corrupt', `instance ${id} is not in the pool at ${this.dir}; list what is there with: envgen pool list`);
    }
    const files = readBundleDir(this.bundleDir(id), id);
    if (hashBundle(files) !== row.bundle_hash) {
      throw new EnvgenError(
        'store-corrupt',
        `the bundle of ${id} in ${this.bundleDir(id)} differs from what was stored (changed by hand, or cut short by a system crash); re-run envgen inject for its repo to rewrite it`,
      );
    }
    return files;
  }

  *listInstances(options: ListOptions = {}): IterableIterator<PoolEntry> {
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    let offset = options.offset ?? 0;
    let after: string | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(PAGE_SIZE, remaining);
      // Keyset pagination: each page starts after the last id seen, so rows added meanwhile
      // never shift the window and no statement stays open while the caller works.
      const { sql, params } = whereClause(options, after);
      const rows = this.statement(
        `SELECT i.instance_id, i.body, i.attempts, i.solved, i.reward_sum, t.body AS task ${FROM} ${sql} ORDER BY i.instance_id LIMIT ? OFFSET ?`,
      ).all(...params, pageSize, offset) as Array<StatsRow & { instance_id: string; body: string; task: string | null }>;
      offset = 0;
      for (const row of rows) {
        yield { instance: this.parseInstance(row.body, row.instance_id), stats: toStats(row), task: this.parseTask(row.task, row.instance_id) };
      }
      const last = rows.at(-1);
      if (last === undefined || rows.length < pageSize) return;
      after = last.instance_id;
      remaining -= rows.length;
    }
  }

  count(filter: PoolFilter = {}): number {
    const { sql, params } = whereClause(filter);
    return (this.statement(`SELECT COUNT(*) AS n ${countFrom(filter)} ${sql}`).get(...params) as { n: number }).n;
  }

  countsBy(column: GroupColumn, filter: PoolFilter = {}): GroupCount[] {
    const { sql, params } = whereClause(filter);
    return this.statement(`SELECT i.${column} AS key, COUNT(*) AS count ${countFrom(filter)} ${sql} GROUP BY i.${column} ORDER BY count DESC, key`).all(
      ...params,
    ) as GroupCount[];
  }

  spread(groupBy: GroupColumn | null, filter: PoolFilter = {}): SpreadRow[] {
    const { sql, params } = whereClause(filter);
    if (groupBy === null) {
      const row = this.statement(`SELECT 'all' AS key, ${SPREAD_COLUMNS} ${countFrom(filter)} ${sql}`).get(...params) as SpreadSqlRow;
      return [toSpread(row)];
    }
    const rows = this.statement(
      `SELECT i.${groupBy} AS key, ${SPREAD_COLUMNS} ${countFrom(filter)} ${sql} GROUP BY i.${groupBy} ORDER BY instances DESC, key`,
    ).all(...params) as SpreadSqlRow[];
    return rows.map(toSpread);
  }

  createdRange(filter: PoolFilter = {}): { first: string; last: string } | null {
    const { sql, params } = whereClause(filter);
    const row = this.statement(`SELECT MIN(i.created_at) AS first, MAX(i.created_at) AS last ${countFrom(filter)} ${sql}`).get(...params) as {
      first: string | null;
      last: string | null;
    };
    return row.first === null || row.last === null ? null : { first: row.first, last: row.last };
  }

  growth(periodLength: number, filter: PoolFilter = {}): GrowthRow[] {
    const { sql, params } = whereClause(filter);
    return this.statement(
      `SELECT substr(i.created_at, 1, ?) AS period, i.family AS family, ${BAND} AS band, COUNT(*) AS count ${countFrom(filter)} ${sql} GROUP BY period, family, band ORDER BY period, family, band`,
    ).all(periodLength, ...params) as GrowthRow[];
  }

  solveRateHistogram(bins: number, filter: PoolFilter = {}): number[] {
    const { sql, params } = whereClause(filter);
    const tried = sql === '' ? 'WHERE i.attempts > 0' : `${sql} AND i.attempts > 0`;
    const rows = this.statement(
      `SELECT MIN(CAST(i.solved * ? / i.attempts AS INTEGER), ? - 1) AS bin, COUNT(*) AS count ${countFrom(filter)} ${tried} GROUP BY bin`,
    ).all(bins, bins, ...params) as Array<{ bin: number; count: number }>;
    const counts = Array.from({ length: bins }, () => 0);
    for (const row of rows) counts[row.bin] = row.count;
    return counts;
  }

  listFrontier(limit: number, filter: PoolFilter = {}): PoolEntry[] {
    const { sql, params } = whereClause(filter);
    const frontier = `${sql === '' ? 'WHERE' : `${sql} AND`} i.solved > 0 AND i.solved < i.attempts`;
    // Ranked on the narrow columns first: sorting whole rows would carry every body through the sort.
    const rows = this.statement(
      `WITH hardest AS (
         SELECT i.instance_id, CAST(i.solved AS REAL) / i.attempts AS rate, i.attempts AS tries ${countFrom(filter)} ${frontier}
         ORDER BY rate, tries DESC, i.instance_id LIMIT ?)
       SELECT i.instance_id, i.body, i.attempts, i.solved, i.reward_sum, t.body AS task
       FROM hardest h JOIN instances i ON i.instance_id = h.instance_id LEFT JOIN tasks t ON t.instance_id = i.instance_id
       ORDER BY h.rate, h.tries DESC, h.instance_id`,
    ).all(...params, limit) as Array<StatsRow & { instance_id: string; body: string; task: string | null }>;
    return rows.map((row) => ({ instance: this.parseInstance(row.body, row.instance_id), stats: toStats(row), task: this.parseTask(row.task, row.instance_id) }));
  }

  rejectionCounts(): RejectionCount[] {
    return this.statement('SELECT repo, reason, COUNT(*) AS count FROM rejections GROUP BY repo, reason ORDER BY count DESC, repo, reason').all() as RejectionCount[];
  }

  dataVersion(): number {
    return this.statement('PRAGMA data_version').pluck().get() as number;
  }

  recordAttempt(id: string, outcome: AttemptOutcome): InstanceStats | undefined {
    if (!Number.isFinite(outcome.reward)) {
      throw new EnvgenError('usage', `the reward of an attempt at ${id} must be a finite number, got ${outcome.reward}`);
    }
    // One UPDATE is one write transaction: concurrent writers queue on the lock, none is lost.
    const row = this.statement(
      'UPDATE instances SET attempts = attempts + 1, solved = solved + ?, reward_sum = reward_sum + ? WHERE instance_id = ? RETURNING attempts, solved, reward_sum',
    ).get(outcome.solved ? 1 : 0, outcome.reward, id) as StatsRow | undefined;
    return row === undefined ? undefined : toStats(row);
  }

  stats(id: string): InstanceStats | undefined {
    const row = this.statement('SELECT attempts, solved, reward_sum FROM instances WHERE instance_id = ?').get(id) as StatsRow | undefined;
    return row === undefined ? undefined : toStats(row);
  }

  putTask(task: Task): void {
    const result = this.statement(
      `INSERT INTO tasks (instance_id, statement_kind, body, built_at) SELECT instance_id, ?, ?, ? FROM instances WHERE instance_id = ?
       ON CONFLICT (instance_id) DO UPDATE SET statement_kind = excluded.statement_kind, body = excluded.body, built_at = excluded.built_at`,
    ).run(task.problem_statement.kind, JSON.stringify(task), new Date().toISOString(), task.instance_id);
    if (result.changes === 0) {
      throw new EnvgenError('store-corrupt', `cannot store a task for ${task.instance_id}: the instance is not in the pool at ${this.dir}; list what is there with: envgen pool list`);
    }
  }

  getTask(id: string): Task | undefined {
    const row = this.statement('SELECT body FROM tasks WHERE instance_id = ?').get(id) as { body: string } | undefined;
    return row === undefined ? undefined : (this.parseTask(row.body, id) ?? undefined);
  }

  recordAttemptOnce(key: string, id: string, outcome: AttemptOutcome): RecordOnceResult {
    return this.db
      .transaction((): RecordOnceResult => {
        if (!this.hasInstance(id)) return { status: 'unknown-instance' };
        const fresh = this.statement('INSERT OR IGNORE INTO recorded_outcomes (outcome_key, instance_id) VALUES (?, ?)').run(key, id).changes > 0;
        if (!fresh) return { status: 'duplicate' };
        const stats = this.recordAttempt(id, outcome);
        return stats === undefined ? { status: 'unknown-instance' } : { status: 'recorded', stats };
      })
      .immediate();
  }

  armOutcomes(): ArmOutcomeCount[] {
    return this.statement('SELECT repo, strategy, attempts, solved, COUNT(*) AS instances FROM instances GROUP BY repo, strategy, attempts, solved ORDER BY repo, strategy, attempts, solved').all() as ArmOutcomeCount[];
  }

  putRepo(repo: Omit<RegisteredRepo, 'addedAt'>): boolean {
    return this.db
      .transaction((): boolean => {
        const existed = this.statement('SELECT 1 FROM repos WHERE repo = ?').get(repo.repo) !== undefined;
        this.statement('INSERT INTO repos (repo, spec, weight, added_at) VALUES (?, ?, ?, ?) ON CONFLICT (repo) DO UPDATE SET spec = excluded.spec, weight = excluded.weight').run(
          repo.repo,
          repo.spec,
          repo.weight,
          new Date().toISOString(),
        );
        return !existed;
      })
      .immediate();
  }

  listRepos(): RegisteredRepo[] {
    return this.statement('SELECT repo, spec, weight, added_at AS addedAt FROM repos ORDER BY repo').all() as RegisteredRepo[];
  }

  removeRepo(repoOrSpec: string): boolean {
    return this.statement('DELETE FROM repos WHERE repo = ? OR spec = ?').run(repoOrSpec, repoOrSpec).changes > 0;
  }

  putRound(round: GrowthRound): void {
    this.statement('INSERT OR REPLACE INTO rounds (round_id, started_at, status, body) VALUES (?, ?, ?, ?)').run(round.roundId, round.startedAt, round.status, JSON.stringify(round));
  }

  getRound(id: string): GrowthRound | undefined {
    const row = this.statement('SELECT body FROM rounds WHERE round_id = ?').get(id) as { body: string } | undefined;
    return row === undefined ? undefined : (JSON.parse(row.body) as GrowthRound);
  }

  listRounds(): GrowthRound[] {
    return (this.statement('SELECT body FROM rounds ORDER BY started_at, round_id').all() as Array<{ body: string }>).map((row) => JSON.parse(row.body) as GrowthRound);
  }

  markRejected(key: RejectionKey, reason: RejectionReason, detail: string): void {
    this.statement(
      'INSERT OR REPLACE INTO rejections (repo, base_commit, profile_hash, patch_hash, reason, detail, rejected_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(key.repo, key.commit, key.profileHash, key.patchHash, reason, detail, new Date().toISOString());
  }

  getRejection(key: RejectionKey): Rejection | undefined {
    const row = this.statement(
      'SELECT reason, detail, rejected_at FROM rejections WHERE repo = ? AND base_commit = ? AND profile_hash = ? AND patch_hash = ?',
    ).get(key.repo, key.commit, key.profileHash, key.patchHash) as { reason: RejectionReason; detail: string; rejected_at: string } | undefined;
    return row === undefined ? undefined : { reason: row.reason, detail: row.detail, rejectedAt: row.rejected_at };
  }

  putCleanRun(key: CleanRunKey, run: Omit<CleanRun, 'ranAt'>): void {
    this.statement('INSERT OR REPLACE INTO clean_runs (repo, base_commit, profile_hash, script_hash, body, ran_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      key.repo,
      key.commit,
      key.profileHash,
      key.scriptHash,
      JSON.stringify({ results: run.results, seconds: run.seconds }),
      new Date().toISOString(),
    );
  }

  getCleanRun(key: CleanRunKey): CleanRun | undefined {
    const row = this.statement('SELECT body, ran_at FROM clean_runs WHERE repo = ? AND base_commit = ? AND profile_hash = ? AND script_hash = ?').get(
      key.repo,
      key.commit,
      key.profileHash,
      key.scriptHash,
    ) as { body: string; ran_at: string } | undefined;
    if (row === undefined) return undefined;
    let body: unknown;
    try {
      body = JSON.parse(row.body);
    } catch {
      return undefined;
    }
    if (typeof body !== 'object' || body === null) return undefined;
    const { results, seconds } = body as { results?: unknown; seconds?: unknown };
    if (typeof seconds !== 'number' || typeof results !== 'object' || results === null) return undefined;
    const statuses = Object.values(results);
    if (statuses.some((status) => status !== 'passed' && status !== 'failed' && status !== 'skipped')) return undefined;
    return { results: results as CleanRun['results'], seconds, ranAt: row.ran_at };
  }

  /** Names in the bundles directory, read as a stream so a large pool is never listed at once. */
  private *bundleNames(): Generator<string> {
    const dir = opendirSync(this.bundlesDir);
    try {
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) yield entry.name;
    } finally {
      dir.closeSync();
    }
  }

  /**
   * Removes what killed writers left behind: staging directories of dead processes, and
   * bundle directories whose row never committed. Every row has its directory, so when the
   * directories are as many as the rows there is no orphan and no per-name lookup is needed.
   * Orphans are found without a lock and confirmed under the write lock, so a live writer
   * between its rename and its commit is safe.
   */
  sweepOrphans(): void {
    let abandoned = 0;
    let bundles = 0;
    for (const name of this.bundleNames()) {
      if (!isStaging(name)) bundles += 1;
      else if (isAbandonedStaging(name)) {
        rmSync(join(this.bundlesDir, name), { recursive: true, force: true });
        abandoned += 1;
      }
    }
    const orphans: string[] = [];
    if (bundles > this.count()) {
      for (const name of this.bundleNames()) if (!isStaging(name) && !this.hasInstance(name)) orphans.push(name);
    }
    if (orphans.length > 0) {
      this.db
        .transaction(() => {
          for (const name of orphans) {
            if (!this.hasInstance(name)) rmSync(join(this.bundlesDir, name), { recursive: true, force: true });
          }
        })
        .immediate();
    }
    if (abandoned + orphans.length > 0) {
      this.logger.warn(`pool: removed ${orphans.length} bundle(s) without an index row and ${abandoned} abandoned staging dir(s) left by a killed run`, {
        pool: this.dir,
      });
    }
  }

  close(): void {
    this.db.close();
  }
}

/**
 * Puts the index in WAL mode (it stays so once set). Switching needs the file to itself, and
 * SQLite answers SQLITE_BUSY at once, without its busy handler, while another process is
 * opening a new pool too: retry with backoff until the busy timeout.
 */
function useWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waitMs = 1; ; waitMs = Math.min(waitMs * 2, 50)) {
    try {
      if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (!(error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, waitMs);
    }
  }
}

/**
 * Opens (creating if needed) the pool at `<home>/pool`: the SQLite index `index.sqlite` in
 * WAL mode with a busy timeout so several processes can write, and the bundle directories
 * under `bundles/`. Cleans up after killed writers and refuses an index from a newer envgen.
 */
export function openPool(home: string, options: OpenPoolOptions = {}): Pool {
  const dir = join(home, 'pool');
  mkdirSync(join(dir, 'bundles'), { recursive: true });
  const file = join(dir, 'index.sqlite');
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: busyTimeoutMs });
  } catch (error) {
    throw new EnvgenError('store-corrupt', `cannot open the pool index ${file} (${describeError(error)}); check the path and its permissions`, { cause: error });
  }
  try {
    useWal(db, busyTimeoutMs);
    db.pragma('synchronous = NORMAL');
    migrateSchema(db, file);
    const pool = new SqlitePool(dir, db, options.logger ?? silentLogger);
    pool.sweepOrphans();
    return pool;
  } catch (error) {
    db.close();
    throw error;
  }
}
