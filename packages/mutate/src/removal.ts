import type { Rng } from '@envgen/core';
import type { SyntaxNode } from '@envgen/python';
import { FUNCTION_KINDS, collectNodes, isStringStatement, locateEntity, ranInTests, statementBlocks } from './entity-node.js';
import { applyTextEdits, deleteStatements, indentOf, ownsLines, statementsOf } from './source-text.js';
import type { Strategy } from './types.js';

/** The statements of a block after its docstring, if the block is a function body with one. */
function codeStatements(block: SyntaxNode, isBody: boolean): SyntaxNode[] {
  const statements = statementsOf(block);
  const first = statements[0];
  return isBody && first !== undefined && isStringStatement(first) ? statements.slice(1) : statements;
}

/** True for statements that already do nothing: `pass`, `...`, `return [None]`, `raise NotImplementedError`. */
function isPlaceholder(statement: SyntaxNode): boolean {
  if (statement.type === 'pass_statement') return true;
  if (statement.type === 'return_statement') return statement.namedChildren.every((child) => child.type === 'none');
  if (statement.type === 'expression_statement') return statement.namedChildren.every((child) => child.type === 'ellipsis');
  return statement.type === 'raise_statement' && /^raise\s+NotImplementedError\b/.test(statement.text);
}

/**
 * What replaces a removed body: a generator stays a generator that yields nothing (callers
 * that iterate still run), a function that returned a value returns None, others just pass.
 */
function emptyBody(definition: SyntaxNode, indent: string | null): string {
  const own = (type: string): SyntaxNode[] => collectNodes(definition, (node) => node.type === type, { ownScopeOnly: true });
  if (own('yield').length > 0) return indent === null ? 'return; yield' : `return\n${indent}yield`;
  return own('return_statement').some((node) => node.namedChildCount > 0) ? 'return None' : 'pass';
}

/** Removal: replace a function's whole body by `pass` / `return None`, keeping its docstring. */
export const removeFunctionBody: Strategy = {
  name: 'remove_function_body',
  family: 'removal',
  appliesTo: FUNCTION_KINDS,
  apply({ source, entity, executedLines }) {
    const { definition, body } = locateEntity(source, entity);
    if (!ranInTests(executedLines, definition)) return null;
    const code = codeStatements(body, true);
    const first = code[0];
    const last = code.at(-1);
    if (first === undefined || last === undefined || code.every(isPlaceholder)) return null;
    return {
      newSource: applyTextEdits(source, [{ start: first.startIndex, end: last.endIndex, text: emptyBody(definition, indentOf(source, first)) }]),
      description: `removed the body of ${entity.qualifiedName} (${code.length} statement${code.length === 1 ? '' : 's'}, lines ${first.startPosition.row + 1}-${last.endPosition.row + 1})`,
    };
  },
};

// Target shapes that bind the names inside them (attributes and subscripts bind nothing).
const TARGET_CONTAINERS = new Set(['pattern_list', 'tuple_pattern', 'list_pattern', 'list_splat_pattern', 'tuple', 'list', 'expression_list', 'parenthesized_expression', 'as_pattern_target']);

function targetNames(target: SyntaxNode | null): string[] {
  if (target === null) return [];
  if (target.type === 'identifier') return [target.text];
  return TARGET_CONTAINERS.has(target.type) ? target.namedChildren.flatMap(targetNames) : [];
}

/** The names a node binds in the function's own scope. */
function boundNames(node: SyntaxNode): string[] {
  switch (node.type) {
    case 'assignment':
    case 'augmented_assignment':
    case 'for_statement':
      return targetNames(node.childForFieldName('left'));
    case 'named_expression':
      return targetNames(node.childForFieldName('name'));
    case 'as_pattern_target':
      return targetNames(node);
    case 'function_definition':
    case 'class_definition':
      return targetNames(node.childForFieldName('name'));
    case 'import_statement':
    case 'import_from_statement':
      return node.childrenForFieldName('name').map((name) =>
        name.type === 'aliased_import' ? (name.childForFieldName('alias')?.text ?? '') : (name.text.split('.')[0] ?? ''),
      );
    default:
      return [];
  }
}

/** True when `node` names a value (not an attribute name after a dot, not a keyword argument's name). */
function isRead(node: SyntaxNode): boolean {
  const parent = node.parent;
  if (node.type !== 'identifier' || parent === null) return false;
  if (parent.type === 'attribute') return parent.childForFieldName('attribute')?.id !== node.id;
  if (parent.type === 'keyword_argument') return parent.childForFieldName('name')?.id !== node.id;
  return true;
}

