import { EnvgenError, ERROR_CODES, recentCache } from '@envgen/core';
import { createOffsetMap, parsePython } from '@envgen/python';
import type { Entity, SyntaxNode, Tree } from '@envgen/python';

/** The entity kinds statement- and expression-level strategies work in. */
export const FUNCTION_KINDS = ['function', 'method'] as const;
/** The entity kinds class-level strategies work on. */
export const CLASS_KINDS = ['class'] as const;

/** An entity's definition found in a freshly parsed tree. */
export interface EntityNode {
  /** The `function_definition` or `class_definition` (decorators excluded). */
  definition: SyntaxNode;
  /** Its `body` block. */
  body: SyntaxNode;
  /** The decorated definition when there are decorators, else the definition itself. */
  outer: SyntaxNode;
}

/**
 * Characters of source whose trees are kept: the planner draws sites from every file of a
 * project in turn, and a tree's native memory is some tens of times its source's size.
 */
const PARSED_BUDGET = 2_000_000;
const parsed = recentCache<string, Tree>(PARSED_BUDGET, (source) => source.length);

/**
 * The tree of `source`, parsed once while it is among the sources mutated last (up to
 * {@link PARSED_BUDGET} characters, at least the latest): strategies and the check of their
 * edits only read trees, so the many (entity, strategy, seed) tries on one file share it
 * instead of parsing it for each, also when the tries hop from file to file.
 */
export function parseCached(source: string): Tree {
  return parsed.get(source, () => parsePython(source));
}

/**
 * Parses `source` and finds `entity`'s definition by its UTF-8 byte span (converted to
 * string indices). Throws when the entity does not belong to this source: entities must be
 * extracted from the exact text being mutated.
 */
export function locateEntity(source: string, entity: Entity): EntityNode {
  const offsets = createOffsetMap(source);
  const start = offsets.indexAt(entity.startByte);
  const end = offsets.indexAt(entity.endByte);
  const outer = parseCached(source).rootNode.descendantForIndex(start, end);
  const definition = outer.type === 'decorated_definition' ? outer.childForFieldName('definition') : outer;
  const body = definition?.childForFieldName('body') ?? null;
  const expectedType = entity.kind === 'class' ? 'class_definition' : 'function_definition';
  if (
    definition === null ||
    body === null ||
    definition.type !== expectedType ||
    definition.childForFieldName('name')?.text !== entity.name ||
    outer.startIndex !== start ||
    outer.endIndex !== end
  ) {
    throw new EnvgenError(
      ERROR_CODES.internal,
      `entity ${entity.qualifiedName} (bytes ${entity.startByte}-${entity.endByte}) is not a ${expectedType} of this source; extract entities from the same text you mutate`,
    );
  }
  return { definition, body, outer };
}

// Scopes of their own: what happens inside them is not the enclosing function's own code.
const SCOPE_TYPES = new Set(['function_definition', 'lambda', 'class_definition']);

/**
 * Every node under `root` (itself included) accepted by `keep`, in source order. With
 * `ownScopeOnly`, nested functions, lambdas and classes are not searched.
 */
export function collectNodes(
  root: SyntaxNode,
  keep: (node: SyntaxNode) => boolean,
  options: { ownScopeOnly?: boolean } = {},
): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  // A cursor walk: several times faster than recursing through `children` arrays in the node binding.
  const cursor = root.walk();
  for (;;) {
    const node = cursor.currentNode;
    if (keep(node)) found.push(node);
    const prune = options.ownScopeOnly === true && node.id !== root.id && SCOPE_TYPES.has(node.type);
    if (!prune && cursor.gotoFirstChild()) continue;
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) return found;
    }
  }
}

/**
 * The statement blocks under `root`, in source order. A match statement's block holds case
 * clauses, not statements, so it is left out.
 */
export function statementBlocks(root: SyntaxNode): SyntaxNode[] {
  return collectNodes(root, (node) => node.type === 'block' && node.parent?.type !== 'match_statement');
}

/** The statement `node` is part of (itself when it is one): the node whose parent is a block or the module. */
function statementOf(node: SyntaxNode): SyntaxNode {
  let at = node;
  while (at.parent !== null && at.parent.type !== 'block' && at.parent.type !== 'module') at = at.parent;
  return at;
}

/**
 * True when the clean suite ran the code at `node` (always, when `executedLines` is unknown):
 * a line of the node's span ran, counted from the start of its statement (a compound
 * statement's header runs when its condition is evaluated; an operator's line may report no
 * line event of its own). A function or method definition counts by its body: its `def`
 * line runs at import whether or not anything calls it.
 */
export function ranInTests(executedLines: ReadonlySet<number> | undefined, node: SyntaxNode): boolean {
  if (executedLines === undefined) return true;
  const definition = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  const body = definition?.type === 'function_definition' ? definition.childForFieldName('body') : null;
  if (body !== null) return anyRowRan(executedLines, body.startPosition.row, body.endPosition.row);
  return anyRowRan(executedLines, statementOf(node).startPosition.row, node.endPosition.row);
}

/** True when a line of rows `first`–`last` (0-based, inclusive) ran. */
function anyRowRan(executedLines: ReadonlySet<number>, first: number, last: number): boolean {
  for (let row = first; row <= last; row++) if (executedLines.has(row + 1)) return true;
  return false;
}

/**
 * True when the clean suite ran code inside compound `statement` (an if's branches, a loop's
 * body, a with or try body): deleting an if whose condition always failed, or a loop that
 * never iterated, changes nothing a test can see. Other statements: {@link ranInTests}.
 */
export function bodyRan(executedLines: ReadonlySet<number> | undefined, statement: SyntaxNode): boolean {
  const firstBlock = statement.namedChildren.find((child) => child.type === 'block');
  if (executedLines === undefined || firstBlock === undefined) return ranInTests(executedLines, statement);
  return anyRowRan(executedLines, firstBlock.startPosition.row, statement.endPosition.row);
}

/** True when `statement` is a bare string expression (a docstring in first position). */
export function isStringStatement(statement: SyntaxNode): boolean {
  const only = statement.namedChildren;
  return (
    statement.type === 'expression_statement' &&
    only.length === 1 &&
    (only[0]?.type === 'string' || only[0]?.type === 'concatenated_string')
  );
}

// Expressions that bind tighter than any operator, so they can move without parentheses.
const ATOMIC_TYPES = new Set([
  'identifier', 'attribute', 'call', 'subscript', 'parenthesized_expression', 'integer', 'float',
  'string', 'concatenated_string', 'true', 'false', 'none', 'ellipsis', 'list', 'dictionary', 'set',
  'tuple', 'list_comprehension', 'dictionary_comprehension', 'set_comprehension', 'generator_expression',
]);

/** The expression's text, parenthesized unless it is atomic. */
export function wrapExpression(node: SyntaxNode): string {
  return ATOMIC_TYPES.has(node.type) ? node.text : `(${node.text})`;
}
