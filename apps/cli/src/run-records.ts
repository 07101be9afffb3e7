import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EnvgenError, describeError } from '@envgen/core';
import type { InjectRunSummary, SolverRunSummary } from '@envgen/report';

/** The kinds of runs envgen keeps a summary of, under `<home>/runs/<kind>/`. */
export type RunKind = 'inject' | 'solver';

interface RunSummaries {
  inject: InjectRunSummary;
  solver: SolverRunSummary;
}

function runsDir(home: string, kind: RunKind): string {
  return join(home, 'runs', kind);
}

/**
 * Keeps the summary of a finished run as `<home>/runs/<kind>/<time>-<random>.json` (written
 * aside and renamed, so a reader never sees half a file). The report reads them back for
 * yield, validation speed and solver figures. Only the summary's fields are kept.
 */
export function recordRun<K extends RunKind>(home: string, kind: K, summary: RunSummaries[K]): string {
  const dir = runsDir(home, kind);
  mkdirSync(dir, { recursive: true });
  const name = `${summary.finishedAt.replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}.json`;
  const file = join(dir, name);
  writeFileSync(`${file}.partial`, `${JSON.stringify(summary)}\n`);
  renameSync(`${file}.partial`, file);
  return file;
}

/** The summaries of every recorded run of `kind`, oldest first. */
export function readRuns<K extends RunKind>(home: string, kind: K): Array<RunSummaries[K]> {
  const dir = runsDir(home, kind);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json')).sort();
  } catch {
    return [];
  }
  return names.map((name) => {
    try {
      return JSON.parse(readFileSync(join(dir, name), 'utf8')) as RunSummaries[K];
    } catch (error) {
      throw new EnvgenError('store-corrupt', `the run record ${join(dir, name)} is unreadable (${describeError(error)}); delete it and make the report again`, { cause: error });
    }
  });
}

/** The fields of an inject run the report uses (the instance ids and details are left out). */
export function summarizeInjectRun(report: Omit<InjectRunSummary, 'finishedAt'>, finishedAt: Date): InjectRunSummary {
  const { repo, seed, tried, kept, known, rejected, byStrategy, seconds, secondsPerKept } = report;
  return { finishedAt: finishedAt.toISOString(), repo, seed, tried, kept, known, rejected, byStrategy, seconds, secondsPerKept };
}

/** The fields of a solver run the report uses. */
export function summarizeSolverRun(report: Omit<SolverRunSummary, 'finishedAt'>, finishedAt: Date): SolverRunSummary {
  const { runId, solver, model, scored, meanReward, solveRate, levels, seconds } = report;
  return { finishedAt: finishedAt.toISOString(), runId, solver, model, scored, meanReward, solveRate, levels, seconds };
}
