import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeError, silentLogger } from '@envgen/core';
import type { Instance } from '@envgen/core';
import { applyPatch } from '@envgen/patch';
import type { PatchedFile } from '@envgen/patch';
import { createValidator } from '@envgen/validate';
import type { MutatedFile, ValidatorOptions } from '@envgen/validate';

/** A bug's files as the validator takes them: a deleted file is written empty. */
export function mutatedFiles(changed: readonly PatchedFile[]): MutatedFile[] {
  return changed.map((file) => ({ path: file.path, after: file.after ?? '' }));
}

/**
 * pytest's failure output (`--tb=short`) of each instance's first `tests` FAIL_TO_PASS tests,
 * run in a validator's warm interpreters from the checkpoint before collection, as
 * {@link runInjection} collects it for the bugs it proves: for the statements of instances
 * proved earlier (`envgen tasks`, a growth round's tasks job). An instance no warm interpreter
 * answers for (a bug in a file pytest imports when it starts, a test that did not fail warm,
 * a patch that no longer applies) is left out, and so is every instance when the validator
 * cannot start: their tests then run cold.
 */
export async function warmFailureOutputs(options: ValidatorOptions, instances: readonly Instance[], tests: number): Promise<Map<string, string>> {
  const logger = options.logger ?? silentLogger;
  const outputs = new Map<string, string>();
  let validator;
  try {
    validator = await createValidator(options);
  } catch (error) {
    logger.warn('no warm interpreter for the failure output of the statements; their tests run cold', { error: describeError(error) });
    return outputs;
  }
  const readClean = (path: string): string | null => {
    try {
      return readFileSync(join(options.worktree, path), 'utf8');
    } catch {
      return null;
    }
  };
  try {
    await Promise.all(
      instances.map(async (instance) => {
        const applied = applyPatch(readClean, instance.patch);
        if (!applied.ok) return;
        const output = await validator.failureOutput(mutatedFiles(applied.files), instance.FAIL_TO_PASS.slice(0, tests));
        if (output !== null) outputs.set(instance.instance_id, output);
      }),
    );
  } finally {
    await validator.close();
  }
  return outputs;
}
