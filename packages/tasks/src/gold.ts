import { EnvgenError } from '@envgen/core';
import type { FileChanges } from '@envgen/core';
import { computeGoldLabels } from '@envgen/labels';
import type { FixedFile } from '@envgen/labels';
import { applyPatch } from '@envgen/patch';

/**
 * The gold localization of a bug's fix. Labels describe the fix (DESIGN.md), so each file the
 * bug touches is seen from the buggy side (`before`) to the clean one (`after`).
 *
 * @param patch the bug diff (clean → buggy), as stored in the instance
 * @param readClean the clean repo's content of a path, or null when it does not exist
 */
export function computeTaskGold(patch: string, readClean: (path: string) => string | null): FileChanges[] {
  const applied = applyPatch(readClean, patch);
  if (!applied.ok) {
    throw new EnvgenError(
      'store-corrupt',
      `the instance's patch no longer applies to its base commit (${applied.problem.message}); the pool and the repo disagree — re-run envgen inject for this repo`,
    );
  }
  const fixed: FixedFile[] = applied.files.map((file) => ({ path: file.path, before: file.after, after: file.before }));
  return computeGoldLabels(fixed);
}
