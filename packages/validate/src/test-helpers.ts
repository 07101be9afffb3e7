/**
 * Support for the agreement test and bench/validate: a corpus project ready to validate
 * against, and seeded candidates from @envgen/mutate's strategies on covered entities.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { createRng, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { STRATEGIES, applyStrategy } from '@envgen/mutate';
import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { acquireRepo, createWorktree, detectProfile, loadProfileOverrides, parseRepoSpec, shippedProfilesDir } from '@envgen/repo';
import type { Profile, Worktree } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import type { SandboxProvider } from '@envgen/sandbox';
import { buildBaseline, entityKey } from '@envgen/testrun';
import type { Baseline } from '@envgen/testrun';
import type { ValidationInput } from './types.js';
import { stablePassing } from './verdict.js';

/** envgen's home for tests and benches: mirrors and baselines cached across runs. */
export const TEST_HOME = new URL('../../../.cache/envgen-test-home', import.meta.url).pathname;
/** The warm servers' code cache of {@link TEST_HOME}, as `envgen inject` keeps one in its home. */
export const TEST_CODE_CACHE = join(TEST_HOME, 'code-cache');

/** A corpus project checked out with its profile and baseline. */
export interface CorpusProject {
  name: string;
  worktree: Worktree;
  profile: Profile;
  baseline: Baseline;
  provider: SandboxProvider;
}

/**
 * Acquires `spec` (e.g. `debian:toolz`, or `owner/name@sha` from `githubBaseUrl`), checks it
 * out and builds (or loads) its baseline.
 */
export async function prepareCorpusProject(spec: string, logger: Logger = silentLogger, githubBaseUrl?: string): Promise<CorpusProject> {
  const repo = await acquireRepo(parseRepoSpec(spec), { home: TEST_HOME, logger, ...(githubBaseUrl === undefined ? {} : { githubBaseUrl }) });
  const worktree = await createWorktree(repo, { home: TEST_HOME });
  // The shipped profile files apply, as in `envgen inject` (e.g. toolz deselects its hanging test_fold).
  const overrides = await loadProfileOverrides(repo.owner, repo.name, { profilesDirs: [shippedProfilesDir()] });
  const profile = await detectProfile(worktree.path, { aptPackages: repo.aptPackages, overrides, submodules: repo.submodules, repoName: repo.name });
  const provider = createSandboxProvider('local', { logger });
  const baseline = await buildBaseline({ worktree: worktree.path, commit: repo.commit, profile, sandboxProvider: provider, home: TEST_HOME, logger });
  return { name: `${repo.owner}/${repo.name}`, worktree, profile, baseline, provider };
}

/** What `runInjection` needs of a corpus project: its repo, clean checkout, profile, baseline, sandboxes and the code cache. */
export function injectionTarget(project: CorpusProject) {
  const [owner = 'x', name = 'x'] = project.name.split('/');
  return {
    repo: { owner, name, commit: project.baseline.commit },
    worktree: project.worktree.path,
    profile: project.profile,
    baseline: project.baseline,
    sandboxProvider: project.provider,
    codeCache: TEST_CODE_CACHE,
  };
}

/**
 * `count` distinct candidates, seeded: a random covered entity (covered by at least one
 * stable passing test), a random strategy that applies to it, kept when the strategy finds
 * a site and its edit re-parses. Each carries its mutated file and a git-style patch.
 */
export async function sampleCandidates(project: CorpusProject, count: number, seed: number): Promise<ValidationInput[]> {
  const stable = new Set(stablePassing(project.baseline));
  const sites: { path: string; source: string; entity: Entity }[] = [];
  for (const path of project.profile.sourceFiles) {
    const source = await readFile(join(project.worktree.path, path), 'utf8');
    for (const entity of extractEntities(source, path).entities) {
      const key = entityKey(path, entity.qualifiedName);
      const covered = entity.kind === 'class'
        ? Object.keys(project.baseline.coverage).some((other) => other.startsWith(`${key}.`) && (project.baseline.coverage[other] ?? []).some((id) => stable.has(id)))
        : (project.baseline.coverage[key] ?? []).some((id) => stable.has(id));
      if (covered) sites.push({ path, source, entity });
    }
  }
  const strategies = Object.values(STRATEGIES);
  const rng = createRng(seed);
  const seen = new Set<string>();
  const inputs: ValidationInput[] = [];
  for (let attempt = 0; inputs.length < count && attempt < count * 50; attempt++) {
    const site = rng.pick(sites);
    const applicable = strategies.filter((strategy) => strategy.appliesTo.includes(site.entity.kind));
    if (applicable.length === 0) continue;
    const strategy = rng.pick(applicable);
    const strategySeed = seed * 100_000 + attempt;
    const outcome = applyStrategy(strategy, { source: site.source, entity: site.entity, path: site.path, rng: createRng(strategySeed) });
    if (outcome.status !== 'kept' || seen.has(outcome.edit.newSource)) continue;
    seen.add(outcome.edit.newSource);
    inputs.push({
      candidate: {
        strategy: strategy.name,
        family: strategy.family,
        seed: strategySeed,
        patch: createTwoFilesPatch(`a/${site.path}`, `b/${site.path}`, site.source, outcome.edit.newSource),
        entities: [entityKey(site.path, site.entity.qualifiedName)],
        description: outcome.edit.description,
      },
      files: [{ path: site.path, after: outcome.edit.newSource }],
    });
  }
  return inputs;
}
