import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { Settings } from '@envgen/config';
import { extractEntities } from '@envgen/python';
import {
  acquireRepo,
  createWorktree,
  detectProfile,
  findNestedConftests,
  ignoreConftestDirs,
  loadProfileOverrides,
  parseRepoSpec,
  readCiServices,
  shippedProfilesDir,
  validateProfileOverrides,
} from '@envgen/repo';
import type { CiService, Profile, ResolvedRepo, Worktree } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import type { SandboxProvider } from '@envgen/sandbox';
import { buildBaseline, countCoverage, findUnimportableModules, groupFailures, openPytestSandbox, runInstallSteps, summarizeResults } from '@envgen/testrun';
import type { Baseline, CollectionError, FailureGroup, ImportedElsewhere, ResultSummary } from '@envgen/testrun';
import { describeOlder, findMissingPackages, findOlderPackages, findUnavailablePackages, hostAptCache, installablePackages, hostDpkgQuery, sandboxAptCache, sandboxDpkgQuery } from './host-packages.js';
import type { OlderPackage } from './host-packages.js';
import type { AptCacheQuery, DpkgQuery } from './host-packages.js';
import { stablePassing } from '@envgen/validate';
import { cannotUse, installCommand, machineCause, ranNoCode, ranNoTreeCode } from './format-env.js';
import type { DeclaredLacks } from './format-env.js';
import type { Progress } from './progress.js';

/** Options of `envgen env`. */
export interface EnvOptions {
  repo: string;
  /** Rebuild the baseline even when a cached one exists. */
  refresh?: boolean;
}

/** What `envgen env` found; `--json` prints exactly this object. */
export interface EnvReport {
  repo: string;
  owner: string;
  name: string;
  commit: string;
  sandbox: Settings['sandbox'];
  profile: Omit<Profile, 'sourceFiles' | 'testFiles'>;
  sourceFiles: number;
  testFiles: number;
  entities: { functions: number; methods: number; classes: number };
  tests: ResultSummary;
  flaky: string[];
  /**
   * Tests that ran a profiler of their own and took the coverage tracer's hook: every
   * candidate runs from before them (their coverage is partial).
   */
  untraced: string[];
  /** The clean run's failing and erroring tests (flaky ones left out), by the exception they end with. */
  failing: FailureGroup[];
  collectionErrors: CollectionError[];
  suiteSeconds: number[];
  coverage: { coveredFunctions: number; allFunctions: number };
  /** The tree's packages and modules the tests imported from another copy (Debian's, an installed build). */
  importedElsewhere: ImportedElsewhere[];
  missingAptPackages: string[];
  /** Of {@link missingAptPackages}, those the Debian archive where the tests run has no candidate for. */
  unavailableAptPackages: string[];
  /** Installed packages older than the project's declared dependencies accept. */
  olderAptPackages: OlderPackage[];
  /** The services (databases, caches) the project's CI starts beside its tests, which no sandbox has. */
  ciServices: CiService[];
  notes: string[];
  fromCache: boolean;
  seconds: number;
}

/**
 * The profile of a repo: detection, then shipped and user profile files, then the user's
 * config; then, asked of the python where the tests run (after the install steps, where it
 * lacks a module before them), the directories whose conftest.py imports what it cannot import
 * are left out (pytest would stop the whole collection there).
 */
export async function resolveProfile(worktree: string, repo: ResolvedRepo, settings: Settings, provider: SandboxProvider): Promise<Profile> {
  const overrides = await loadProfileOverrides(repo.owner, repo.name, { profilesDirs: [shippedProfilesDir(), ...settings.profilesDirs] });
  const fromConfig = settings.profiles[`${repo.owner}/${repo.name}`];
  if (fromConfig) {
    overrides.push(validateProfileOverrides(fromConfig, `${settings.configFile ?? 'config'} profiles["${repo.owner}/${repo.name}"]`));
  }
  const profile = await detectProfile(worktree, { aptPackages: repo.aptPackages, overrides, submodules: repo.submodules, repoName: repo.name });
  const conftests = await findNestedConftests(worktree, profile);
  if (conftests.length === 0) return profile;
  const target = await openPytestSandbox(provider, { worktree });
  try {
    let missing = await findUnimportableModules(target, profile, [...new Set(conftests.flatMap((conftest) => conftest.imports))]);
    if (missing.length > 0 && profile.install.length > 0) {
      // What the install steps make importable (a package imported under another name than its directory's, a built extension) is asked after them, as the tests run.
      await runInstallSteps(target, profile);
      missing = await findUnimportableModules(target, profile, missing);
    }
    return ignoreConftestDirs(profile, conftests, new Set(missing));
  } finally {
    await target.close();
  }
}

