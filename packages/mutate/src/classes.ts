import type { SyntaxNode } from '@envgen/python';
import { CLASS_KINDS, collectNodes, locateEntity, ranInTests } from './entity-node.js';
import { applyTextEdits, deleteStatements, lineOf, lineSlot, ownsLines, statementsOf } from './source-text.js';
import type { TextEdit } from './source-text.js';
import type { Strategy } from './types.js';

// Arguments of a class header that are not bases.
const NON_BASE_TYPES = new Set(['keyword_argument', 'dictionary_splat', 'list_splat', 'comment']);

/** SWE-smith's class_rm_base: remove one base class from a class header (`object` is skipped: removing it changes nothing). */
export const removeClassBase: Strategy = {
  name: 'remove_class_base',
  family: 'procedural',
  appliesTo: CLASS_KINDS,
  apply({ source, entity, rng }) {
    const header = locateEntity(source, entity).definition.childForFieldName('superclasses');
    if (header === null) return null;
    const args = header.namedChildren.filter((child) => child.type !== 'comment');
    const bases = args.filter((arg) => !NON_BASE_TYPES.has(arg.type) && arg.text !== 'object');
    if (bases.length === 0) return null;
    const base = rng.pick(bases);
    const kept = args.filter((arg) => arg.id !== base.id).map((arg) => arg.text);
    return {
      newSource: applyTextEdits(source, [
        { start: header.startIndex, end: header.endIndex, text: kept.length === 0 ? '' : `(${kept.join(', ')})` },
      ]),
      description: `removed base \`${base.text}\` from class ${entity.qualifiedName} at line ${lineOf(header)}`,
    };
  },
};

/** The method definitions (decorated ones whole) directly in a class body that own their lines. */
function methodsOf(source: string, body: SyntaxNode): SyntaxNode[] {
  return statementsOf(body).filter((statement) => {
    const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    return definition?.type === 'function_definition' && ownsLines(source, statement);
  });
}

/** The name of a method definition statement (decorated or not). */
function methodName(statement: SyntaxNode): string {
  const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
  return definition?.childForFieldName('name')?.text ?? '';
}

/** True when `node` is a call `self.name(...)` or `cls.name(...)`. */
function isOwnCall(node: SyntaxNode, name: string): boolean {
  const callee = node.type === 'call' ? node.childForFieldName('function') : null;
  const receiver = callee?.type === 'attribute' ? callee.childForFieldName('object')?.text : undefined;
  return (receiver === 'self' || receiver === 'cls') && callee?.childForFieldName('attribute')?.text === name;
}

/**
 * Edits removing the calls to a removed method: a call that is a whole statement is deleted
 * (a block left empty gets `pass`), a call inside an expression becomes `None`.
 */
function removeCalls(source: string, calls: readonly SyntaxNode[], removed: TextEdit[]): { edits: TextEdit[]; count: number } {
  const deletions = new Map<number, { block: SyntaxNode; statements: SyntaxNode[] }>();
  const edits: TextEdit[] = [];
  let coveredUntil = -1;
  let count = 0;
  for (const call of calls) {
    const target = call.parent?.type === 'await' ? call.parent : call;
    // Calls nested in an already handled call or statement go with it.
    if (target.startIndex < coveredUntil) continue;
    coveredUntil = target.endIndex;
    count += 1;
    const statement = target.parent;
    const block = statement?.parent;
    if (statement?.type === 'expression_statement' && statement.namedChildCount === 1 && block?.type === 'block' && ownsLines(source, statement)) {
      const entry = deletions.get(block.id) ?? { block, statements: [] };
      entry.statements.push(statement);
      deletions.set(block.id, entry);
    } else {
      edits.push({ start: target.startIndex, end: target.endIndex, text: 'None' });
    }
  }
  for (const { block, statements } of deletions.values()) edits.push(...deleteStatements(source, block, statements));
  return { edits: [...removed, ...edits], count };
}

/**
 * Whether the class body itself names `method` outside every method's body: `value =
 * property(value__get, value__set)`, `__iter__ = keys`, a later `@value.setter`, a default
 * argument. Python evaluates those when it makes the class, so without the method the class
 * statement raises NameError and the module cannot be imported.
 */
