import { nodeIdFile } from '@envgen/core';
import type { Entity } from '@envgen/python';
import type { Baseline } from '@envgen/testrun';

/** Cost of collecting one test file, in tests: importing a test module costs more than running a test. */
export const FILE_COST = 5;

/**
 * Weight factor of an entity that ran while pytest collected the suite (before any test): a
 * bug there most often breaks the import and every test (`no-passing-test`: six's module
 * tables, decorator's decorators applied at import), so such sites are drawn a quarter as
 * often, not never (a bug that keeps the import working is as good as any).
 */
export const RAN_AT_COLLECTION_WEIGHT = 0.25;

/** A source file as the injector sees it: its text, its entities and the lines the clean suite ran. */
export interface SourceFile {
  path: string;
  source: string;
  entities: Entity[];
  /** The lines (1-based) of `source` that ran in the baseline's coverage run; unknown when absent. */
  executedLines?: ReadonlySet<number>;
}

/** An entity that may be mutated: covered by at least one non-flaky test that passes on the clean repo. */
export interface Site {
  path: string;
  entity: Entity;
  /** `path:qualifiedName`. */
  key: string;
  /** Non-flaky clean-passing tests that execute the entity (for a class: any of its methods). */
  tests: string[];
  /**
   * What validating a bug here costs, in test-run units: one per covering test plus
   * {@link FILE_COST} per test file to collect. Counted, not timed: timings vary from run
   * to run, and weights drawn from them would make the same seed pick other sites.
   */
  cost: number;
  /** Sampling weight: higher for entities whose covering tests are cheap, lower for those that ran at collection. */
  weight: number;
}

export interface SiteSelection {
  sites: Site[];
  /** Entities no passing, non-flaky test executes: never mutated (a bug there could not be proven). */
  skippedUncovered: number;
}

/**
 * Chooses where bugs may go, from the baseline's coverage map: only entities executed by a
 * non-flaky test that passes on the clean repo, weighted toward entities whose covering
 * tests are cheap (validation runs them first) and away from those that ran at collection
 * ({@link RAN_AT_COLLECTION_WEIGHT}). A class counts as covered through its methods, and as
 * run at collection when one of them did.
 */
export function selectSites(files: readonly SourceFile[], baseline: Baseline): SiteSelection {
  const flaky = new Set(baseline.flaky);
  const passing = (nodeId: string): boolean => baseline.results[nodeId]?.outcome === 'passed' && !flaky.has(nodeId);
  const coverageByKey = new Map(Object.entries(baseline.coverage).map(([key, tests]) => [key, tests.filter(passing)]));

  const atCollection = new Set(baseline.ranAtCollection ?? []);
  const candidates: Array<Omit<Site, 'weight'> & { atCollection: boolean }> = [];
  let skippedUncovered = 0;
  for (const file of files) {
    for (const entity of file.entities) {
      const key = `${file.path}:${entity.qualifiedName}`;
      const tests =
        entity.kind === 'class'
          ? [...new Set(file.entities.filter((member) => member.className === entity.qualifiedName).flatMap((member) => coverageByKey.get(`${file.path}:${member.qualifiedName}`) ?? []))].sort()
          : (coverageByKey.get(key) ?? []);
      if (tests.length === 0) {
        skippedUncovered += 1;
        continue;
      }
      const files = new Set(tests.map(nodeIdFile));
      const cost = tests.length + FILE_COST * files.size;
      const ranAtCollection =
        entity.kind === 'class' ? file.entities.some((member) => member.className === entity.qualifiedName && atCollection.has(`${file.path}:${member.qualifiedName}`)) : atCollection.has(key);
      candidates.push({ path: file.path, entity, key, tests, cost, atCollection: ranAtCollection });
    }
  }
  // Weight 1 / (1 + cost / typical cost): the cheapest sites are about twice as likely as typical ones.
  const costs = candidates.map((site) => site.cost).sort((a, b) => a - b);
  const typical = Math.max(costs[Math.floor(costs.length / 2)] ?? 0, 1);
  const sites = candidates.map(({ atCollection: ran, ...site }) => ({ ...site, weight: (ran ? RAN_AT_COLLECTION_WEIGHT : 1) / (1 + site.cost / typical) }));
  return { sites, skippedUncovered };
}
