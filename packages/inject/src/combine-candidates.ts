import type { Candidate, Rng } from '@envgen/core';
import { applyPatch, makePatch } from '@envgen/patch';
import type { PatchedFile } from '@envgen/patch';
import type { PlannedCandidate } from './plan-candidates.js';

/** A validated bug that may be combined: its instance id, candidate and changed files. */
export interface CombinableBug {
  instanceId: string;
  candidate: Candidate;
  files: PatchedFile[];
}

export interface CombineOptions {
  /** How many combinations to propose at most. */
  count: number;
  /** Bugs per combination: from 2 up to this (default 4). */
  maxParts?: number;
}

function fileKey(bug: CombinableBug): string {
  return bug.files.map((file) => file.path).sort().join('\n');
}

/**
 * Merges 2–4 validated single-file bugs of the same file into one candidate (strategy
 * `combine`): their patches are applied one after another to the clean file; a group whose
 * hunks collide is skipped. Groups and sizes are drawn from `rng`; the result must be
 * validated again like any candidate.
 */
export function combineCandidates(bugs: readonly CombinableBug[], rng: Rng, options: CombineOptions): PlannedCandidate[] {
  const maxParts = options.maxParts ?? 4;
  const byFile = new Map<string, CombinableBug[]>();
  for (const bug of bugs) {
    if (bug.files.length !== 1 || bug.candidate.family === 'combine') continue;
    const group = byFile.get(fileKey(bug)) ?? [];
    group.push(bug);
    byFile.set(fileKey(bug), group);
  }
  const groups = [...byFile.entries()].filter(([, group]) => group.length >= 2).sort(([a], [b]) => (a < b ? -1 : 1));
  const combined: PlannedCandidate[] = [];
  const seen = new Set<string>();
  for (let attempt = 0; combined.length < options.count && groups.length > 0 && attempt < options.count * 10; attempt++) {
    const [, group] = groups[rng.int(groups.length)] as [string, CombinableBug[]];
    const size = 2 + rng.int(Math.min(maxParts, group.length) - 1);
    const parts = rng.shuffle(group).slice(0, size).sort((a, b) => (a.instanceId < b.instanceId ? -1 : 1));
    const merged = mergeParts(parts);
    if (merged === null || seen.has(merged.patch)) continue;
    seen.add(merged.patch);
    combined.push({
      kind: 'candidate',
      candidate: {
        strategy: 'combine',
        family: 'combine',
        seed: 0,
        patch: merged.patch,
        entities: [...new Set(parts.flatMap((part) => part.candidate.entities))].sort(),
        description: `combined ${parts.length} bugs: ${parts.map((part) => part.candidate.description).join('; ')}`,
        parents: parts.map((part) => part.instanceId),
      },
      files: merged.files,
    });
  }
  return combined;
}

function mergeParts(parts: readonly CombinableBug[]): { patch: string; files: PatchedFile[] } | null {
  const first = parts[0]?.files[0];
  if (!first || first.before === null) return null;
  let current: string = first.before;
  for (const part of parts) {
    const result = applyPatch((path) => (path === first.path ? current : null), part.candidate.patch, { fuzz: 0 });
    const after = result.ok ? result.files[0]?.after : null;
    if (typeof after !== 'string') return null;
    current = after;
  }
  const files = [{ path: first.path, before: first.before, after: current }];
  return { patch: makePatch(files), files };
}
