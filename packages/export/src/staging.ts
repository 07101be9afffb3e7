import { randomBytes } from 'node:crypto';
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '@envgen/core';
import type { Logger } from '@envgen/core';

/**
 * Exports are written under `<out>/.envgen-export.<pid>.<random>.<label>` and renamed into
 * place when complete, so a killed export leaves no half file, only a hidden entry that the
 * next export into the same directory removes (its pid is dead by then).
 */
const STAGING_PREFIX = '.envgen-export.';

/** A fresh staging path inside `dir` (nothing is created). */
export function makeStagingPath(dir: string, label: string): string {
  return join(dir, `${STAGING_PREFIX}${process.pid}.${randomBytes(6).toString('hex')}.${label}`);
}

/** Removes staging entries in `dir` left by exports that were killed; returns how many. */
export function sweepStaging(dir: string, logger: Logger): number {
  let removed = 0;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const pid = Number(name.slice(STAGING_PREFIX.length).split('.')[0]);
    if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid)) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    removed += 1;
  }
  if (removed > 0) logger.warn(`export: removed ${removed} unfinished export(s) left in ${dir} by a killed run`, { dir });
  return removed;
}

/**
 * Renames `from` to `to`, replacing what is there: a file is replaced in one rename; a
 * non-empty directory is moved aside first, then removed, so `to` is never half written.
 */
export function replacePath(from: string, to: string, scratchDir: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
    const old = makeStagingPath(scratchDir, 'old');
    renameSync(to, old);
    renameSync(from, to);
    rmSync(old, { recursive: true, force: true });
  }
}
