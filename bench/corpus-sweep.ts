/**
 * The corpus sweep: envgen on many real Python projects, as a new user would run it, one row
 * per project. It is the project's definition of "works" (README, "Works on").
 *
 *   node --conditions=@envgen/source --import tsx bench/corpus-sweep.ts [--corpus FILE] [--only a,b] [--count 40] [--seed 11] [--out FILE]
 *   node --conditions=@envgen/source --import tsx bench/corpus-sweep.ts --table sweep1.json,sweep2.json
 *
 * `--table` prints one table from the JSON files earlier sweeps wrote, without running anything.
 *
 * Per project, in a home of its own under .cache/sweep (downloads are kept between sweeps;
 * pools and baselines are not): the Debian packages its profile names (and the corpus
 * entry's `apt`) installed where missing, as `envgen env`'s `missing` row says; `envgen env`; plain pytest on the clean tree with the
 * project's own configuration and test selection (no envgen plugin or option), compared
 * node id by node id with envgen's clean baseline; then `envgen inject -n COUNT --seed SEED`
 * with tasks, timed end to end. A failing project never stops the sweep.
 *
 * The corpus is the Debian sources below (what CI machines can fetch), or a JSON file of
 * `[{"repo": "owner/name@sha" | "debian:NAME", "apt": ["python3-..."]}]` (GitHub projects are
 * served through ENVGEN_GITHUB_URL, e.g. file:///srv/git with owner/name.git bare repos).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { resolveConfig } from '@envgen/config';
import { createLogger, describeError, parseNodeId, volatileIds } from '@envgen/core';
import { checkoutRepo, createProgress, findMissingPackages, findUnavailablePackages, hostAptCache, hostDpkgQuery, installablePackages, resolveProfile, runEnv, runInject } from '@envgen/cli';
import type { InjectCommandReport } from '@envgen/cli';
import { buildBaseline, splitTestArgs } from '@envgen/testrun';
import { plainPytest } from '../test/support/plain-pytest.js';
import { formatTable } from './stats.js';

/** Debian sources whose upstream tarballs the mirror serves and whose suites run here. */
const DEBIAN_CORPUS = [
  'toolz', 'markupsafe', 'yamllint', 'python-json-patch', 'python-ordered-set', 'python-text-unidecode',
  'python-jmespath', 'python-xmltodict', 'python-colorama', 'python-toml', 'ptyprocess',
].map((name) => ({ repo: `debian:${name}`, apt: [] as string[] }));

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    only: { type: 'string' },
    count: { type: 'string', default: '40' },
    seed: { type: 'string', default: '11' },
    out: { type: 'string', default: '.cache/sweep/sweep.json' },
    table: { type: 'string' },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
const corpus: Array<{ repo: string; apt?: string[] }> = values.corpus ? JSON.parse(readFileSync(values.corpus, 'utf8')) : DEBIAN_CORPUS;
const only = values.only?.split(',');
const projects = only ? corpus.filter((entry) => only.some((name) => entry.repo.includes(name))) : corpus;
const root = fileURLToPath(new URL('../.cache/sweep', import.meta.url));
const quiet = createProgress({ quiet: true });
const logger = createLogger({ level: 'error' });

interface Row {
  repo: string;
  tests: number;
  /**
   * Test files that did not collect on the clean tree (a module that imports a package the
   * machine lacks: plain pytest, asked to go on, loses them too); absent in older sweeps.
   */
  uncollected?: number;
  /** Node ids whose clean outcome differs between plain pytest and envgen (or that only one has). */
  differences: Array<{ nodeId: string; plain: string; envgen: string }>;
  /** Node ids the two runs name otherwise (parameter ids made at import from the time...): not differences. */
  renamed: number;
  inject: InjectCommandReport | null;
  secondsPerKept: number | null;
  error: string | null;
}

function shorten(text: string, length = 300): string {
  return text.length <= length ? text : `${text.slice(0, length - 3)}...`;
}

