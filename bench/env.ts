/**
 * `envgen env` cold (baseline rebuilt: two sandboxed suite runs, one with coverage) and warm
 * (answered from the baseline cache) against a plain `python3 -m pytest` of the same tests
 * in the same checkout, measured in the same run. Prints medians and ratios.
 *
 *   node --conditions=@envgen/source --import tsx bench/env.ts [runs] [repo...]
 *
 * Bar (issue 2): cold ≤ 3× plain pytest on toolz-sized projects.
 */
import { spawnSync } from 'node:child_process';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { createProgress, resolveProfile, runEnv } from '@envgen/cli';
import { acquireRepo, createWorktree, parseRepoSpec } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { formatTable, median } from './stats.js';

const runs = Number(process.argv[2] ?? 5);
const repos = process.argv.length > 3 ? process.argv.slice(3) : ['debian:toolz', 'debian:markupsafe', 'debian:python-json-patch'];
const home = process.env.ENVGEN_HOME ?? new URL('../.cache/envgen-test-home', import.meta.url).pathname;
const settings = resolveConfig({ env: { ENVGEN_HOME: home } });
const quiet = createProgress({ quiet: true });

async function plainSeconds(repoSpec: string): Promise<number[]> {
  const repo = await acquireRepo(parseRepoSpec(repoSpec), { home: settings.home, logger: silentLogger });
  const worktree = await createWorktree(repo, { home: settings.home });
  try {
    const profile = await resolveProfile(worktree.path, repo, settings, createSandboxProvider('local'));
    const argv = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...profile.testArgs, ...profile.deselect.flatMap((id) => ['--deselect', id])];
    const seconds: number[] = [];
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      const result = spawnSync(profile.python, argv, { cwd: worktree.path, env: { ...process.env, ...profile.env }, stdio: 'pipe' });
      seconds.push((performance.now() - started) / 1000);
      if (result.status !== 0 && result.status !== 1) throw new Error(`plain pytest failed on ${repoSpec}: ${result.stderr.toString()}`);
    }
    return seconds;
  } finally {
    await worktree.remove();
  }
}

const rows: string[][] = [];
for (const repo of repos) {
  const plain = await plainSeconds(repo);
  const cold: number[] = [];
  const warm: number[] = [];
  for (let run = 0; run < runs; run++) {
    cold.push((await runEnv({ repo, refresh: true }, settings, silentLogger, quiet)).seconds);
    warm.push((await runEnv({ repo }, settings, silentLogger, quiet)).seconds);
  }
  const [p, c, w] = [median(plain), median(cold), median(warm)];
  rows.push([repo, p.toFixed(2), c.toFixed(2), w.toFixed(2), `${(c / p).toFixed(2)}×`, `${(w / p).toFixed(2)}×`]);
  console.log(`${repo}: plain ${p.toFixed(2)} s, cold ${c.toFixed(2)} s, warm ${w.toFixed(2)} s`);
}
console.log(`\nenvgen env vs plain pytest, medians of ${runs} runs (seconds)\n`);
console.log(formatTable(['repo', 'plain', 'env cold', 'env warm', 'cold/plain', 'warm/plain'], rows));
