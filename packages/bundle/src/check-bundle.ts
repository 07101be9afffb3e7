import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { nodeIdFile, silentLogger, volatileIds } from '@envgen/core';
import type { BundleFiles, Logger } from '@envgen/core';
import { applyPatch, checkRepoPath, findUnsafeTargets, isPatchProblem, parsePatch, patchedPaths } from '@envgen/patch';
import type { HunkOffset, ParsedPatch, PatchedFile } from '@envgen/patch';
import { matchesAnyGlob } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import { bundleRunLimits, createBundleRunner } from './bundle-runner.js';
import type { BundleRun, BundleRunLimits, BundleRunner } from './bundle-runner.js';

/** The seven consistency checks of DESIGN.md, in order. */
export const CHECK_NAMES = [
  'files-and-paths',
  'parser-output',
  'clean-tests-pass',
  'bug-changes-source',
  'bug-breaks-tests',
  'weakening-hides-bug',
  'inverse-mutation',
] as const;

export type CheckName = (typeof CHECK_NAMES)[number];

/** One check's verdict. `ran` is false when an earlier failure left nothing to check. */
export interface CheckResult {
  name: CheckName;
  passed: boolean;
  ran: boolean;
  evidence: string;
}

/** Thresholds of the checks (DESIGN.md's defaults in brackets). */
export interface CheckThresholds {
  /** Check 3: tests that must pass on the clean repo [1]. */
  minCleanPassing: number;
  /** Check 4: source files the bug must change [1]. */
  minSourceFiles: number;
  /** Check 5: clean-passing tests the bug must break [1]. */
  minBroken: number;
}

export const DEFAULT_THRESHOLDS: CheckThresholds = { minCleanPassing: 1, minSourceFiles: 1, minBroken: 1 };

/** Options of {@link checkBundle}. */
export interface CheckBundleOptions {
  bundle: BundleFiles;
  /** Host path of a clean checkout at the bundle's base commit; never modified. */
  worktree: string;
  profile: Profile;
  sandboxProvider: SandboxProvider;
  thresholds?: Partial<CheckThresholds>;
  /** Limits of each script and parser run (default: {@link bundleRunLimits} of the profile's timeout and `tests`). */
  limits?: Partial<BundleRunLimits>;
  /** How many tests the suite has, when known (its baseline's): a big suite may print more. */
  tests?: number;
  /** Context lines per hunk allowed to mismatch when applying the diffs (default 2, as GNU patch). */
  fuzz?: number;
  /** docker: the image to run. */
  image?: string;
  /**
   * Runs the evaluations instead of a fresh {@link createBundleRunner} (which runs the bundle's
   * own script and parser): the injector passes one answering from runs it already made. The
   * caller keeps ownership: it is not closed here.
   */
  runner?: BundleRunner;
  logger?: Logger;
  onProgress?: (message: string) => void;
}

/** The outcome of {@link checkBundle}; `--json` prints it. */
export interface BundleCheckReport {
  passed: boolean;
  checks: CheckResult[];
  /** The consistency part of the injector reward: 0 when every check passes, -1 otherwise. */
  injectorConsistency: 0 | -1;
  /** Tests that pass on the clean repo and fail (or vanish) with the bug: the bundle's FAIL_TO_PASS. */
  brokenTests: string[];
  /** Tests that pass on the clean repo and still pass with the bug: the bundle's PASS_TO_PASS. */
  passingTests: string[];
  /** Hunks that applied at an offset or with fuzz. */
  offsets: HunkOffset[];
  /** Wall seconds of each script run, by label. */
  runs: Array<{ label: string; ok: boolean; seconds: number | null }>;
}

const MAX_LISTED = 8;