/** Where a function binds and reads names, gathered once for all runs of remove_block. */
interface NameFacts {
  parameters: Set<string>;
  bindings: { name: string; start: number; end: number }[];
  reads: { name: string; at: number }[];
}

function gatherNameFacts(definition: SyntaxNode): NameFacts {
  const parameters = definition.childForFieldName('parameters');
  const body = definition.childForFieldName('body');
  return {
    parameters: new Set(parameters === null ? [] : collectNodes(parameters, (node) => node.type === 'identifier').map((node) => node.text)),
    bindings: (body === null ? [] : collectNodes(body, (node) => boundNames(node).length > 0, { ownScopeOnly: true })).flatMap((node) =>
      boundNames(node).map((name) => ({ name, start: node.startIndex, end: node.endIndex })),
    ),
    reads: collectNodes(definition, isRead).map((node) => ({ name: node.text, at: node.startIndex })),
  };
}

/**
 * True when deleting `[start, end)` would leave a name unbound that later code reads: a name
 * bound in the run, read after it, with no parameter or other binding finished before that
 * read. Such a bug would surface as NameError/UnboundLocalError instead of wrong behaviour.
 */
function leavesNameUnbound(facts: NameFacts, start: number, end: number): boolean {
  const inRun = (binding: { start: number; end: number }): boolean => binding.start >= start && binding.end <= end;
  const lost = new Set(facts.bindings.filter(inRun).map((binding) => binding.name).filter((name) => !facts.parameters.has(name)));
  if (lost.size === 0) return false;
  const others = facts.bindings.filter((binding) => !inRun(binding) && lost.has(binding.name));
  return facts.reads.some(
    (read) => read.at >= end && lost.has(read.name) && !others.some((binding) => binding.name === read.name && binding.end <= read.at),
  );
}

/** Smallest share of a block's statements that remove_block deletes. */
const MIN_BLOCK_SHARE = 0.3;

/** A contiguous run of statements of one block. */
interface StatementRun {
  block: SyntaxNode;
  statements: SyntaxNode[];
}

/**
 * The runs remove_block may delete from one block: at least 30% of its statements, all owning
 * their lines, never the whole function body, leaving no later read of a name unbound, and
 * holding a statement the clean suite ran.
 */
function removableRuns(source: string, facts: NameFacts, block: SyntaxNode, isBody: boolean, executedLines: ReadonlySet<number> | undefined): StatementRun[] {
  const code = codeStatements(block, isBody);
  const ran = code.map((statement) => ranInTests(executedLines, statement));
  const n = code.length;
  if (n < 2) return [];
  const runs: StatementRun[] = [];
  for (let size = Math.ceil(MIN_BLOCK_SHARE * n); size <= (isBody ? n - 1 : n); size++) {
    for (let offset = 0; offset + size <= n; offset++) {
      const statements = code.slice(offset, offset + size);
      const first = statements[0];
      const last = statements.at(-1);
      if (first === undefined || last === undefined || !statements.every((statement) => ownsLines(source, statement))) continue;
      if (ran.slice(offset, offset + size).includes(true) && !leavesNameUnbound(facts, first.startIndex, last.endIndex)) runs.push({ block, statements });
    }
  }
  return runs;
}

/** Picks a block (uniformly among those with a removable run), then one of its runs. */
function pickRun(source: string, definition: SyntaxNode, rng: Rng, executedLines: ReadonlySet<number> | undefined): StatementRun | null {
  const body = definition.childForFieldName('body');
  const facts = gatherNameFacts(definition);
  const perBlock = statementBlocks(body ?? definition)
    .map((block) => removableRuns(source, facts, block, block.id === body?.id, executedLines))
    .filter((runs) => runs.length > 0);
  return perBlock.length === 0 ? null : rng.pick(rng.pick(perBlock));
}

/** Removal: delete a large contiguous run of statements (≥ 30% of a block) while the function stays callable. */
export const removeBlock: Strategy = {
  name: 'remove_block',
  family: 'removal',
  appliesTo: FUNCTION_KINDS,
  apply({ source, entity, rng, executedLines }) {
    const { definition } = locateEntity(source, entity);
    const run = pickRun(source, definition, rng, executedLines);
    const first = run?.statements[0];
    const last = run?.statements.at(-1);
    if (run === null || first === undefined || last === undefined) return null;
    const total = codeStatements(run.block, run.block.id === definition.childForFieldName('body')?.id).length;
    return {
      newSource: applyTextEdits(source, deleteStatements(source, run.block, run.statements)),
      description: `removed lines ${first.startPosition.row + 1}-${last.endPosition.row + 1} (${run.statements.length} of ${total} statements of a block) of ${entity.qualifiedName}`,
    };
  },
};
