import { nodeIdFile } from '@envgen/core';
import type { Verdict } from '@envgen/core';
import type { BundleRun, BundleRunner, BundleTestStatus } from '@envgen/bundle';
import type { PatchedFile } from '@envgen/patch';
import type { SelectedRun } from '@envgen/validate';

/** Decides a changed tree's verdict against the baseline (the injector's fast validator). */
export type JudgeFiles = (files: readonly PatchedFile[]) => Promise<Verdict>;

/** Collects the `select`ed test paths of a changed tree in a warm interpreter and runs the `only` tests it finds. */
export type RunSelected = (files: readonly PatchedFile[], select: readonly string[], only: readonly string[]) => Promise<SelectedRun>;

export interface ProvenRunnerOptions {
  /** The bundle's own script and parser run once on the clean repo (checks 2 and 3). */
  clean: BundleRun & { ok: true };
  /** The bug's files and its verdict from validation (check 5). */
  bugFiles: readonly PatchedFile[];
  bugVerdict: Extract<Verdict, { kind: 'instance' }>;
  /** The test files the weakening edits. */
  weakenedFiles: ReadonlySet<string>;
  judge: JudgeFiles;
  runSelected: RunSelected;
  /** Opens the bundle's own script run cold; called at most once, and closed with the runner. */
  openCold: () => Promise<BundleRunner>;
  /**
   * Every run but the clean one and the bug's is cold: for a bug whose verdict the warm
   * interpreters could not reach (a module pytest imports when it starts), the bug's run
   * being the verdict's own fresh full-suite run.
   */
  coldOnly?: boolean;
}

function sameFiles(a: readonly PatchedFile[], b: readonly PatchedFile[]): boolean {
  const key = (files: readonly PatchedFile[]) => JSON.stringify(files.map((file) => [file.path, file.after]).sort());
  return key(a) === key(b);
}

/**
 * Answers checkBundle's evaluations from runs the injector has already made or can make
 * warm: the clean run of the bundle's own script and parser, the bug's validation verdict,
 * a validation of the bug with a file reverted (check 7), and for bug + weakening (check 6,
 * which asks only whether the FAIL_TO_PASS tests pass or are gone) a warm run that collects
 * the test files the weakening edits and those that collect a FAIL_TO_PASS test, and runs
 * the FAIL_TO_PASS tests still there; every other test is stated as with the bug alone, and
 * where no warm interpreter ran it (a checkpoint declined the change, or the interpreter
 * failed), where a FAIL_TO_PASS test still fails there (the selection is not the whole
 * suite), or where a selected file that collected with the bug alone did not, the bundle's
 * own script run cold answers instead. Results are stated for the
 * clean-passing tests, which are all the checks compare. With `coldOnly`, the runs besides
 * the clean and bug runs are all cold.
 */
export function createProvenRunner(options: ProvenRunnerOptions): BundleRunner {
  const cleanPassing = Object.entries(options.clean.results)
    .filter(([, status]) => status === 'passed')
    .map(([id]) => id);
  const bugFailing = new Set(options.bugVerdict.failToPass);
  let cold: Promise<BundleRunner> | undefined;
  const runCold = async (label: string, files: readonly PatchedFile[]): Promise<BundleRun> => (await (cold ??= options.openCold())).run(label, files);
  const fromVerdict = (label: string, verdict: Verdict): BundleRun => {
    if (verdict.kind === 'rejected' && verdict.reason !== 'no-failing-test' && verdict.reason !== 'no-passing-test') {
      return { ok: false, label, stage: 'script', reason: `${verdict.reason}: ${verdict.detail}` };
    }
    const failing = new Set(verdict.kind === 'instance' ? verdict.failToPass : []);
    const results: Record<string, BundleTestStatus> = {};
    for (const id of cleanPassing) results[id] = failing.has(id) ? 'failed' : 'passed';
    return { ok: true, label, results, seconds: 0 };
  };
  const weakened = async (label: string, files: readonly PatchedFile[]): Promise<BundleRun> => {
    const select = [...new Set([...options.weakenedFiles, ...options.bugVerdict.failToPass.map(nodeIdFile)])].sort();
    const run = await options.runSelected(files, select, options.bugVerdict.failToPass);
    // A selected file that did not collect though it did with the bug alone (a test of it passed
    // then): the bundle's own script says what the weakening did to it (check 6). One whose
    // tests the bug broke all may not have collected with the bug either.
    const collectedWithBug = (file: string): boolean => cleanPassing.some((id) => !bugFailing.has(id) && nodeIdFile(id) === file);
    if (!run.ok || run.uncollected.some(collectedWithBug)) return runCold(label, files);
    const results: Record<string, BundleTestStatus> = {};
    for (const id of cleanPassing) {
      if (!bugFailing.has(id)) {
        results[id] = 'passed';
        continue;
      }
      const outcome = run.results[id]?.outcome;
      if (outcome !== undefined) results[id] = outcome === 'passed' || outcome === 'skipped' ? outcome : 'failed';
    }
    // A test the weakening should hide that still fails in the selection: the full suite the
    // bundle's script runs says whether it does (a test module that imports only after another
    // file was collected, jaraco/tempora's, carries the deselection there and not here).
    if (Object.values(results).includes('failed')) return runCold(label, files);
    return { ok: true, label, results, seconds: 0 };
  };
  return {
    async run(label, files) {
      if (files.length === 0) return { ...options.clean, label };
      if (sameFiles(files, options.bugFiles)) return fromVerdict(label, options.bugVerdict);
      if (options.coldOnly === true) return runCold(label, files);
      if (files.some((file) => options.weakenedFiles.has(file.path))) return weakened(label, files);
      return fromVerdict(label, await options.judge(files));
    },
    async close() {
      // A cold runner that failed to open has nothing to close; its error went to its run.
      const opened = await cold?.catch(() => undefined);
      await opened?.close();
    },
  };
}
