import { join } from 'node:path';
import { EnvgenError } from '@envgen/core';
import { applyPatch, isPatchProblem, parsePatch, writePatchedFiles } from '@envgen/patch';
import type { Profile } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import { buildPytestArgv, buildPytestEnv, openPytestSandbox, writeRunFile } from '@envgen/testrun';
import { readFileOrNull } from './read-file.js';

/**
 * The limits a bug was validated with: the run's, and each stable test's own (node id →
 * seconds), so a test the bug makes hang costs seconds in a run of its failing tests too.
 */
export interface FailureOutputLimits {
  timeoutMs: number;
  perTestSeconds: Readonly<Record<string, number>>;
}

/** Options of {@link captureFailureOutput}. */
export interface CaptureFailureOutputOptions {
  provider: SandboxProvider;
  /** A clean checkout of the base commit; patched for the run and restored after it. */
  worktree: string;
  profile: Profile;
  /** The bug diff. */
  patch: string;
  /** The failing tests to run (a few are enough). */
  nodeIds: readonly string[];
  /** docker: image to run. */
  image?: string;
  /** The limits the bug was validated with (default: the profile's). */
  limits?: FailureOutputLimits;
}

/**
 * Runs the given failing tests on the buggy code, in the sandbox, and returns pytest's own
 * output with short tracebacks (Hypothesis's failing examples shrunk, as the user's pytest
 * shows them; a test past its limit shows envgen's timeout). The worktree is patched in
 * place and always restored.
 */
export async function captureFailureOutput(options: CaptureFailureOutputOptions): Promise<string> {
  const parsed = parsePatch(options.patch);
  if (isPatchProblem(parsed)) throw new EnvgenError('store-corrupt', `the bug diff is malformed (${parsed.message}); re-run envgen inject for this repo`);
  const clean = new Map<string, string | null>();
  for (const file of parsed.files) {
    if (file.oldPath !== null) clean.set(file.oldPath, readFileOrNull(join(options.worktree, file.oldPath)));
  }
  const applied = applyPatch((path) => clean.get(path) ?? null, parsed);
  if (!applied.ok) throw new EnvgenError('store-corrupt', `the bug no longer applies to the checkout (${applied.problem.message}); re-run envgen inject for this repo`);
  await writePatchedFiles(options.worktree, applied.files);
  try {
    const target = await openPytestSandbox(options.provider, { worktree: options.worktree, ...(options.image === undefined ? {} : { image: options.image }) });
    try {
      const argv = [...buildPytestArgv(options.profile, target.sandbox.workdir, options.nodeIds), '--tb=short'];
      const { limits } = options;
      const limitsFile = limits === undefined ? undefined : await writeRunFile(target, 'limits.json', limits.perTestSeconds);
      const exec = await target.sandbox.exec(argv, {
        env: { ...buildPytestEnv(options.profile, `${target.outTarget}/results.json`, false, limitsFile), ENVGEN_NO_SHRINK: '0' },
        limits: { timeoutMs: limits?.timeoutMs ?? options.profile.timeoutMs },
      });
      return exec.stdout;
    } finally {
      await target.close();
    }
  } finally {
    await writePatchedFiles(
      options.worktree,
      applied.files.map((file) => ({ path: file.path, before: file.after, after: file.before })),
    );
  }
}
