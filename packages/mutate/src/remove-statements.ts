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

/** SWE-smith's remove_wrapper: replace a with/try statement by its body, dedented into its place. */
export const removeWrapper: Strategy = {
  name: 'remove_wrapper',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply({ source, entity, rng, executedLines }) {
    // The body statements of each with/try whose body starts on its own line.
    const bodyOf = (node: SyntaxNode): SyntaxNode[] => {
      const body = node.type === 'with_statement' || node.type === 'try_statement' ? node.childForFieldName('body') : null;
      const statements = body === null ? [] : statementsOf(body);
      return statements[0] !== undefined && indentOf(source, statements[0]) !== null ? statements : [];
    };
    const sites = statementSites(source, locateEntity(source, entity).definition, executedLines, (node) => bodyOf(node).length > 0);
    if (sites.length === 0) return null;
    const site = rng.pick(sites);
    const statements = bodyOf(site);
    const first = statements[0];
    const last = statements.at(-1);
    if (first === undefined || last === undefined) return null;
    const body = reindentLines(source, linesSpanning(source, first, last), indentOf(source, first) ?? '', indentOf(source, site) ?? '', site);
    const kind = site.type === 'with_statement' ? 'with' : 'try';
    return {
      newSource: applyTextEdits(source, [{ ...linesSpanning(source, site, site), text: body }]),
      description: `removed the ${kind} wrapper at line ${lineOf(site)}, keeping its body`,
    };
  },
};
