export { applyStrategy, generateCandidates } from './apply-strategy.js';
export type { CandidateDropReason, GenerateCandidatesOptions, MutationCandidate } from './apply-strategy.js';
export { STRATEGIES, selectStrategies } from './registry.js';
export { invertIfElse, shuffleStatements } from './control-flow.js';
export { removeAssignment, removeConditional, removeLoop, removeWrapper } from './remove-statements.js';
export { changeBoolOrCompareChain, changeConstant, changeOperator, swapOperands } from './operations.js';
export { removeClassBase, removeClassMethods, shuffleClassMethods } from './classes.js';
export { removeBlock, removeFunctionBody } from './removal.js';
export type { DropReason, MutationEdit, Strategy, StrategyFamily, StrategyInput, StrategyOutcome } from './types.js';