function listSome(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown} and ${items.length - MAX_LISTED} more` : shown;
}

function describeOffsets(offsets: readonly HunkOffset[]): string {
  if (offsets.length === 0) return '';
  return ` (applied inexactly: ${offsets.map((o) => `${o.path} hunk ${o.hunk} at offset ${o.offset >= 0 ? '+' : ''}${o.offset}${o.fuzz > 0 ? ` with fuzz ${o.fuzz}` : ''}`).join('; ')})`;
}

async function readCleanFiles(root: string, paths: readonly string[]): Promise<Map<string, string | null>> {
  const contents = new Map<string, string | null>();
  for (const path of paths) {
    try {
      const stats = await lstat(join(root, path));
      contents.set(path, stats.isFile() ? await readFile(join(root, path), 'utf8') : null);
    } catch {
      contents.set(path, null);
    }
  }
  return contents;
}

/** test_files.txt as paths: one per line, blank lines and surrounding spaces ignored. */
export function parseTestFilesList(text: string): string[] {
  return [...new Set(text.split('\n').map((line) => line.trim()).filter((line) => line !== ''))];
}

/** Added lines that are a removed line commented out (`-    assert x` → `+    # assert x`). */
function findCommentedOut(patch: ParsedPatch): string[] {
  const found: string[] = [];
  for (const file of patch.files) {
    for (const hunk of file.hunks) {
      const removed = new Set(hunk.lines.filter((line) => line.startsWith('-')).map((line) => line.slice(1).trim()).filter((line) => line !== ''));
      for (const line of hunk.lines) {
        const commented = /^\+\s*#\s?(.*)$/.exec(line);
        if (commented?.[1] !== undefined && removed.has(commented[1].trim())) found.push(`${file.newPath ?? file.oldPath ?? '?'}: ${line.slice(1).trim()}`);
      }
    }
  }
  return found;
}

interface StaticFindings {
  check: CheckResult;
  bug: ParsedPatch | null;
  weaken: ParsedPatch | null;
  listed: string[];
}

async function checkFilesAndPaths(bundle: BundleFiles, worktree: string, profile: Profile): Promise<StaticFindings> {
  const problems: string[] = [];
  const listed = parseTestFilesList(bundle['test_files.txt']);
  for (const path of listed) {
    const unsafe = checkRepoPath(path);
    if (unsafe) problems.push(`test_files.txt: ${unsafe.message}`);
  }
  const listedSafe = listed.filter((path) => checkRepoPath(path) === null);
  const clean = await readCleanFiles(worktree, listedSafe);
  const missing = listedSafe.filter((path) => clean.get(path) === null);
  if (missing.length > 0) problems.push(`listed test files missing from the repo: ${listSome(missing)}`);
  if (listed.length === 0) problems.push('test_files.txt lists no test file');
  const bugParsed = parsePatch(bundle['bug_inject.diff']);
  const weakenParsed = parsePatch(bundle['test_weaken.diff']);
  if (isPatchProblem(bugParsed)) problems.push(`bug_inject.diff: ${bugParsed.message}`);
  if (isPatchProblem(weakenParsed)) problems.push(`test_weaken.diff: ${weakenParsed.message}`);
  const bug = isPatchProblem(bugParsed) ? null : bugParsed;
  const weaken = isPatchProblem(weakenParsed) ? null : weakenParsed;
  const listedSet = new Set(listed);
  const testSet = new Set([...profile.testFiles, ...listed]);
  const bugPaths = bug ? patchedPaths(bug) : [];
  const weakenPaths = weaken ? patchedPaths(weaken) : [];
  const unlisted = weakenPaths.filter((path) => !listedSet.has(path));
  if (unlisted.length > 0) problems.push(`test_weaken.diff touches files not in test_files.txt: ${listSome(unlisted)}`);
  const bugTests = bugPaths.filter((path) => testSet.has(path) || matchesAnyGlob(path, profile.testGlobs));
  if (bugTests.length > 0) problems.push(`bug_inject.diff touches test files: ${listSome(bugTests)}`);
  const unsafe = await findUnsafeTargets(worktree, [...new Set([...bugPaths, ...weakenPaths, ...listedSafe])]);
  for (const target of unsafe) problems.push(target.message);
  const check: CheckResult =
    problems.length > 0
      ? { name: 'files-and-paths', passed: false, ran: true, evidence: problems.join('; ') }
      : {
          name: 'files-and-paths',
          passed: true,
          ran: true,
          evidence: `${listed.length} listed test file(s) exist; test_weaken.diff touches only listed files (${listSome(weakenPaths) || 'none'}); bug_inject.diff touches no test file (${listSome(bugPaths) || 'none'}); no path leaves the repo`,
        };
  return { check, bug, weaken, listed };
}

function notRun(name: CheckName, why: string): CheckResult {
  return { name, passed: false, ran: false, evidence: `not run: ${why}` };
}

