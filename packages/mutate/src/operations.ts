import type { SyntaxNode } from '@envgen/python';
import { FUNCTION_KINDS, collectNodes, locateEntity, ranInTests, wrapExpression } from './entity-node.js';
import { applyTextEdits, lineOf } from './source-text.js';
import type { Strategy } from './types.js';

/** Operators that can replace each other: a bug, yet still type-plausible code. */
const OPERATOR_FAMILIES: readonly (readonly string[])[] = [
  ['+', '-'],
  ['*', '/', '//', '%'],
  ['<<', '>>'],
  ['&', '|', '^'],
  ['<', '<=', '>', '>='],
  ['==', '!='],
  ['is', 'is not'],
  ['in', 'not in'],
  ['and', 'or'],
  ['+=', '-='],
  ['*=', '/=', '//=', '%='],
  ['<<=', '>>='],
  ['&=', '|=', '^='],
];

/** The family of an operator's text (whitespace inside `not in` normalized), or undefined. */
function familyOf(operator: string): readonly string[] | undefined {
  const normalized = operator.replace(/\s+/g, ' ');
  return OPERATOR_FAMILIES.find((family) => family.includes(normalized));
}

/** The operator tokens of an expression or augmented assignment (comparisons may have several). */
function operatorTokens(node: SyntaxNode): SyntaxNode[] {
  if (node.type === 'comparison_operator') return node.children.filter((child) => !child.isNamed);
  if (node.type === 'binary_operator' || node.type === 'boolean_operator' || node.type === 'augmented_assignment') {
    const token = node.childForFieldName('operator');
    return token === null ? [] : [token];
  }
  return [];
}

/** Nodes under the entity's definition (decorators excluded) that `keep` accepts, in code the clean suite ran. */
function sitesIn(input: Parameters<Strategy['apply']>[0], keep: (node: SyntaxNode) => boolean): SyntaxNode[] {
  return collectNodes(locateEntity(input.source, input.entity).definition, (node) => keep(node) && ranInTests(input.executedLines, node));
}

/** SWE-smith's op_change: replace an operator by another of its family (`<` → `>=`, `and` → `or`). */
export const changeOperator: Strategy = {
  name: 'change_operator',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply(input) {
    const tokens = sitesIn(input, (node) => operatorTokens(node).length > 0)
      .flatMap(operatorTokens)
      .filter((token) => familyOf(token.text) !== undefined);
    if (tokens.length === 0) return null;
    const token = input.rng.pick(tokens);
    const before = token.text.replace(/\s+/g, ' ');
    const after = input.rng.pick((familyOf(before) ?? []).filter((operator) => operator !== before));
    return {
      newSource: applyTextEdits(input.source, [{ start: token.startIndex, end: token.endIndex, text: after }]),
      description: `changed \`${before}\` to \`${after}\` at line ${lineOf(token)}`,
    };
  },
};

/** The two operands of a binary, boolean or single comparison expression, or null (also when they read the same). */
/** Comparisons whose operands commute: swapping them changes nothing (`x is None` → `None is x`). */
const SYMMETRIC_COMPARISONS: ReadonlySet<string> = new Set(['==', '!=', 'is', 'is not']);

/**
 * The two operands to swap at `node`, or null where the swap cannot change what runs: both
 * read the same, a symmetric comparison, or a type annotation (`str | None`).
 */
function operandPair(node: SyntaxNode): [SyntaxNode, SyntaxNode] | null {
  const pair = anyOperandPair(node);
  if (pair === null || pair[0].text === pair[1].text) return null;
  if (node.type === 'comparison_operator') {
    const operator = node.text.slice(pair[0].endIndex - node.startIndex, pair[1].startIndex - node.startIndex).trim().split(/\s+/).join(' ');
    if (SYMMETRIC_COMPARISONS.has(operator)) return null;
  }
  for (let up = node.parent; up !== null; up = up.parent) {
    if (up.type === 'type') return null;
  }
  return pair;
}

