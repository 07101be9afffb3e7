import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Instance } from '@envgen/core';
import type { PlannedCandidate } from '@envgen/inject';
import { applyPatch, isPatchProblem, makePatch, parsePatch, patchedPaths } from '@envgen/patch';
import type { PatchedFile } from '@envgen/patch';

/** The strategy higher-order bugs are stored under. */
export const HIGHER_ORDER_STRATEGY = 'higher_order';
/** Bugs are made from failed repairs of order-1 bugs only (SSR's order 2 at most). */
export const MAX_ORDER = 2;

/** A higher-order candidate, or why a failed repair makes none. */
export type HigherOrderResult = { ok: true; planned: PlannedCandidate } | { ok: false; reason: string };

/**
 * A failed repair's patch applied on top of its bug, as a candidate over the clean tree (the
 * bug of order `parent.order + 1`). None when the parent is already of the highest order, the
 * patch is empty or does not apply, or bug + patch gives back the clean tree or the parent's
 * own bug. Validation, weakening and the checks decide the rest, as for any candidate.
 */
export async function makeHigherOrderCandidate(parent: Instance, repairPatch: string, worktree: string): Promise<HigherOrderResult> {
  const order = (parent.order ?? 1) + 1;
  if (order > MAX_ORDER) return { ok: false, reason: `the parent is of order ${parent.order ?? 1}, the highest kept` };
  if (repairPatch.trim() === '') return { ok: false, reason: 'the failed repair changed nothing' };
  const bug = parsePatch(parent.patch);
  const fix = parsePatch(repairPatch);
  if (isPatchProblem(bug)) return { ok: false, reason: `the parent's patch: ${bug.message}` };
  if (isPatchProblem(fix)) return { ok: false, reason: `the failed repair's patch: ${fix.message}` };
  const clean = new Map<string, string | null>();
  for (const path of new Set([...patchedPaths(bug), ...patchedPaths(fix)])) clean.set(path, await readFile(join(worktree, path), 'utf8').catch(() => null));
  const buggy = applyPatch((path) => clean.get(path) ?? null, bug, { fuzz: 2 });
  if (!buggy.ok) return { ok: false, reason: `the parent's bug does not apply: ${buggy.problem.message}` };
  const after = new Map<string, string | null>(buggy.files.map((file) => [file.path, file.after]));
  const repaired = applyPatch((path) => (after.has(path) ? (after.get(path) ?? null) : (clean.get(path) ?? null)), fix);
  if (!repaired.ok) return { ok: false, reason: `the failed repair does not apply over the bug: ${repaired.problem.message}` };
  for (const file of repaired.files) after.set(file.path, file.after);
  const files: PatchedFile[] = [...after.entries()].map(([path, text]) => ({ path, before: clean.get(path) ?? null, after: text }));
  const patch = makePatch(files);
  if (patch === '') return { ok: false, reason: 'the failed repair restores the clean tree' };
  if (patch === parent.patch) return { ok: false, reason: "bug + repair is the parent's own bug" };
  return {
    ok: true,
    planned: {
      kind: 'candidate',
      files: files.filter((file) => file.before !== file.after),
      candidate: {
        strategy: HIGHER_ORDER_STRATEGY,
        family: parent.family,
        seed: parent.seed,
        patch,
        entities: parent.entities,
        description: `a failed repair of ${parent.instance_id} applied on top of its bug (order ${order})`,
        order,
        parent: parent.instance_id,
      },
    },
  };
}
