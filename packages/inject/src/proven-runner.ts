import type { Verdict } from '@envgen/core';
import type { BundleRun, BundleRunner, BundleTestStatus } from '@envgen/bundle';
import type { PatchedFile } from '@envgen/patch';

/** Decides a changed tree's verdict against the baseline (the injector's fast validator). */
export type JudgeFiles = (files: readonly PatchedFile[]) => Promise<Verdict>;

export interface ProvenRunnerOptions {
  /** The bundle's own script and parser run once on the clean repo (checks 2 and 3). */
  clean: BundleRun & { ok: true };
  /** The bug's files and its verdict from validation (check 5). */
  bugFiles: readonly PatchedFile[];
  bugVerdict: Extract<Verdict, { kind: 'instance' }>;
  /** Tests the weakening deletes: they are gone from any tree holding the weakening. */
  removedTests: ReadonlySet<string>;
  judge: JudgeFiles;
}

function sameFiles(a: readonly PatchedFile[], b: readonly PatchedFile[]): boolean {
  const key = (files: readonly PatchedFile[]) => JSON.stringify(files.map((file) => [file.path, file.after]).sort());
  return key(a) === key(b);
}

/**
 * Answers checkBundle's evaluations from runs the injector has already made: the clean run
 * of the bundle's own script and parser, the bug's validation verdict, and a validation of
 * bug + weakening. Results are stated for the clean-passing tests, which are all the checks
 * compare: FAIL_TO_PASS fail, the rest pass, deleted tests are gone.
 */
export function createProvenRunner(options: ProvenRunnerOptions): BundleRunner {
  const cleanPassing = Object.entries(options.clean.results)
    .filter(([, status]) => status === 'passed')
    .map(([id]) => id);
  const fromVerdict = (label: string, verdict: Verdict, removed: ReadonlySet<string>): BundleRun => {
    if (verdict.kind === 'rejected' && verdict.reason !== 'no-failing-test' && verdict.reason !== 'no-passing-test') {
      return { ok: false, label, stage: 'script', reason: `${verdict.reason}: ${verdict.detail}` };
    }
    const failing = new Set(verdict.kind === 'instance' ? verdict.failToPass : []);
    const results: Record<string, BundleTestStatus> = {};
    for (const id of cleanPassing) {
      if (removed.has(id)) continue;
      results[id] = failing.has(id) ? 'failed' : 'passed';
    }
    return { ok: true, label, results, seconds: 0 };
  };
  return {
    async run(label, files) {
      if (files.length === 0) return { ...options.clean, label };
      if (sameFiles(files, options.bugFiles)) return fromVerdict(label, options.bugVerdict, new Set());
      return fromVerdict(label, await options.judge(files), options.removedTests);
    },
    async close() {},
  };
}
