import { findEnclosingEntity } from '@envgen/python';
import type { Entity } from '@envgen/python';
import type { PytestCoverage } from './run-pytest.js';

/** The key of an entity in coverage maps and labels: `path/to/file.py:Class.method`. */
export function entityKey(file: string, qualifiedName: string): string {
  return `${file}:${qualifiedName}`;
}

/**
 * Turns the plugin's per-test `(file, co_firstlineno)` pairs into entity keys → sorted node
 * ids. `entitiesOf` gives a file's entities, or null for files that are not source files
 * (tests, conftest). A code object counts for the innermost function or method around its
 * first line (decorators included, nested functions and lambdas for their outer function);
 * code objects outside any function (class bodies, module code) count for nothing.
 */
export function mapCoverage(
  coverage: PytestCoverage,
  entitiesOf: (file: string) => readonly Entity[] | null,
): Record<string, string[]> {
  const byEntity = new Map<string, Set<string>>();
  const lineKeys = new Map<string, string | null>();
  for (const [nodeId, files] of Object.entries(coverage)) {
    for (const [file, lines] of Object.entries(files)) {
      const entities = entitiesOf(file);
      if (entities === null) continue;
      for (const line of lines) {
        const lineId = `${file}\0${line}`;
        let key = lineKeys.get(lineId);
        if (key === undefined) {
          const entity = findEnclosingEntity(entities, line);
          key = entity === null || entity.kind === 'class' ? null : entityKey(file, entity.qualifiedName);
          lineKeys.set(lineId, key);
        }
        if (key === null) continue;
        let tests = byEntity.get(key);
        if (tests === undefined) byEntity.set(key, (tests = new Set()));
        tests.add(nodeId);
      }
    }
  }
  return Object.fromEntries(
    [...byEntity.keys()].sort().map((key) => [key, [...(byEntity.get(key) ?? [])].sort()]),
  );
}
