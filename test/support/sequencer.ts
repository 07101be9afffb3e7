import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * Seconds each test file took in a whole run on a 2-core machine (`test/durations.json`,
 * written by `scripts/test-durations.ts` from a vitest JSON report), as pytest-split keeps
 * its `.test_durations`.
 */
const DURATIONS = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as Record<string, number>;

/**
 * Longest files first, by their recorded durations, so the two workers finish together: a
 * clean clone has no vitest cache, whose order (largest file first) started the suite of
 * fixture repos, a small file of two fifths of all the tests' seconds, in the tenth minute,
 * and it ran alone at the end. Files with no recorded duration (new ones, and those under a
 * second, which the file leaves out) go first, as vitest runs unknown files first; projects
 * keep vitest's order.
 */
export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    const seconds = (spec: TestSpecification) => DURATIONS[relative(this.ctx.config.root, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    return sorted.sort((a, b) => projects.indexOf(a.project.name) - projects.indexOf(b.project.name) || seconds(b) - seconds(a));
  }
}
