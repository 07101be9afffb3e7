export { validateReference } from './reference.js';
export type { ValidateReferenceOptions } from './reference.js';
export { createValidator } from './validator.js';
export { planRun, locateBodyChange } from './plan.js';
export type { RunPlan, PlanContext } from './plan.js';
export { candidateLimits, candidateProfile, flippedIds, judgeResults, sameVerdict, stablePassing, splitOutcomes, verdictOfRun, withFlaky } from './verdict.js';
export type { CandidateLimits } from './verdict.js';
export { resolveCandidateFiles } from './tree.js';
export type { ChangedFile, ResolvedFiles } from './tree.js';
export type {
  MutatedFile,
  SelectedRun,
  ValidationContext,
  ValidationInput,
  ValidationMode,
  ValidationOutcome,
  PhaseSeconds,
  Validator,
  ValidatorOptions,
} from './types.js';
