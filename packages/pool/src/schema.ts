import type Database from 'better-sqlite3';
import { EnvgenError } from '@envgen/core';

/**
 * Schema migrations: entry `i` takes the index from version `i` to `i + 1`. Later issues
 * (gold labels, problem statements, rollouts) append entries; a shipped entry never changes.
 * Instances are stored whole as JSON in `body`, so new optional Instance fields need no
 * migration; the columns beside it exist to filter, count and dedupe without parsing JSON.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE instances (
     instance_id TEXT PRIMARY KEY,
     repo TEXT NOT NULL,
     base_commit TEXT NOT NULL,
     strategy TEXT NOT NULL,
     family TEXT NOT NULL,
     patch_hash TEXT NOT NULL,
     f2p_count INTEGER NOT NULL,
     p2p_count INTEGER NOT NULL,
     created_at TEXT NOT NULL,
     body TEXT NOT NULL,
     bundle_hash TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     solved INTEGER NOT NULL DEFAULT 0,
     reward_sum REAL NOT NULL DEFAULT 0,
     UNIQUE (repo, base_commit, patch_hash)
   );
   CREATE INDEX instances_by_repo ON instances (repo, instance_id);
   CREATE INDEX instances_by_strategy ON instances (strategy, instance_id);
   CREATE INDEX instances_by_family ON instances (family, instance_id);
   CREATE TABLE rejections (
     repo TEXT NOT NULL,
     base_commit TEXT NOT NULL,
     profile_hash TEXT NOT NULL,
     patch_hash TEXT NOT NULL,
     reason TEXT NOT NULL,
     detail TEXT NOT NULL,
     rejected_at TEXT NOT NULL,
     PRIMARY KEY (repo, base_commit, profile_hash, patch_hash)
   ) WITHOUT ROWID;`,
  // Tasks (issue 4): one per instance, replaced when rebuilt; the instance row is never rewritten.
  `CREATE TABLE tasks (
     instance_id TEXT PRIMARY KEY REFERENCES instances (instance_id),
     statement_kind TEXT NOT NULL,
     body TEXT NOT NULL,
     built_at TEXT NOT NULL
   ) WITHOUT ROWID;`,
  // Growth (issue 10): the repos rounds grow, the rounds themselves, and the keys of outcomes
  // already recorded, so an outcome delivered twice (a re-run job) counts once.
  `CREATE TABLE repos (
     repo TEXT PRIMARY KEY,
     spec TEXT NOT NULL,
     weight REAL NOT NULL,
     added_at TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE rounds (
     round_id TEXT PRIMARY KEY,
     started_at TEXT NOT NULL,
     status TEXT NOT NULL,
     body TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE recorded_outcomes (
     outcome_key TEXT PRIMARY KEY,
     instance_id TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX instances_by_arm ON instances (repo, strategy, attempts, solved);`,
  // The bundle script's clean runs (issue 9): one cold run per commit, profile and script
  // serves every later injection of that commit.
  `CREATE TABLE clean_runs (
     repo TEXT NOT NULL,
     base_commit TEXT NOT NULL,
     profile_hash TEXT NOT NULL,
     script_hash TEXT NOT NULL,
     body TEXT NOT NULL,
     ran_at TEXT NOT NULL,
     PRIMARY KEY (repo, base_commit, profile_hash, script_hash)
   ) WITHOUT ROWID;`,
];

/** The schema version this envgen writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

function readVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the index to {@link SCHEMA_VERSION}. Runs under the write lock and re-reads the
 * version inside it, so processes opening a fresh pool at once migrate it exactly once.
 */
export function migrateSchema(db: Database.Database, file: string): void {
  const check = (version: number): void => {
    if (version > SCHEMA_VERSION) {
      throw new EnvgenError(
        'store-version',
        `the pool index ${file} has schema version ${version}, newer than this envgen understands (${SCHEMA_VERSION}); upgrade envgen or use another --home`,
      );
    }
  };
  const current = readVersion(db);
  check(current);
  if (current === SCHEMA_VERSION) return;
  db.transaction(() => {
    const version = readVersion(db);
    check(version);
    for (const migration of MIGRATIONS.slice(version)) db.exec(migration);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