async function countEntities(worktree: string, files: readonly string[]): Promise<EnvReport['entities']> {
  const counts = { functions: 0, methods: 0, classes: 0 };
  for (const file of files) {
    const source = await readFile(join(worktree, file), 'utf8');
    for (const entity of extractEntities(source, file).entities) {
      if (entity.kind === 'function') counts.functions += 1;
      else if (entity.kind === 'method') counts.methods += 1;
      else counts.classes += 1;
    }
  }
  return counts;
}

/** The profile's Debian packages missing where its tests run (on the host, or in the docker image), and those of them no `apt-get install` there can get. */
async function findMissingPackagesWhereTestsRun(profile: Profile, provider: SandboxProvider, worktree: string, settings: Settings): Promise<MissingPackages> {
  const find = async (dpkg: DpkgQuery, apt: AptCacheQuery): Promise<MissingPackages> => {
    const missing = await findMissingPackages(profile.aptPackages, dpkg);
    return { missing, unavailable: await findUnavailablePackages(missing, apt), older: await findOlderPackages(profile.requiredVersions ?? [], dpkg) };
  };
  if (settings.sandbox !== 'docker') return find(hostDpkgQuery, hostAptCache);
  const sandbox = await provider.open({ worktree });
  try {
    return await find(sandboxDpkgQuery(sandbox), sandboxAptCache(sandbox));
  } finally {
    await sandbox.dispose();
  }
}

/** Debian packages the profile names that are not installed where the tests run; `unavailable`: those the archive there lacks. */
interface MissingPackages {
  missing: string[];
  unavailable: string[];
  /** Installed ones older than the project's declared dependencies accept. */
  older: OlderPackage[];
}

/** The profile's Debian packages missing where its tests run, with warnings that say how to install those the archive has. */
async function warnMissingPackages(profile: Profile, provider: SandboxProvider, worktree: string, settings: Settings, logger: Logger): Promise<MissingPackages> {
  const found = await findMissingPackagesWhereTestsRun(profile, provider, worktree, settings);
  const installable = installablePackages(found.missing, found.unavailable);
  if (installable.length > 0) {
    const fix = settings.sandbox === 'docker' ? `docker/build-base-image.sh ${installable.join(' ')}` : `apt-get install -y ${installable.join(' ')}`;
    logger.warn(`the tests may need Debian packages that are not installed where they run (${settings.sandbox} sandbox): ${fix}`);
  }
  if (found.unavailable.length > 0) {
    logger.warn(`the tests may need Debian packages that this machine's Debian archive does not have (tests that import them will fail or skip): ${found.unavailable.join(' ')}`);
  }
  if (found.older.length > 0) {
    logger.warn(`the project declares newer versions of packages than are installed where its tests run (tests, or a conftest, that need them will fail): ${describeOlder(found.older)}`);
  }
  return found;
}

/** Opens the configured sandbox backend, failing early with what to install or start. */
export async function openSandboxProvider(settings: Settings, logger: Logger): Promise<SandboxProvider> {
  const provider = createSandboxProvider(settings.sandbox, { logger, docker: { image: settings.dockerImage } });
  await provider.ensureAvailable();
  return provider;
}

/** A repo acquired into the cache and checked out for one command, with the sandbox provider to run it in. */
export interface RepoCheckout {
  provider: SandboxProvider;
  repo: ResolvedRepo;
  /** The command's own worktree; the caller removes it. */
  worktree: Worktree;
}

/** Opens the sandbox provider (failing early), acquires `repoArg` and checks out a worktree of it. */
export async function checkoutRepo(repoArg: string, settings: Settings, logger: Logger, progress: Progress): Promise<RepoCheckout> {
  progress.phase(`acquiring ${repoArg}`);
  const spec = parseRepoSpec(repoArg);
  const provider = await openSandboxProvider(settings, logger);
  const repo = await acquireRepo(spec, { home: settings.home, githubBaseUrl: settings.githubUrl, logger });
  progress.phase(`checking out ${repo.owner}/${repo.name}@${repo.commit.slice(0, 8)}`);
  const worktree = await createWorktree(repo, { home: settings.home });
  return { provider, repo, worktree };
}

/** What a job on a checked-out repo runs with: the commit, its clean tree, profile, baseline and sandbox. */
export interface RepoRun {
  repo: { owner: string; name: string; commit: string };
  worktree: string;
  profile: Profile;
  baseline: Baseline;
  sandboxProvider: SandboxProvider;
}

