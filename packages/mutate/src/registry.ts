import { EnvgenError, ERROR_CODES } from '@envgen/core';
import { changeOperator, changeBoolOrCompareChain, changeConstant, swapOperands } from './operations.js';
import { invertIfElse, shuffleStatements } from './control-flow.js';
import { removeClassBase, removeClassMethods, shuffleClassMethods } from './classes.js';
import { removeAssignment, removeConditional, removeLoop, removeWrapper } from './remove-statements.js';
import { removeBlock, removeFunctionBody } from './removal.js';
import type { Strategy } from './types.js';

const ALL: readonly Strategy[] = [
  invertIfElse,
  shuffleStatements,
  removeAssignment,
  removeConditional,
  removeLoop,
  removeWrapper,
  changeBoolOrCompareChain,
  changeConstant,
  changeOperator,
  swapOperands,
  removeClassBase,
  removeClassMethods,
  shuffleClassMethods,
  removeFunctionBody,
  removeBlock,
];

/** Every built-in strategy by name: the SWE-smith-style procedural operators, then removal. */
export const STRATEGIES: Readonly<Record<string, Strategy>> = Object.freeze(
  Object.fromEntries(ALL.map((strategy) => [strategy.name, strategy])),
);

/**
 * The strategies with the given names, in that order (all of them when `names` is omitted).
 * Throws a usage error naming the valid strategies when a name is unknown.
 */
export function selectStrategies(names?: readonly string[]): Strategy[] {
  if (names === undefined) return [...ALL];
  const unknown = names.filter((name) => !Object.hasOwn(STRATEGIES, name));
  if (unknown.length > 0) {
    throw new EnvgenError(
      ERROR_CODES.usage,
      `unknown mutation strateg${unknown.length === 1 ? 'y' : 'ies'} ${unknown.map((name) => `"${name}"`).join(', ')}; valid strategies are: ${ALL.map((strategy) => strategy.name).join(', ')}`,
    );
  }
  return names.map((name) => STRATEGIES[name] as Strategy);
}
