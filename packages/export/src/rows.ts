import type { FileChanges, Instance, ProblemStatementKind, Task } from '@envgen/core';

/**
 * One SWE-smith row (also the row of the `hf` Parquet files): SWE-smith's fields plus how the
 * bug was made and its gold labels. `patch` is the bug diff (clean → buggy), as SWE-smith
 * ships it; the fix is its reverse. The bug's `description` and `entities` are left out on
 * purpose: they name where the fix goes, which a localization model must find by itself.
 */
export interface SwesmithRow
  extends Pick<Instance, 'instance_id' | 'repo' | 'base_commit' | 'patch' | 'FAIL_TO_PASS' | 'PASS_TO_PASS' | 'created_at' | 'strategy' | 'family'> {
  /** The problem statement's text (never empty). */
  problem_statement: string;
  /** How the problem statement was made. */
  statement_kind: ProblemStatementKind;
  image_name: string;
  /** Gold localization of the fix, per file (DESIGN.md "Gold localization"). */
  file_changes: FileChanges[];
}

/** One CodeScout code-search row. */
export type CodescoutRow = Pick<SwesmithRow, 'instance_id' | 'repo' | 'base_commit' | 'patch' | 'problem_statement' | 'file_changes'>;

/**
 * The `metadata.json` beside an exported SSR bundle: which instance it is, how to run it, and
 * where it sits in self-play: `role` is the side that made the bug (`injector` for an injected
 * bug, `solver` for a failed repair on top of one), `order` 1 or 2, `parent` the instance a
 * higher-order bug was made from.
 */
export type SsrMetadata = Pick<
  SwesmithRow,
  'instance_id' | 'repo' | 'base_commit' | 'strategy' | 'family' | 'image_name' | 'created_at' | 'FAIL_TO_PASS' | 'PASS_TO_PASS'
> & { role: 'injector' | 'solver'; order: number; parent: string | null };

/** An instance that can be exported: it has a task with a non-empty problem statement. */
export interface ExportEntry {
  instance: Instance;
  task: Task;
}

/** The gold labels with their keys in the DESIGN.md order, whatever order the stored task has. */
function copyFileChanges(fileChanges: readonly FileChanges[]): FileChanges[] {
  return fileChanges.map(({ file, changes }) => ({
    file,
    changes: {
      edited_entities: changes.edited_entities,
      edited_modules: changes.edited_modules,
      added_entities: changes.added_entities,
      added_modules: changes.added_modules,
    },
  }));
}

/** The SWE-smith (and hf) row of an instance with its task. */
export function toSwesmithRow({ instance, task }: ExportEntry): SwesmithRow {
  return {
    instance_id: instance.instance_id,
    repo: instance.repo,
    base_commit: instance.base_commit,
    patch: instance.patch,
    FAIL_TO_PASS: instance.FAIL_TO_PASS,
    PASS_TO_PASS: instance.PASS_TO_PASS,
    problem_statement: task.problem_statement.text,
    statement_kind: task.problem_statement.kind,
    image_name: task.image_name,
    created_at: instance.created_at,
    strategy: instance.strategy,
    family: instance.family,
    file_changes: copyFileChanges(task.file_changes),
  };
}

/** The CodeScout row of an instance with its task. */
export function toCodescoutRow({ instance, task }: ExportEntry): CodescoutRow {
  return {
    instance_id: instance.instance_id,
    repo: instance.repo,
    base_commit: instance.base_commit,
    patch: instance.patch,
    problem_statement: task.problem_statement.text,
    file_changes: copyFileChanges(task.file_changes),
  };
}

/** The `metadata.json` of an instance's SSR bundle directory. */
export function toSsrMetadata({ instance, task }: ExportEntry): SsrMetadata {
  return {
    instance_id: instance.instance_id,
    repo: instance.repo,
    base_commit: instance.base_commit,
    strategy: instance.strategy,
    family: instance.family,
    image_name: task.image_name,
    created_at: instance.created_at,
    FAIL_TO_PASS: instance.FAIL_TO_PASS,
    PASS_TO_PASS: instance.PASS_TO_PASS,
    role: (instance.order ?? 1) > 1 ? 'solver' : 'injector',
    order: instance.order ?? 1,
    parent: instance.parent ?? null,
  };
}
