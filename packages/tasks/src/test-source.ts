import { extractEntities } from '@envgen/python';

/** The file part of a pytest node id (`tests/test_x.py::TestA::test_b[1]` → `tests/test_x.py`). */
export function nodeIdFile(nodeId: string): string {
  return nodeId.split('::')[0] ?? nodeId;
}

/**
 * The source of the test a pytest node id names, cut from `source` (the test file) with
 * tree-sitter: `path::Class::test[param]` → the method `Class.test`. A test inherited from a base
 * class is found by its name when the class does not define it. Null when nothing matches
 * (e.g. a doctest).
 */
export function extractTestSource(source: string, nodeId: string): string | null {
  const parts = nodeId.split('::').slice(1);
  if (parts.length === 0) return null;
  const qualifiedName = parts.map((part) => part.replace(/\[.*\]$/s, '')).join('.');
  const { entities } = extractEntities(source, nodeIdFile(nodeId));
  const simpleName = qualifiedName.split('.').at(-1);
  const entity =
    entities.find((candidate) => candidate.qualifiedName === qualifiedName) ??
    entities.find((candidate) => candidate.kind !== 'class' && candidate.name === simpleName);
  if (entity === undefined) return null;
  return source.split('\n').slice(entity.startLine - 1, entity.endLine).join('\n');
}
