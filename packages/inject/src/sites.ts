import { isModuleOwnDoctest, nodeIdFile, parseNodeId } from '@envgen/core';
import type { Entity } from '@envgen/python';
import type { Baseline } from '@envgen/testrun';

/** Cost of collecting one test file, in tests: importing a test module costs more than running a test. */
export const FILE_COST = 5;

/**
 * Weight factor of an entity that ran while pytest collected the suite (before any test): a
 * bug there most often breaks the import and every test (`no-passing-test`: six's module
 * tables, decorator's decorators applied at import), so such sites are drawn a quarter as
 * often, not never (a bug that keeps the import working is as good as any). Where some of
 * its lines ran only in tests, bugs go on those lines (see {@link Site.executedLines}), and
 * it is drawn as often as an entity that did not run at collection.
 */
export const RAN_AT_COLLECTION_WEIGHT = 0.25;

/** A source file as the injector sees it: its text, its entities and the lines the clean suite ran. */
export interface SourceFile {
  path: string;
  source: string;
  entities: Entity[];
  /** The lines (1-based) of `source` that ran in the baseline's coverage run; unknown when absent. */
  executedLines?: ReadonlySet<number>;
  /** Those of {@link executedLines} that had run when the first test began (collection); unknown when absent. */
  collectionLines?: ReadonlySet<number>;
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
  /**
   * The lines a bug here may go on, where they are not the file's executed lines: for an
   * entity that ran at collection, the lines that ran only after the first test began (the
   * body of a wrapper a decorator returned at import, which the tests call), when it has any.
   */
  executedLines?: ReadonlySet<number>;
  /**
   * With {@link executedLines}: the lines that ran at collection, which a bug here must leave
   * as they are (a loop whose body only tests reached, but whose header ran at import).
   */
  keepLines?: ReadonlySet<number>;
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
  const collected = collectedTests(baseline);
  const candidates: Array<Omit<Site, 'weight'> & { atCollection: boolean }> = [];
  let skippedUncovered = 0;
  for (const file of files) {
    const testOnly = testOnlyLines(file);
    for (const entity of file.entities) {
      // A source module's own tests (patsy defines them beside its code) are no place for a bug.
      if (collected.has(`${file.path}::${entity.qualifiedName.split('.').join('::')}`)) continue;
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
      const onlyInTests = ranAtCollection && testOnly !== null && anyLineIn(testOnly, entity.startLine, entity.endLine);
      // Bugs on lines that ran only in tests break the import no more often than any others.
      const confined = onlyInTests && file.collectionLines !== undefined ? { executedLines: testOnly, keepLines: file.collectionLines } : {};
      candidates.push({ path: file.path, entity, key, tests, cost, atCollection: ranAtCollection && !onlyInTests, ...confined });
    }
  }
  // Weight 1 / (1 + cost / typical cost): the cheapest sites are about twice as likely as typical ones.
  const costs = candidates.map((site) => site.cost).sort((a, b) => a - b);
  const typical = Math.max(costs[Math.floor(costs.length / 2)] ?? 0, 1);
  const sites = candidates.map(({ atCollection: ran, ...site }) => ({ ...site, weight: (ran ? RAN_AT_COLLECTION_WEIGHT : 1) / (1 + site.cost / typical) }));
  return { sites, skippedUncovered };
}

/**
 * The tests and test classes the baseline collected, as node ids without parameters, every
 * level of each (`m.py::TestX` and `m.py::TestX::test_y` for `m.py::TestX::test_y[1]`), but
 * a module's own doctest, named by the module (`tabulate/__init__.py::tabulate`), which is no
 * function of the module of that name.
 */
function collectedTests(baseline: Baseline): Set<string> {
  const ids = new Set<string>();
  for (const nodeId of Object.keys(baseline.results)) {
    const parsed = parseNodeId(nodeId);
    if (parsed === null || isModuleOwnDoctest(parsed)) continue;
    const parts = [parsed.file, ...parsed.classes, parsed.name];
    for (let end = 2; end <= parts.length; end++) ids.add(parts.slice(0, end).join('::'));
  }
  return ids;
}

/** The executed lines of `file` that had not run when the first test began, or null when either set is unknown. */
function testOnlyLines(file: SourceFile): ReadonlySet<number> | null {
  const { executedLines, collectionLines } = file;
  if (executedLines === undefined || collectionLines === undefined) return null;
  return new Set([...executedLines].filter((line) => !collectionLines.has(line)));
}

function anyLineIn(lines: ReadonlySet<number>, first: number, last: number): boolean {
  for (let line = first; line <= last; line++) if (lines.has(line)) return true;
  return false;
}
