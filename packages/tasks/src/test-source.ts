import { nodeIdFile, parseNodeId } from '@envgen/core';
import { extractEntities } from '@envgen/python';

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
  const { entities } = extractEntities(source, nodeIdFile(nodeId));
  const simpleName = qualifiedName.split('.').at(-1);
  const entity =
    entities.find((candidate) => candidate.qualifiedName === qualifiedName) ??
    entities.find((candidate) => candidate.kind !== 'class' && candidate.name === simpleName);
  if (entity === undefined) return null;
  return source.split('\n').slice(entity.startLine - 1, entity.endLine).join('\n');
}