async function sweepOne(entry: { repo: string; apt?: string[] }): Promise<Row> {
  const row: Row = { repo: entry.repo, tests: 0, differences: [], renamed: 0, inject: null, secondsPerKept: null, error: null };
  const home = join(root, entry.repo.replace(/[^A-Za-z0-9_.-]+/g, '_'));
  for (const dir of ['pool', 'baselines', 'envs']) rmSync(join(home, dir), { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const settings = resolveConfig({ env: { ...process.env, ENVGEN_HOME: home }, cwd: home });
  try {
    const { provider, repo, worktree } = await checkoutRepo(entry.repo, settings, logger, quiet);
    try {
      const profile = await resolveProfile(worktree.path, repo, settings, provider);
      // What the corpus entry lists and what `envgen env`'s `missing` row would name (the
      // profile's Debian packages the archive has), installed first, as a user following that row does.
      const missing = await findMissingPackages([...new Set([...(entry.apt ?? []), ...profile.aptPackages])], hostDpkgQuery);
      const installable = installablePackages(missing, await findUnavailablePackages(missing, hostAptCache));
      if (installable.length > 0) execFileSync('apt-get', ['install', '-y', '-qq', ...installable], { stdio: 'ignore' });
      const env = await runEnv({ repo: entry.repo }, settings, logger, quiet);
      row.tests = env.tests.total;
      row.uncollected = env.collectionErrors.length;
      const baseline = await buildBaseline({ worktree: worktree.path, commit: repo.commit, profile, sandboxProvider: provider, home });
      // The project's own configuration; where its addopts name plugins this machine lacks
      // (pytest-cov...), plain pytest would stop at a usage error, so it gets the profile's
      // `-o addopts=` without them, as a user without those plugins would run it. Where test
      // modules cannot import (an optional dependency Debian lacks), envgen runs the rest;
      // plain pytest would run nothing, so it is asked to do the same.
      const { options, selection } = splitTestArgs(profile.testArgs);
      const args = [...options, '--continue-on-collection-errors', ...selection, ...profile.deselect.map((id) => `--deselect=${id}`)];
      // The worktree holds what the install steps leave, the console scripts among them, which an activated environment has on PATH.
      const scripts = profile.env['ENVGEN_SCRIPTS'];
      const plain = plainPytest(worktree.path, { args, env: profile.env, ...(scripts === undefined ? {} : { path: [scripts] }) });
      const ids = new Set([...Object.keys(plain), ...Object.keys(baseline.results)]);
      const renamed = volatileIds(Object.keys(baseline.results), Object.keys(plain));
      row.renamed = renamed.size / 2;
      for (const nodeId of [...ids].sort()) {
        if (renamed.has(nodeId)) continue;
        const mine = baseline.results[nodeId]?.outcome ?? 'absent';
        const theirs = plain[nodeId] ?? 'absent';
        if (mine !== theirs && parseNodeId(nodeId) !== null) row.differences.push({ nodeId, plain: theirs, envgen: mine });
      }
    } finally {
      await worktree.remove();
    }
    const started = performance.now();
    row.inject = await runInject({ repo: entry.repo, count, seed, tasks: { statement: 'tests' } }, settings, logger, quiet);
    const seconds = (performance.now() - started) / 1000;
    row.secondsPerKept = row.inject.kept > 0 ? seconds / row.inject.kept : null;
  } catch (error) {
    row.error = shorten(describeError(error));
  }
  return row;
}

const rows: Row[] = values.table ? values.table.split(',').flatMap((file) => JSON.parse(readFileSync(file, 'utf8')) as Row[]) : [];
if (!values.table) mkdirSync(join(values.out, '..'), { recursive: true });
for (const entry of values.table ? [] : projects) {
  const row = await sweepOne(entry);
  rows.push(row);
  const inject = row.inject;
  console.error(`${row.repo}: ${row.error ?? `${inject?.kept}/${inject?.tried} kept, ${row.differences.length} clean difference(s)`}`);
  // Written after every project: a sweep stopped midway keeps what it measured.
  writeFileSync(values.out, `${JSON.stringify(rows, null, 2)}\n`);
}

const table = rows.map((row) => {
  const inject = row.inject;
  const rejected = inject ? Object.entries(inject.rejected).sort(([, a], [, b]) => b - a).map(([reason, n]) => `${n} ${reason}`).join(', ') : '';
  const history = inject?.byStrategy['history_revert'];
  return [
    row.repo,
    String(row.tests),
    row.uncollected === undefined ? '–' : String(row.uncollected),
    row.error === null ? `${row.differences.length === 0 ? 'same' : `${row.differences.length} differ`}${row.renamed > 0 ? ` (${row.renamed} renamed)` : ''}` : '–',
    String(inject?.tried ?? '–'),
    String(inject?.kept ?? '–'),
    inject && inject.tried > 0 ? `${Math.round((100 * (inject.kept + inject.known)) / inject.tried)}%` : '–',
    row.secondsPerKept === null ? '–' : row.secondsPerKept.toFixed(2),
    rejected || (row.error === null ? 'none' : `ERROR ${shorten(row.error, 60)}`),
    String(inject?.rejected['crashed'] ?? 0),
    String(history?.tried ?? 0),
    // No replay with bundles kept: each was validated in a fresh interpreter and checked cold.
    inject?.replay ? (inject.replay.agreed ? 'agreed' : 'DISAGREED') : inject && inject.kept > 0 ? 'all cold' : '–',
    // Tasks of the kept instances: a failed one is a bug as a crash is, and its time is not in s/kept.
    inject?.tasks ? `${inject.tasks.built}${inject.tasks.failed.length > 0 ? ` (${inject.tasks.failed.length} FAILED)` : ''}` : '–',
  ];
});
console.log(`\nenvgen inject -n ${count} --seed ${seed} (with tasks), one row per project; details in ${values.table ?? values.out}\n`);
console.log(formatTable(['project', 'tests', 'not collected', 'clean vs plain pytest', 'tried', 'kept', 'yield', 's/kept e2e', 'rejected', 'crashes', 'history', 'cold replay', 'tasks'], table));
