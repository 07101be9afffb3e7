import type { SyntaxNode } from '@envgen/python';
import { FUNCTION_KINDS, bodyRan, collectNodes, locateEntity } from './entity-node.js';
import { applyTextEdits, deleteStatements, indentOf, lineOf, linesSpanning, ownsLines, reindentLines, statementsOf } from './source-text.js';
import type { Strategy } from './types.js';

/** Statements of blocks under `definition` that `keep` accepts, that own their lines and whose code the clean suite ran (a compound statement's body). */
function statementSites(source: string, definition: SyntaxNode, executedLines: ReadonlySet<number> | undefined, keep: (node: SyntaxNode) => boolean): SyntaxNode[] {
  return collectNodes(definition, (node) => node.parent?.type === 'block' && keep(node) && ownsLines(source, node) && bodyRan(executedLines, node));
}

/** A strategy deleting one whole statement that `keep` accepts (a lone statement becomes `pass`). */
function removeStatementStrategy(name: string, what: string, keep: (node: SyntaxNode) => boolean): Strategy {
  return {
    name,
    family: 'procedural',
    appliesTo: FUNCTION_KINDS,
    apply({ source, entity, rng, executedLines }) {
      const sites = statementSites(source, locateEntity(source, entity).definition, executedLines, keep);
      if (sites.length === 0) return null;
      const site = rng.pick(sites);
      const block = site.parent;
      if (block === null) return null;
      return {
        newSource: applyTextEdits(source, deleteStatements(source, block, [site])),
        description: `removed ${what} at line ${lineOf(site)}`,
      };
    },
  };
}

const ASSIGNMENT_TYPES = new Set(['assignment', 'augmented_assignment']);

/** SWE-smith's remove_assign: delete an assignment or augmented assignment statement. */
export const removeAssignment = removeStatementStrategy(
  'remove_assignment',
  'an assignment',
  (node) => node.type === 'expression_statement' && node.namedChildCount === 1 && ASSIGNMENT_TYPES.has(node.namedChildren[0]?.type ?? ''),
);

/** SWE-smith's remove_cond: delete a whole if statement (with its elif/else branches). */
export const removeConditional = removeStatementStrategy('remove_conditional', 'an if statement', (node) => node.type === 'if_statement');

/** SWE-smith's remove_loop: delete a whole for or while loop. */
export const removeLoop = removeStatementStrategy(
  'remove_loop',
  'a loop',
  (node) => node.type === 'for_statement' || node.type === 'while_statement',
);

/**
 * SWE-smith's remove_wrapper: replace a with/try statement by what runs when nothing is
 * raised, dedented into its place: a with's body; a try's body, then its else block, then its
 * finally block (before, a try lost its else and finally too: `FIFOCache.popitem`'s
 * `else: return ...` went, and `clear()` looped forever).
 */
export const removeWrapper: Strategy = {
  name: 'remove_wrapper',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply({ source, entity, rng, executedLines }) {
    // The statements of each block kept, each block starting on its own line; none when one does not.
    const ownLines = (block: SyntaxNode | null | undefined): SyntaxNode[] | null => {
      const statements = block == null ? [] : statementsOf(block);
      return statements[0] !== undefined && indentOf(source, statements[0]) !== null ? statements : null;
    };
    const blocksOf = (node: SyntaxNode): SyntaxNode[][] => {
      if (node.type !== 'with_statement' && node.type !== 'try_statement') return [];
      const blocks = [node.childForFieldName('body'), ...node.namedChildren.map((child) => (child.type === 'else_clause' ? child.childForFieldName('body') : child.type === 'finally_clause' ? child.namedChildren.find((part) => part.type === 'block') : undefined)).filter((block) => block !== undefined)].map(ownLines);
      return blocks.every((block) => block !== null) ? blocks : [];
    };
    const sites = statementSites(source, locateEntity(source, entity).definition, executedLines, (node) => blocksOf(node).length > 0);
    if (sites.length === 0) return null;
    const site = rng.pick(sites);
    const blocks = blocksOf(site);
    const texts = blocks.flatMap((statements) => {
      const first = statements[0];
      const last = statements.at(-1);
      return first === undefined || last === undefined ? [] : [reindentLines(source, linesSpanning(source, first, last), indentOf(source, first) ?? '', indentOf(source, site) ?? '', site)];
    });
    if (texts.length === 0) return null;
    const kind = site.type === 'with_statement' ? 'with' : 'try';
    const tails = site.namedChildren.filter((child) => child.type === 'else_clause' || child.type === 'finally_clause').map((child) => (child.type === 'else_clause' ? 'else' : 'finally'));
    return {
      newSource: applyTextEdits(source, [{ ...linesSpanning(source, site, site), text: texts.join('\n') }]),
      description: `removed the ${kind} wrapper at line ${lineOf(site)}, keeping its body${tails.length > 0 ? ` and ${tails.join(' and ')} block` : ''}`,
    };
  },
};
