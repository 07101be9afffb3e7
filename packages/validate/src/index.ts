export { validateReference } from './reference.js';
export type { ValidateReferenceOptions } from './reference.js';
export { createValidator } from './validator.js';
export { planRun, locateBodyChange } from './plan.js';
export type { RunPlan, PlanContext } from './plan.js';
export { candidateTimeoutMs, sameVerdict, stablePassing, splitOutcomes, verdictOfSets, verdictOfRun } from './verdict.js';
export { resolveCandidateFiles } from './tree.js';
export type { ChangedFile, ResolvedFiles } from './tree.js';
export type {
  MutatedFile,
  ValidationContext,
  ValidationInput,
  ValidationMode,
  ValidationOutcome,
  Validator,
  ValidatorOptions,
} from './types.js';
