import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BundleFiles } from '@envgen/core';
import { bundleRunLimits, createBundleRunner, parseTestFilesList } from '@envgen/bundle';
import type { BundleRunLimits } from '@envgen/bundle';
import { applyPatch, isPatchProblem, parsePatch, patchedPaths } from '@envgen/patch';
import type { ParsedPatch, PatchedFile } from '@envgen/patch';
import { matchesAnyGlob } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import { repairReward } from '@envgen/rewards';
import type { SandboxProvider } from '@envgen/sandbox';

/** Why a repair scored −1 before or instead of its tests deciding. */
export type RepairFailureKind = 'empty-patch' | 'malformed-patch' | 'touches-test-files' | 'does-not-apply' | 'script' | 'parser' | 'tests-fail';

/** The outcome of {@link evaluateRepair}: the reward and its evidence. */
export interface RepairEvaluation {
  /** +1 when every FAIL_TO_PASS and PASS_TO_PASS test is reported passed, else −1. */
  reward: number;
  failure: { kind: RepairFailureKind; detail: string } | null;
  /** FAIL_TO_PASS / PASS_TO_PASS tests reported failed or skipped. */
  failing: string[];
  /** FAIL_TO_PASS / PASS_TO_PASS tests missing from the results (count as failed). */
  missing: string[];
  /** Wall seconds of the script run (null when it did not run). */
  scriptSeconds: number | null;
  /** Wall seconds of the whole evaluation. */
  seconds: number;
}

/** Options of {@link evaluateRepair}. */
export interface EvaluateRepairOptions {
  bundle: BundleFiles;
  failToPass: readonly string[];
  passToPass: readonly string[];
  /** The solver's patch over the buggy, weakened checkout. */
  patch: string;
  /** Clean tree at the base commit; only read. */
  worktree: string;
  profile: Profile;
  sandboxProvider: SandboxProvider;
  limits?: Partial<BundleRunLimits>;
  image?: string;
}

/** The paths of a patch that are test files: listed in test_files.txt, known to the profile, or matching its test globs. */
export function testFilesTouched(patch: ParsedPatch, bundle: BundleFiles, profile: Profile): string[] {
  const tests = new Set([...profile.testFiles, ...parseTestFilesList(bundle['test_files.txt'])]);
  return patchedPaths(patch).filter((path) => tests.has(path) || matchesAnyGlob(path, profile.testGlobs));
}

/**
 * DESIGN.md's repair reward, in a fresh sandbox: every file of test_files.txt restored (the
 * run starts from a copy of the clean tree, so the weakening is gone), the bug applied, the
 * solver's patch applied over it, then the bundle's own test_script.sh | test_parser.py.
 * +1 when every FAIL_TO_PASS and PASS_TO_PASS test is reported passed; a test missing from
 * the results counts as failed (breaking collection never passes). A patch that touches a
 * test file, does not parse or apply, or is empty scores −1 with that failure named.
 */
export async function evaluateRepair(options: EvaluateRepairOptions): Promise<RepairEvaluation> {
  const started = performance.now();
  const fail = (kind: RepairFailureKind, detail: string, extra: Partial<RepairEvaluation> = {}): RepairEvaluation => ({
    reward: repairReward({ allTestsPass: false }),
    failure: { kind, detail },
    failing: [],
    missing: [],
    scriptSeconds: null,
    ...extra,
    seconds: (performance.now() - started) / 1000,
  });
  if (options.patch.trim() === '') return fail('empty-patch', 'the solver changed nothing');
  const fix = parsePatch(options.patch);
  if (isPatchProblem(fix)) return fail('malformed-patch', fix.message);
  const tests = testFilesTouched(fix, options.bundle, options.profile);
  if (tests.length > 0) return fail('touches-test-files', `the patch changes test files, which the evaluation restores: ${tests.join(', ')}`);
  const bug = parsePatch(options.bundle['bug_inject.diff']);
  if (isPatchProblem(bug)) return fail('malformed-patch', `the bundle's bug_inject.diff: ${bug.message}`);

  const contents = new Map<string, string | null>();
  for (const path of new Set([...patchedPaths(bug), ...patchedPaths(fix)])) {
    contents.set(path, await readFile(join(options.worktree, path), 'utf8').catch(() => null));
  }
  const buggy = applyPatch((path) => contents.get(path) ?? null, bug, { fuzz: 2 });
  if (!buggy.ok) return fail('does-not-apply', `the bug does not apply to the clean tree: ${buggy.problem.message}`);
  const state = new Map<string, PatchedFile>(buggy.files.map((file) => [file.path, file]));
  const fixed = applyPatch((path) => (state.has(path) ? (state.get(path)?.after ?? null) : (contents.get(path) ?? null)), fix);
  if (!fixed.ok) return fail('does-not-apply', `the patch does not apply over the bug: ${fixed.problem.message}`);
  for (const file of fixed.files) state.set(file.path, { path: file.path, before: contents.get(file.path) ?? null, after: file.after });

  const runner = await createBundleRunner({
    bundle: options.bundle,
    worktree: options.worktree,
    python: options.profile.python,
    sandboxProvider: options.sandboxProvider,
    // FAIL_TO_PASS and PASS_TO_PASS are nearly the whole suite: the output it may print.
    limits: { ...bundleRunLimits(options.profile.timeoutMs, options.failToPass.length + options.passToPass.length), ...options.limits },
    ...(options.image === undefined ? {} : { image: options.image }),
  });
  try {
    const run = await runner.run('repair', [...state.values()]);
    if (!run.ok) return fail(run.stage, run.reason);
    const failing: string[] = [];
    const missing: string[] = [];
    for (const id of [...options.failToPass, ...options.passToPass]) {
      const status = run.results[id];
      if (status === undefined) missing.push(id);
      else if (status !== 'passed') failing.push(id);
    }
    const allTestsPass = failing.length === 0 && missing.length === 0;
    const shown = [...failing, ...missing.map((id) => `${id} (missing)`)];
    const detail = `${shown.length} of ${options.failToPass.length + options.passToPass.length} required test(s) do not pass: ${shown.slice(0, 8).join(', ')}${shown.length > 8 ? ` and ${shown.length - 8} more` : ''}`;
    return {
      reward: repairReward({ allTestsPass }),
      failure: allTestsPass ? null : { kind: 'tests-fail', detail },
      failing,
      missing,
      scriptSeconds: run.seconds,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await runner.close();
  }
}