function anyOperandPair(node: SyntaxNode): [SyntaxNode, SyntaxNode] | null {
  if (node.type === 'binary_operator' || node.type === 'boolean_operator') {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    return left === null || right === null ? null : [left, right];
  }
  if (node.type === 'comparison_operator') {
    const operands = node.namedChildren.filter((child) => child.type !== 'comment');
    return operands.length === 2 && operands[0] !== undefined && operands[1] !== undefined ? [operands[0], operands[1]] : null;
  }
  return null;
}

/** SWE-smith's op_swap: swap the operands of a binary, boolean or comparison expression. */
export const swapOperands: Strategy = {
  name: 'swap_operands',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply(input) {
    const sites = sitesIn(input, (node) => operandPair(node) !== null);
    if (sites.length === 0) return null;
    const site = input.rng.pick(sites);
    const [left, right] = operandPair(site) ?? [site, site];
    return {
      newSource: applyTextEdits(input.source, [
        { start: left.startIndex, end: left.endIndex, text: wrapExpression(right) },
        { start: right.startIndex, end: right.endIndex, text: wrapExpression(left) },
      ]),
      description: `swapped the operands of \`${site.text.split('\n')[0] ?? ''}\` at line ${lineOf(site)}`,
    };
  },
};

const ARITHMETIC_CHAIN_FAMILIES: readonly (readonly string[])[] = [
  ['+', '-'],
  ['*', '/', '//', '%', '@'],
];

/** The operator text joining a chain at `node`, or null when `node` does not chain. */
function chainOperator(node: SyntaxNode): string | null {
  if (node.type !== 'boolean_operator' && node.type !== 'binary_operator') return null;
  return node.childForFieldName('operator')?.text ?? null;
}

/** True when `a` and `b` join the same chain: the same boolean operator, or one arithmetic family. */
function sameChain(node: SyntaxNode, a: string, b: string): boolean {
  if (node.type === 'boolean_operator') return a === b;
  return ARITHMETIC_CHAIN_FAMILIES.some((family) => family.includes(a) && family.includes(b));
}

/**
 * The operands of a maximal chain rooted at `node` (`a and b and c`, `a < b < c`,
 * `a + b - c`), or null when `node` is no chain or sits inside a larger one.
 */
function chainOperands(node: SyntaxNode): SyntaxNode[] | null {
  if (node.type === 'comparison_operator') {
    const operands = node.namedChildren.filter((child) => child.type !== 'comment');
    return operands.length >= 3 ? operands : null;
  }
  const operator = chainOperator(node);
  if (operator === null) return null;
  const parent = node.parent;
  const parentOperator = parent === null ? null : chainOperator(parent);
  if (parent !== null && parentOperator !== null && parent.type === node.type && sameChain(node, operator, parentOperator)) return null;
  const flatten = (part: SyntaxNode): SyntaxNode[] => {
    const partOperator = part.type === node.type ? chainOperator(part) : null;
    if (partOperator === null || !sameChain(node, operator, partOperator)) return [part];
    const left = part.childForFieldName('left');
    const right = part.childForFieldName('right');
    return left === null || right === null ? [part] : [...flatten(left), ...flatten(right)];
  };
  const operands = flatten(node);
  // `a and b` is already a chain worth breaking; arithmetic needs three operands to stay a chain.
  return operands.length >= (node.type === 'boolean_operator' ? 2 : 3) ? operands : null;
}