function passedIds(run: BundleRun & { ok: true }): string[] {
  return Object.keys(run.results).filter((id) => run.results[id] === 'passed').sort();
}

function runFailure(run: BundleRun & { ok: false }): string {
  return `${run.label}: ${run.reason}`;
}

/**
 * Checks a bundle made anywhere (envgen, an LLM injector, a person) against a clean checkout:
 * the seven checks of DESIGN.md in order, each with its evidence. The diffs are parsed and
 * applied in memory with @envgen/patch (fuzz allowed and reported) and written to fresh copies
 * of the clean tree; the bundle's own test_script.sh and test_parser.py run in the sandbox,
 * and a hang, flood or garbage output fails the check it was run for. Runs: the clean tree, the
 * bug, bug + weakening, and for a multi-file bug the bug with each changed file reverted.
 */
export async function checkBundle(options: CheckBundleOptions): Promise<BundleCheckReport> {
  const logger = options.logger ?? silentLogger;
  const progress = options.onProgress ?? (() => undefined);
  const thresholds = { ...DEFAULT_THRESHOLDS, ...options.thresholds };
  const fuzz = options.fuzz ?? 2;
  const limits: BundleRunLimits = { ...bundleRunLimits(options.profile.timeoutMs, options.tests), ...options.limits };
  const checks = new Map<CheckName, CheckResult>();
  const offsets: HunkOffset[] = [];
  const runs: BundleRun[] = [];
  let brokenTests: string[] = [];
  let passingTests: string[] = [];

  progress('checking files and paths');
  const found = await checkFilesAndPaths(options.bundle, options.worktree, options.profile);
  checks.set('files-and-paths', found.check);
  const pathsOk = found.check.passed;

  const runner: BundleRunner = options.runner ?? await createBundleRunner({
    bundle: options.bundle,
    worktree: options.worktree,
    python: options.profile.python,
    sandboxProvider: options.sandboxProvider,
    limits,
    ...(options.image === undefined ? {} : { image: options.image }),
  });
  const evaluate = async (label: string, files: readonly PatchedFile[]): Promise<BundleRun> => {
    progress(`running the bundle's tests: ${label}`);
    const run = await runner.run(label, files);
    logger.debug('bundle run', { label, ok: run.ok, ...(run.ok ? { tests: Object.keys(run.results).length, seconds: run.seconds } : { reason: run.reason }) });
    runs.push(run);
    return run;
  };

  try {
    // Checks 2 and 3: the clean tree needs no diff, so they run whatever check 1 found.
    const clean = await evaluate('clean repo', []);
    const cleanPassed = clean.ok ? passedIds(clean) : [];
    if (clean.ok) {
      const counts = { failed: 0, skipped: 0 };
      for (const status of Object.values(clean.results)) if (status !== 'passed') counts[status] += 1;
      checks.set('clean-tests-pass', {
        name: 'clean-tests-pass',
        passed: cleanPassed.length >= thresholds.minCleanPassing,
        ran: true,
        evidence: `${cleanPassed.length} test(s) pass on the clean repo (needs ${thresholds.minCleanPassing}); ${counts.failed} failed, ${counts.skipped} skipped; ${clean.seconds.toFixed(1)}s`,
      });
    } else {
      checks.set('clean-tests-pass', { name: 'clean-tests-pass', passed: false, ran: true, evidence: runFailure(clean) });
    }

    // Check 4: the bug applies to the clean tree and changes source files.
    let bugFiles: PatchedFile[] | null = null;
    let changedSources: string[] = [];
    if (found.bug === null) {
      checks.set('bug-changes-source', notRun('bug-changes-source', 'bug_inject.diff does not parse (check 1)'));
    } else {
      const bug = found.bug;
      const clean = await readCleanFiles(options.worktree, patchedPaths(bug).filter((path) => checkRepoPath(path) === null));
      const applied = applyPatch((path) => clean.get(path) ?? null, bug, { fuzz });
      if (!applied.ok) {
        checks.set('bug-changes-source', { name: 'bug-changes-source', passed: false, ran: true, evidence: `bug_inject.diff does not apply to the clean repo: ${applied.problem.message}` });
      } else {
        offsets.push(...applied.offsets);
        bugFiles = applied.files;
        changedSources = applied.files.filter((file) => file.before !== file.after).map((file) => file.path);
        checks.set('bug-changes-source', {
          name: 'bug-changes-source',
          passed: changedSources.length >= thresholds.minSourceFiles,
          ran: true,
          evidence: `bug_inject.diff changes ${changedSources.length} source file(s) (needs ${thresholds.minSourceFiles}): ${listSome(changedSources) || 'none'}${describeOffsets(applied.offsets)}`,
        });
      }
    }

    // Checks 5-7 need safe paths, a clean run, and a bug that applies.
    const blocker = !pathsOk ? 'check 1 failed' : !clean.ok ? 'the clean run failed' : bugFiles === null ? 'the bug diff does not apply' : null;
    if (blocker !== null || bugFiles === null || !clean.ok) {
      for (const name of ['bug-breaks-tests', 'weakening-hides-bug', 'inverse-mutation'] as const) checks.set(name, notRun(name, blocker ?? 'an earlier check failed'));
    } else {
      const withBug = await evaluate('with the bug', bugFiles);
      if (!withBug.ok) {
        checks.set('bug-breaks-tests', { name: 'bug-breaks-tests', passed: false, ran: true, evidence: runFailure(withBug) });
      } else {
        // FAIL_TO_PASS as the validator splits it: failed or gone with the bug. A test the bug
        // makes skip (an xfail that xpassed clean) is in neither set, nor is one the run names
        // otherwise (a parameter id made from the time: renamed, not gone).
        const renamed = volatileIds(Object.keys(clean.results), Object.keys(withBug.results));
        const judged = renamed.size === 0 ? cleanPassed : cleanPassed.filter((id) => !renamed.has(id));
        brokenTests = judged.filter((id) => withBug.results[id] !== 'passed' && withBug.results[id] !== 'skipped');
        passingTests = judged.filter((id) => withBug.results[id] === 'passed');
        const gone = brokenTests.filter((id) => withBug.results[id] === undefined).length;
        checks.set('bug-breaks-tests', {
          name: 'bug-breaks-tests',
          passed: brokenTests.length >= thresholds.minBroken,
          ran: true,
          evidence: `${brokenTests.length} of ${cleanPassed.length} clean-passing test(s) fail with the bug (needs ${thresholds.minBroken})${gone > 0 ? `, ${gone} of them no longer reported` : ''}${brokenTests.length > 0 ? `: ${listSome(brokenTests)}` : ''}`,
        });
      }
      const bugBreaks = checks.get('bug-breaks-tests')?.passed === true;

      // Check 6: bug + weakening hides the bug from the suite.
      if (!bugBreaks) {
        checks.set('weakening-hides-bug', notRun('weakening-hides-bug', 'the bug breaks no test (check 5)'));
      } else if (found.weaken === null) {
        checks.set('weakening-hides-bug', notRun('weakening-hides-bug', 'test_weaken.diff does not parse (check 1)'));
      } else {
        const commented = findCommentedOut(found.weaken);
        const state = new Map((await readCleanFiles(options.worktree, patchedPaths(found.weaken))).entries());
        for (const file of bugFiles) state.set(file.path, file.after);
        const weakened = applyPatch((path) => state.get(path) ?? null, found.weaken, { fuzz });
        if (commented.length > 0) {
          checks.set('weakening-hides-bug', { name: 'weakening-hides-bug', passed: false, ran: true, evidence: `test_weaken.diff comments tests out instead of deleting them: ${listSome(commented)}` });
        } else if (!weakened.ok) {
          checks.set('weakening-hides-bug', { name: 'weakening-hides-bug', passed: false, ran: true, evidence: `test_weaken.diff does not apply over the bug: ${weakened.problem.message}` });
        } else {
          offsets.push(...weakened.offsets);
          const merged = new Map(bugFiles.map((file) => [file.path, file]));
          for (const file of weakened.files) merged.set(file.path, { path: file.path, before: merged.get(file.path)?.before ?? file.before, after: file.after });
          const hidden = await evaluate('with the bug and the weakening', [...merged.values()]);
          if (!hidden.ok) {
            checks.set('weakening-hides-bug', { name: 'weakening-hides-bug', passed: false, ran: true, evidence: runFailure(hidden) });
          } else {
            const still = brokenTests.filter((id) => hidden.results[id] !== undefined && hidden.results[id] !== 'passed');
            const gone = brokenTests.filter((id) => hidden.results[id] === undefined).length;
            // A test file the weakening leaves unable to import (a deleted test's name still used
            // at module level) hides every test in it, not the bug: that is no weakening. One
            // collected with the bug alone where a test of it passed then.
            const bugResults = withBug.ok ? withBug.results : {};
            const collectedWithBug = new Set(passingTests.map(nodeIdFile));
            const uncollected = Object.keys(hidden.results).filter((id) => !id.includes('::') && hidden.results[id] === 'failed' && bugResults[id] !== 'failed' && collectedWithBug.has(id));
            checks.set('weakening-hides-bug', {
              name: 'weakening-hides-bug',
              passed: still.length === 0 && uncollected.length === 0,
              ran: true,
              evidence:
                uncollected.length > 0
                  ? `${uncollected.length} test file(s) no longer collect with the weakening (they do with the bug alone), which hides every test in them: ${listSome(uncollected)}`
                  : still.length === 0
                    ? `all ${brokenTests.length} test(s) broken by the bug pass or are gone with the weakening (${gone} gone, ${brokenTests.length - gone} pass)${describeOffsets(weakened.offsets)}`
                    : `${still.length} of ${brokenTests.length} test(s) broken by the bug still fail or skip with the weakening: ${listSome(still.map((id) => `${id} (${hidden.results[id] ?? '?'})`))}`,
            });
          }
        }
      }

      // Check 7: no changed file of the bug is dead weight.
      if (!bugBreaks) {
        checks.set('inverse-mutation', notRun('inverse-mutation', 'the bug breaks no test (check 5)'));
      } else if (changedSources.length === 1) {
        checks.set('inverse-mutation', {
          name: 'inverse-mutation',
          passed: true,
          ran: true,
          evidence: `single-file bug: reverting ${changedSources[0] ?? '?'} gives the clean repo, where all ${brokenTests.length} broken test(s) pass`,
        });
      } else {
        const verdicts: string[] = [];
        const dead: string[] = [];
        for (const path of changedSources) {
          const reverted = bugFiles.filter((file) => file.path !== path);
          const run = await evaluate(`with the bug but ${path} reverted`, reverted);
          if (!run.ok) {
            dead.push(path);
            verdicts.push(runFailure(run));
            continue;
          }
          const revived = brokenTests.filter((id) => run.results[id] === 'passed');
          if (revived.length === 0) dead.push(path);
          verdicts.push(`reverting ${path} makes ${revived.length} of ${brokenTests.length} failing test(s) pass${revived.length > 0 ? ` (${listSome(revived)})` : ' — dead weight'}`);
        }
        checks.set('inverse-mutation', { name: 'inverse-mutation', passed: dead.length === 0, ran: true, evidence: verdicts.join('; ') });
      }
    }

    // Check 2 covers every parser run.
    const parserFailures = runs.filter((run): run is BundleRun & { ok: false } => !run.ok && run.stage === 'parser');
    const parsed = runs.filter((run): run is BundleRun & { ok: true } => run.ok);
    if (parserFailures.length > 0) {
      checks.set('parser-output', { name: 'parser-output', passed: false, ran: true, evidence: parserFailures.map(runFailure).join('; ') });
    } else if (parsed.length === 0) {
      checks.set('parser-output', notRun('parser-output', `test_script.sh produced nothing to parse (${runs.map((run) => (run.ok ? '' : runFailure(run))).join('; ')})`));
    } else {
      checks.set('parser-output', {
        name: 'parser-output',
        passed: true,
        ran: true,
        evidence: `valid JSON of test id → passed|failed|skipped on every run: ${parsed.map((run) => `${run.label} ${Object.keys(run.results).length} tests`).join(', ')}`,
      });
    }
  } finally {
    if (options.runner === undefined) await runner.close();
  }

  const ordered = CHECK_NAMES.map((name) => checks.get(name) ?? notRun(name, 'an earlier check failed'));
  const passed = ordered.every((check) => check.passed);
  return {
    passed,
    checks: ordered,
    injectorConsistency: passed ? 0 : -1,
    brokenTests,
    passingTests,
    offsets,
    runs: runs.map((run) => ({ label: run.label, ok: run.ok, seconds: run.ok ? run.seconds : null })),
  };
}
