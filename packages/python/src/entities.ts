import { createOffsetMap } from './offsets.js';
import type { OffsetMap } from './offsets.js';
import { parsePython } from './parse.js';
import type { SyntaxNode } from './parse.js';
import type { Entity, FileEntities } from './types.js';

// Statements whose blocks can hold definitions that still count as module- or class-level
// (`if TYPE_CHECKING:`, `try: ... except ImportError:`); ERROR keeps recovery best-effort.
const STATEMENT_CONTAINERS = new Set([
  'block', 'if_statement', 'elif_clause', 'else_clause', 'try_statement', 'except_clause', 'finally_clause',
  'with_statement', 'for_statement', 'while_statement', 'match_statement', 'case_clause', 'ERROR',
]);

interface Scope {
  /** Qualified name of the enclosing class, or null at module level. */
  className: string | null;
}

/** 1-based last line of a node: a node ending at column 0 ends on the line before. */
function lastLine(node: SyntaxNode): number {
  const { row, column } = node.endPosition;
  return column === 0 && row > node.startPosition.row ? row : row + 1;
}

function buildEntity(outer: SyntaxNode, definition: SyntaxNode, scope: Scope, offsets: OffsetMap): Entity | null {
  const name = definition.childForFieldName('name')?.text;
  const body = definition.childForFieldName('body');
  if (name === undefined || name === '' || body === null) return null;
  const isClass = definition.type === 'class_definition';
  const qualifiedName = scope.className === null ? name : `${scope.className}.${name}`;
  const decorators = outer === definition
    ? []
    : outer.namedChildren.filter((child) => child.type === 'decorator').map((decorator) => decorator.text.replace(/^@\s*/, ''));
  return {
    kind: isClass ? 'class' : scope.className === null ? 'function' : 'method',
    qualifiedName,
    name,
    className: isClass ? null : scope.className,
    startLine: outer.startPosition.row + 1,
    endLine: lastLine(outer),
    defLine: definition.startPosition.row + 1,
    startByte: offsets.byteAt(outer.startIndex),
    endByte: offsets.byteAt(outer.endIndex),
    bodyStartByte: offsets.byteAt(body.startIndex),
    bodyEndByte: offsets.byteAt(body.endIndex),
    isAsync: !isClass && definition.children.some((child) => child.type === 'async'),
    decorators,
  };
}

/**
 * Collects the entities under `node`: definitions directly in the module or a class body,
 * also inside compound statements there (`if`, `try`, `with`, loops). A function's body is
 * not searched: what it defines belongs to it.
 */
function collectEntities(node: SyntaxNode, scope: Scope, offsets: OffsetMap, out: Entity[]): void {
  for (const child of node.namedChildren) {
    const definition = child.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
    if (definition === null) continue;
    if (definition.type === 'function_definition') {
      const entity = buildEntity(child, definition, scope, offsets);
      if (entity !== null) out.push(entity);
    } else if (definition.type === 'class_definition') {
      const entity = buildEntity(child, definition, scope, offsets);
      if (entity === null) continue;
      out.push(entity);
      const body = definition.childForFieldName('body');
      if (body !== null) collectEntities(body, { className: entity.qualifiedName }, offsets, out);
    } else if (STATEMENT_CONTAINERS.has(child.type)) {
      collectEntities(child, scope, offsets, out);
    }
  }
}

/**
 * Extracts the functions, methods and classes of one Python file, in source order, with
 * 1-based lines and UTF-8 byte spans. Nested functions are not entities (they belong to
 * their outer function); methods of nested classes are (`Outer.Inner.method`). A file with
 * syntax errors still yields the definitions tree-sitter recovered, with `hasErrors` set.
 */
export function extractEntities(source: string, path: string): FileEntities {
  const tree = parsePython(source);
  const entities: Entity[] = [];
  collectEntities(tree.rootNode, { className: null }, createOffsetMap(source), entities);
  return { path, entities, hasErrors: tree.rootNode.hasError };
}

/** Options of {@link findEnclosingEntity}. */
export interface FindEnclosingEntityOptions {
  /**
   * Whether a definition's decorator lines belong to it (default true, as for coverage:
   * a decorated function's code object starts at its first decorator). With false a
   * definition spans `defLine`..`endLine`, so a method's decorator lies in its class.
   */
  includeDecorators?: boolean;
}

/**
 * The entity that owns the 1-based `line`: the innermost function or method whose span
 * contains it, else the innermost class, else null (module-level code). A line inside a
 * nested function maps to its outer function.
 */
export function findEnclosingEntity(
  entities: readonly Entity[],
  line: number,
  options: FindEnclosingEntityOptions = {},
): Entity | null {
  const includeDecorators = options.includeDecorators ?? true;
  let bestFunction: Entity | null = null;
  let bestClass: Entity | null = null;
  for (const entity of entities) {
    const start = includeDecorators ? entity.startLine : entity.defLine;
    if (line < start || line > entity.endLine) continue;
    const best = entity.kind === 'class' ? bestClass : bestFunction;
    if (best !== null && best.endLine - best.startLine <= entity.endLine - entity.startLine) continue;
    if (entity.kind === 'class') bestClass = entity;
    else bestFunction = entity;
  }
  return bestFunction ?? bestClass;
}
