import { nodeIdFile, parseNodeId, recentCache } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import type { Entity } from '@envgen/python';

// A repo's tasks name tests of the same few files: each text is parsed once (keyed by content, so
// another repo's file at the same path or an edited one is parsed again), the last 32 kept.
const parsed = recentCache<string, Entity[]>(32);

function entitiesOf(source: string, path: string): Entity[] {
  return parsed.get(`${path}\0${source}`, () => extractEntities(source, path).entities);
}

/**
 * The source of the test a pytest node id names, cut from `source` (the test file) with
 * tree-sitter: `path::Class::test[param]` → the method `Class.test`. A test inherited from a base
 * class is found by its name when the class does not define it. Null when nothing matches
 * (e.g. a doctest).
 */
export function extractTestSource(source: string, nodeId: string): string | null {
  const parts = parseNodeId(nodeId);
  if (parts === null) return null;
  const qualifiedName = [...parts.classes, parts.name].join('.');
  const entities = entitiesOf(source, nodeIdFile(nodeId));
  const simpleName = qualifiedName.split('.').at(-1);
  const entity =
    entities.find((candidate) => candidate.qualifiedName === qualifiedName) ??
    entities.find((candidate) => candidate.kind !== 'class' && candidate.name === simpleName);
  if (entity === undefined) return null;
  return source.split('\n').slice(entity.startLine - 1, entity.endLine).join('\n');
}
