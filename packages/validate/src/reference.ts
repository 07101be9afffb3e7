import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@envgen/core';
import type { Verdict } from '@envgen/core';
import { openPytestSandbox, runPytest } from '@envgen/testrun';
import { copyTree, hostPath, resolveCandidateFiles } from './tree.js';
import type { ValidationContext, ValidationInput } from './types.js';
import { candidateLimits, candidateProfile, internalErrorOfBug, verdictOfRun } from './verdict.js';

/** Options of {@link validateReference}: the shared context and one candidate. */
export interface ValidateReferenceOptions extends ValidationContext, ValidationInput {}

/**
 * SWE-smith's way, the yardstick the fast validator must match: a fresh copy of the clean
 * tree, the mutated files written into it, a fresh sandbox, the full suite, and the results
 * compared with the baseline. A run past its limit, or a stable test past the per-test
 * limit, is rejected `timeout`; a run that crashes is rejected `crashed`.
 */
export async function validateReference(options: ValidateReferenceOptions): Promise<Verdict> {
  const logger = options.logger ?? silentLogger;
  const resolved = await resolveCandidateFiles(options.worktree, options.files);
  if (!resolved.ok) return { kind: 'rejected', reason: 'apply-failed', detail: resolved.detail };
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-reference-'));
  try {
    const tree = join(scratch, 'tree');
    await copyTree(options.worktree, tree);
    for (const file of resolved.files) await writeFile(hostPath(tree, file.path), file.after);
    const target = await openPytestSandbox(options.sandboxProvider, { worktree: tree });
    try {
      const limits = options.limits ?? candidateLimits(options.profile, options.baseline);
      const profile = candidateProfile(options.profile, limits);
      const run = await runPytest(target, profile, { timeoutMs: limits.timeoutMs, testLimits: limits.perTestSeconds, logger });
      return internalErrorOfBug(verdictOfRun(options.baseline, run), resolved.files.map((file) => file.path));
    } finally {
      await target.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