/** The profile of a checked-out repo and its clean baseline (cached per commit and profile). */
export async function prepareRepoRun(checkout: RepoCheckout, settings: Settings, logger: Logger, progress: Progress): Promise<RepoRun> {
  progress.phase('detecting the test profile');
  const profile = await resolveProfile(checkout.worktree.path, checkout.repo, settings, checkout.provider);
  const packages = await warnMissingPackages(profile, checkout.provider, checkout.worktree.path, settings, logger);
  const baseline = await buildBaseline({
    worktree: checkout.worktree.path,
    commit: checkout.repo.commit,
    profile,
    sandboxProvider: checkout.provider,
    home: settings.home,
    ...(packages.older.length === 0 ? {} : { declaredNewer: describeOlder(packages.older) }),
    logger,
    onProgress: (step) => progress.phase(step.message),
  });
  const { owner, name, commit } = checkout.repo;
  if (stablePassing(baseline).length === 0) throw unusableRepo(checkout.repo, { unpackaged: profile.unpackaged ?? [], older: packages.older }, baseline, settings);
  const coverage = countCoverage(baseline);
  if (ranNoCode({ coveredFunctions: coverage.covered, allFunctions: coverage.total }, baseline.untraced ?? [])) {
    throw new EnvgenError(ERROR_CODES.noPythonTests, `${ranNoTreeCode(`${owner}/${name}`, coverage.total, baseline.importedElsewhere ?? [])}. \`envgen env\` with the same --repo shows the profile and each test's outcome.`);
  }
  return { repo: { owner, name, commit }, worktree: checkout.worktree.path, profile, baseline, sandboxProvider: checkout.provider };
}

/** Why no bug can be proved in a repo none of whose tests passed (stably) on its clean tree, and where to look. */
function unusableRepo(repo: ResolvedRepo, lacks: DeclaredLacks, baseline: Baseline, settings: Settings): EnvgenError {
  const [first] = baseline.collectionErrors;
  const message = first?.message.split('\n')[0] ?? '';
  const collection = first === undefined ? '' : ` (${baseline.collectionErrors.length} test file(s) did not collect; ${first.nodeid}: ${message}${machineCause(message, installCommand(settings.sandbox), lacks)})`;
  const notes = repo.notes.map((note) => `; ${note}`).join('');
  return new EnvgenError(
    ERROR_CODES.noPythonTests,
    `${cannotUse(`${repo.owner}/${repo.name}`, settings.sandbox)}${collection}${notes}. \`envgen env\` with the same --repo shows each test's outcome and what the machine lacks.`,
  );
}

/**
 * `envgen env`: acquires the repo, detects its profile, and runs its clean suite twice in the
 * sandbox with coverage (or answers from the baseline cache).
 */
export async function runEnv(options: EnvOptions, settings: Settings, logger: Logger, progress: Progress): Promise<EnvReport> {
  const started = performance.now();
  const { provider, repo, worktree } = await checkoutRepo(options.repo, settings, logger, progress);
  try {
    progress.phase('detecting the test profile');
    const profile = await resolveProfile(worktree.path, repo, settings, provider);
    const packages = await warnMissingPackages(profile, provider, worktree.path, settings, logger);
    let fromCache = false;
    const baseline: Baseline = await buildBaseline({
      worktree: worktree.path,
      commit: repo.commit,
      profile,
      sandboxProvider: provider,
      home: settings.home,
      cache: options.refresh ? 'refresh' : 'use',
      ...(packages.older.length === 0 ? {} : { declaredNewer: describeOlder(packages.older) }),
      logger,
      onProgress: (step) => {
        if (step.step === 'cached') fromCache = true;
        progress.phase(step.message);
      },
    });
    const { sourceFiles, testFiles, ...profileSettings } = profile;
    const coverage = countCoverage(baseline);
    return {
      repo: `${repo.owner}/${repo.name}`,
      owner: repo.owner,
      name: repo.name,
      commit: repo.commit,
      sandbox: settings.sandbox,
      profile: profileSettings,
      sourceFiles: sourceFiles.length,
      testFiles: testFiles.length,
      entities: await countEntities(worktree.path, sourceFiles),
      tests: summarizeResults(baseline.results, baseline.flaky),
      flaky: baseline.flaky,
      untraced: baseline.untraced ?? [],
      failing: groupFailures(baseline.results, baseline.flaky),
      collectionErrors: baseline.collectionErrors,
      suiteSeconds: baseline.suiteSeconds,
      coverage: { coveredFunctions: coverage.covered, allFunctions: coverage.total },
      importedElsewhere: baseline.importedElsewhere ?? [],
      missingAptPackages: packages.missing,
      unavailableAptPackages: packages.unavailable,
      olderAptPackages: packages.older,
      ciServices: await readCiServices(worktree.path),
      notes: repo.notes,
      fromCache,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await worktree.remove();
  }
}
