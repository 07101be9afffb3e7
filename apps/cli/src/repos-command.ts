import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { RegisteredRepo } from '@envgen/pool';
import { acquireRepo, parseRepoSpec } from '@envgen/repo';
import { formatTable } from './pool-command.js';
import type { Progress } from './progress.js';

/** What `envgen repos add` did. */
export interface ReposAddReport {
  repo: string;
  spec: string;
  weight: number;
  commit: string;
  /** False when the repo was registered already (its spec and weight are updated). */
  added: boolean;
}

/** A registered repo with how many instances the pool holds of it. */
export interface ListedRepo extends RegisteredRepo {
  instances: number;
}

/** `envgen repos add`: acquires the repo once (so a bad spec fails now, not in a nightly round) and registers it for growth. */
export async function runReposAdd(options: { spec: string; weight?: number }, settings: Settings, logger: Logger, progress: Progress): Promise<ReposAddReport> {
  const weight = options.weight ?? 1;
  if (!(Number.isFinite(weight) && weight > 0)) throw new EnvgenError('usage', `--weight must be a number above 0, got ${options.weight}`);
  progress.phase(`acquiring ${options.spec}`);
  const resolved = await acquireRepo(parseRepoSpec(options.spec), { home: settings.home, githubBaseUrl: settings.githubUrl, logger });
  const repo = `${resolved.owner}/${resolved.name}`;
  const pool = openPool(settings.home, { logger });
  try {
    const added = pool.putRepo({ repo, spec: options.spec, weight });
    return { repo, spec: options.spec, weight, commit: resolved.commit, added };
  } finally {
    pool.close();
  }
}

/** `envgen repos list`. */
export function runReposList(settings: Settings, logger: Logger): ListedRepo[] {
  const pool = openPool(settings.home, { logger });
  try {
    const counts = new Map(pool.countsBy('repo').map((group) => [group.key, group.count]));
    return pool.listRepos().map((repo) => ({ ...repo, instances: counts.get(repo.repo) ?? 0 }));
  } finally {
    pool.close();
  }
}

/** `envgen repos remove`: unregisters a repo; its instances stay in the pool. */
export function runReposRemove(repoOrSpec: string, settings: Settings, logger: Logger): { removed: boolean; repo: string } {
  const pool = openPool(settings.home, { logger });
  try {
    const removed = pool.removeRepo(repoOrSpec);
    if (!removed) throw new EnvgenError('usage', `${repoOrSpec} is not registered; see the registered repos with: envgen repos list`);
    return { removed, repo: repoOrSpec };
  } finally {
    pool.close();
  }
}

/** The human form of `envgen repos list`. */
export function formatReposList(repos: readonly ListedRepo[]): string {
  if (repos.length === 0) return 'no repo is registered for growth; add one with: envgen repos add debian:toolz';
  const rows = repos.map((repo) => [repo.repo, repo.spec, String(repo.weight), String(repo.instances), repo.addedAt.slice(0, 10)]);
  return formatTable(['repo', 'spec', 'weight', 'instances', 'added'], rows, new Set([2, 3]));
}
