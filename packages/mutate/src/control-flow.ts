import type { SyntaxNode } from '@envgen/python';
import { FUNCTION_KINDS, collectNodes, isStringStatement, locateEntity, ranInTests, statementBlocks } from './entity-node.js';
import { permuteStatements } from './permute.js';
import { applyTextEdits, indentOf, lineOf, linesSpanning, ownsLines, reindentLines, statementsOf } from './source-text.js';
import type { TextEdit } from './source-text.js';
import type { Strategy } from './types.js';

/** Where a block's statements sit: whole indented lines, or inline after the colon. */
function blockRegion(source: string, block: SyntaxNode): { start: number; end: number; indent: string | null } | null {
  const statements = statementsOf(block);
  const first = statements[0];
  const last = statements.at(-1);
  if (first === undefined || last === undefined) return null;
  const indent = indentOf(source, first);
  if (indent === null) return { start: first.startIndex, end: last.endIndex, indent };
  return { ...linesSpanning(source, first, last), indent };
}

/** Edits turning `if c: A else: B` into `if c: B else: A`, or null when the shape differs. */
function planInversion(source: string, node: SyntaxNode): TextEdit[] | null {
  const alternatives = node.childrenForFieldName('alternative');
  const thenBlock = node.childForFieldName('consequence');
  const elseBlock = alternatives.length === 1 ? (alternatives[0]?.childForFieldName('body') ?? null) : null;
  if (thenBlock === null || alternatives[0]?.type !== 'else_clause' || elseBlock === null) return null;
  const thenRegion = blockRegion(source, thenBlock);
  const elseRegion = blockRegion(source, elseBlock);
  if (thenRegion === null || elseRegion === null) return null;
  const moveInto = (from: typeof thenRegion, to: typeof thenRegion): string =>
    from.indent === null || to.indent === null
      ? source.slice(from.start, from.end)
      : reindentLines(source, from, from.indent, to.indent, node);
  if ((thenRegion.indent === null) !== (elseRegion.indent === null)) return null;
  return [
    { start: thenRegion.start, end: thenRegion.end, text: moveInto(elseRegion, thenRegion) },
    { start: elseRegion.start, end: elseRegion.end, text: moveInto(thenRegion, elseRegion) },
  ];
}

/**
 * SWE-smith's ctrl_invert_if: swap an if/else's two branches under the same condition (so
 * each runs when the other should; negating the condition too would change nothing).
 */
export const invertIfElse: Strategy = {
  name: 'invert_if_else',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply({ source, entity, rng, executedLines }) {
    const { definition } = locateEntity(source, entity);
    const sites = collectNodes(definition, (node) => node.type === 'if_statement' && ranInTests(executedLines, node))
      .map((node) => ({ node, edits: planInversion(source, node) }))
      .filter((site): site is { node: SyntaxNode; edits: TextEdit[] } => site.edits !== null);
    if (sites.length === 0) return null;
    const site = rng.pick(sites);
    return { newSource: applyTextEdits(source, site.edits), description: `inverted if/else at line ${lineOf(site.node)}` };
  },
};

// Statements whose position is part of their meaning for the compiler, not just the runtime.
const PINNED_TYPES = new Set(['global_statement', 'nonlocal_statement', 'future_import_statement']);

/** Runs (length ≥ 2) of adjacent statements that can trade places line for line, in code the clean suite ran. */
function movableRuns(source: string, definition: SyntaxNode, executedLines: ReadonlySet<number> | undefined): SyntaxNode[][] {
  const body = definition.childForFieldName('body');
  const runs: SyntaxNode[][] = [];
  for (const block of statementBlocks(definition)) {
    let run: SyntaxNode[] = [];
    statementsOf(block).forEach((statement, index) => {
      const isDocstring = block.id === body?.id && index === 0 && isStringStatement(statement);
      if (!isDocstring && !PINNED_TYPES.has(statement.type) && ownsLines(source, statement) && ranInTests(executedLines, statement)) {
        run.push(statement);
        return;
      }
      if (run.length >= 2) runs.push(run);
      run = [];
    });
    if (run.length >= 2) runs.push(run);
  }
  return runs;
}

/** Largest window of adjacent statements shuffle_statements reorders. */
const MAX_SHUFFLE_WINDOW = 4;

/** SWE-smith's ctrl_shuffle, narrowed: reorder a window of 2–4 adjacent statements of one block. */
export const shuffleStatements: Strategy = {
  name: 'shuffle_statements',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply({ source, entity, rng, executedLines }) {
    const runs = movableRuns(source, locateEntity(source, entity).definition, executedLines);
    if (runs.length === 0) return null;
    const run = rng.pick(runs);
    const size = 2 + rng.int(Math.min(run.length, MAX_SHUFFLE_WINDOW) - 1);
    const offset = rng.int(run.length - size + 1);
    const window = run.slice(offset, offset + size);
    const { edits } = permuteStatements(source, window, rng);
    const first = window[0];
    const last = window.at(-1);
    const lines = first === undefined || last === undefined ? '' : `${lineOf(first)}-${last.endPosition.row + 1}`;
    return { newSource: applyTextEdits(source, edits), description: `shuffled ${size} statements at lines ${lines}` };
  },
};