function namedByClassBody(body: SyntaxNode, method: SyntaxNode): boolean {
  const name = methodName(method);
  const inFunctionBody = (node: SyntaxNode): boolean => {
    for (let current = node.parent; current !== null && current.id !== body.id; current = current.parent) {
      if (current.type === 'lambda' || (current.type === 'block' && current.parent?.type === 'function_definition')) return true;
    }
    return false;
  };
  const isDefinitionName = (node: SyntaxNode): boolean => node.parent?.type === 'function_definition' && node.parent.childForFieldName('name')?.id === node.id;
  // What the method's own statement names (its decorators) goes with it.
  const outside = (node: SyntaxNode): boolean => node.endIndex <= method.startIndex || node.startIndex >= method.endIndex;
  return collectNodes(body, (node) => node.type === 'identifier' && node.text === name && outside(node) && !isDefinitionName(node) && !inFunctionBody(node)).length > 0;
}

/**
 * SWE-smith's class_rm_funcs: remove one method the clean suite ran and every `self.method(...)`
 * call to it in the class. A method the class body names outside the methods (see
 * {@link namedByClassBody}) is left: without it the module's import fails and every test that
 * imports it with it, which is no bug to find (webtest's `value = property(value__get, ...)`).
 */
export const removeClassMethods: Strategy = {
  name: 'remove_class_methods',
  family: 'procedural',
  appliesTo: CLASS_KINDS,
  apply({ source, entity, rng, executedLines }) {
    const { definition, body } = locateEntity(source, entity);
    const methods = methodsOf(source, body).filter((method) => ranInTests(executedLines, method) && !namedByClassBody(body, method));
    if (methods.length === 0) return null;
    const method = rng.pick(methods);
    const name = methodName(method);
    const calls = collectNodes(
      definition,
      (node) => isOwnCall(node, name) && (node.endIndex <= method.startIndex || node.startIndex >= method.endIndex),
    );
    const { edits, count } = removeCalls(source, calls, deleteStatements(source, body, [method]));
    return {
      newSource: applyTextEdits(source, edits),
      description: `removed method ${entity.qualifiedName}.${name} at line ${lineOf(method)} and ${count} call${count === 1 ? '' : 's'} to it`,
    };
  },
};

/** True when a decorator of the method statement is an attribute of `name` (`@x.setter`, `@f.register`): a chain on the name's earlier definition. */
function decoratesOwnName(statement: SyntaxNode, name: string): boolean {
  if (statement.type !== 'decorated_definition') return false;
  return statement.namedChildren.some((child) => child.type === 'decorator' && new RegExp(`^@\\s*${name}\\s*\\.`).test(child.text));
}

/**
 * SWE-smith's class_shuffle_funcs, where the order of methods matters: a name the class body
 * defines more than once (`@typing.overload` stubs before the implementation, a method
 * redefined further down) is bound by its last definition, and the reorder moves an earlier
 * one into that place. Reordering methods whose names are all distinct changes nothing a test
 * can see, or stops the import where a class statement or decorator names a moved method
 * (SWE-smith's form: 0 of 23 kept in a sweep of 8 projects); a property's `@x.setter` chain
 * is left alone for the same reason, as is a name whose binding definition no test ran.
 */
export const shuffleClassMethods: Strategy = {
  name: 'shuffle_class_methods',
  family: 'procedural',
  appliesTo: CLASS_KINDS,
  apply({ source, entity, rng, executedLines }) {
    const byName = new Map<string, SyntaxNode[]>();
    for (const method of methodsOf(source, locateEntity(source, entity).body)) {
      const name = methodName(method);
      byName.set(name, [...(byName.get(name) ?? []), method]);
    }
    // Only where the definition that binds the name ran in a test: otherwise no test sees the swap.
    const redefined = [...byName.entries()].filter(
      ([name, methods]) => methods.length > 1 && !methods.some((method) => decoratesOwnName(method, name)) && ranInTests(executedLines, methods.at(-1) as SyntaxNode),
    );
    if (redefined.length === 0) return null;
    const [name, methods] = rng.pick(redefined);
    const binding = methods.at(-1) as SyntaxNode;
    const earlier = methods[rng.int(methods.length - 1)] as SyntaxNode;
    const [from, to] = [lineSlot(source, earlier), lineSlot(source, binding)];
    return {
      newSource: applyTextEdits(source, [
        { ...from, text: to.text },
        { ...to, text: from.text },
      ]),
      description: `swapped definitions of ${entity.qualifiedName}.${name} at lines ${lineOf(earlier)} and ${lineOf(binding)}: the one from line ${lineOf(earlier)} now binds the name`,
    };
  },
};