/** SWE-smith's op_break_chains: drop one operand (and its operator) from a boolean, comparison or arithmetic chain. */
export const changeBoolOrCompareChain: Strategy = {
  name: 'change_bool_or_compare_chain',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply(input) {
    const sites = sitesIn(input, (node) => chainOperands(node) !== null);
    if (sites.length === 0) return null;
    const site = input.rng.pick(sites);
    const operands = chainOperands(site) ?? [];
    const k = input.rng.int(operands.length);
    const dropped = operands[k];
    const neighbour = k === 0 ? operands[1] : operands[k - 1];
    if (dropped === undefined || neighbour === undefined) return null;
    const range = k === 0 ? { start: dropped.startIndex, end: neighbour.startIndex } : { start: neighbour.endIndex, end: dropped.endIndex };
    return {
      newSource: applyTextEdits(input.source, [{ ...range, text: '' }]),
      description: `dropped \`${dropped.text.split('\n')[0] ?? ''}\` from the chain \`${site.text.split('\n')[0] ?? ''}\` at line ${lineOf(site)}`,
    };
  },
};

const DECIMAL_INTEGER = /^(0|[1-9][0-9_]*)$/;
const PLAIN_FLOAT = /^([0-9]+\.[0-9]*|\.[0-9]+)$/;

/** True when `node` lies in a while loop's condition, where flipping a bool may never terminate. */
function inWhileCondition(node: SyntaxNode): boolean {
  for (let at = node, parent = node.parent; parent !== null; at = parent, parent = parent.parent) {
    if (parent.type === 'while_statement' && parent.childForFieldName('condition')?.id === at.id) return true;
  }
  return false;
}

/** Expressions a number of a version check sits in, between it and the comparison (`(3, 7)`, `sys.version_info[0]`, `-1`). */
const VERSION_OPERAND_PARTS: ReadonlySet<string> = new Set(['tuple', 'parenthesized_expression', 'subscript', 'slice', 'unary_operator', 'attribute']);

/**
 * Whether the number is part of a check of the interpreter's version (`sys.version_info >= (3,
 * 7)`, `version_info[0] == 2`): the tests run on one interpreter, so moving it by one almost
 * never changes which branch runs (nest_asyncio's `(3, 6, 0)` → `(2, 6, 0)`), and where it does
 * the bug is one of the environment, not of the code's logic.
 */
function inVersionCheck(node: SyntaxNode): boolean {
  let at = node.parent;
  while (at !== null && VERSION_OPERAND_PARTS.has(at.type)) at = at.parent;
  return at?.type === 'comparison_operator' && /\bversion_info\b/.test(at.text);
}

/** The constant moved by one (never below zero, so no sign has to be parsed), or a bool flipped. */
function changeConstantText(node: SyntaxNode, step: 1 | -1): string {
  const text = node.text;
  if (node.type === 'true') return 'False';
  if (node.type === 'false') return 'True';
  if (node.type === 'integer') {
    const value = BigInt(text.replace(/_/g, ''));
    return String(value === 0n ? 1n : value + BigInt(step));
  }
  const value = Number(text);
  const decimals = text.length - text.indexOf('.') - 1;
  const changed = (value < 1 ? value + 1 : value + step).toFixed(decimals);
  return decimals === 0 ? `${changed}.` : changed;
}

/** SWE-smith's op_change_const: an int or float literal ±1 (not of a version check), or a bool flipped (not in while conditions). */
export const changeConstant: Strategy = {
  name: 'change_constant',
  family: 'procedural',
  appliesTo: FUNCTION_KINDS,
  apply(input) {
    const sites = sitesIn(
      input,
      (node) =>
        (node.type === 'integer' && DECIMAL_INTEGER.test(node.text) && !inVersionCheck(node)) ||
        (node.type === 'float' && PLAIN_FLOAT.test(node.text)) ||
        ((node.type === 'true' || node.type === 'false') && !inWhileCondition(node)),
    );
    if (sites.length === 0) return null;
    const site = input.rng.pick(sites);
    const text = changeConstantText(site, input.rng.next() < 0.5 ? -1 : 1);
    return {
      newSource: applyTextEdits(input.source, [{ start: site.startIndex, end: site.endIndex, text }]),
      description: `changed the constant \`${site.text}\` to \`${text}\` at line ${lineOf(site)}`,
    };
  },
};
