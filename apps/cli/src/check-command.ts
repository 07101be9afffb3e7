import type { Settings } from '@envgen/config';
import type { Logger } from '@envgen/core';
import { checkBundle, readBundle } from '@envgen/bundle';
import { loadCachedBaseline } from '@envgen/testrun';
import type { BundleCheckReport, CheckThresholds } from '@envgen/bundle';
import { checkoutRepo, resolveProfile } from './env-command.js';
import type { Progress } from './progress.js';

/** Options of `envgen check`. */
export interface CheckOptions {
  /** Directory of the bundle to check. */
  bundle: string;
  /** The repo the bundle was made for, as `--repo` takes it. */
  repo: string;
  thresholds?: Partial<CheckThresholds>;
}

/** What `envgen check` found; `--json` prints exactly this object. */
export interface CheckReport extends BundleCheckReport {
  bundle: string;
  repo: string;
  commit: string;
  seconds: number;
}

/**
 * `envgen check`: reads a bundle made anywhere, acquires the repo and a clean worktree of it,
 * and runs the seven consistency checks of DESIGN.md in the sandbox.
 */
export async function runCheck(options: CheckOptions, settings: Settings, logger: Logger, progress: Progress): Promise<CheckReport> {
  const started = performance.now();
  progress.phase(`reading the bundle ${options.bundle}`);
  const bundle = await readBundle(options.bundle);
  const { provider, repo, worktree } = await checkoutRepo(options.repo, settings, logger, progress);
  try {
    progress.phase('detecting the test profile');
    const profile = await resolveProfile(worktree.path, repo, settings, provider);
    // The suite's size, when `envgen env` or `inject` left its baseline: a big suite may print more.
    const baseline = await loadCachedBaseline(settings.home, repo.commit, profile).catch(() => null);
    const report = await checkBundle({
      bundle,
      worktree: worktree.path,
      profile,
      sandboxProvider: provider,
      ...(baseline === null ? {} : { tests: Object.keys(baseline.results).length }),
      ...(options.thresholds === undefined ? {} : { thresholds: options.thresholds }),
      ...(settings.sandbox === 'docker' ? { image: settings.dockerImage } : {}),
      logger,
      onProgress: (message) => progress.phase(message),
    });
    return {
      bundle: options.bundle,
      repo: `${repo.owner}/${repo.name}`,
      commit: repo.commit,
      ...report,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await worktree.remove();
  }
}

/** The human report: one line per check, then the consistency part of the injector reward. */
export function formatCheckReport(report: CheckReport): string {
  const lines = report.checks.map((check) => `${check.passed ? '✓' : '✗'} ${check.name} — ${check.evidence}`);
  const failed = report.checks.filter((check) => !check.passed).length;
  lines.push(
    '',
    `${report.repo}@${report.commit.slice(0, 8)}: ${failed === 0 ? `all ${report.checks.length} checks pass` : `${failed} of ${report.checks.length} checks fail`} (${report.seconds.toFixed(1)}s)`,
    `injector consistency reward: ${report.injectorConsistency}`,
  );
  return lines.join('\n');
}
