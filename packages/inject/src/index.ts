export { selectSites } from './sites.js';
export type { Site, SiteSelection, SourceFile } from './sites.js';
export { planCandidates } from './plan-candidates.js';
export type { DroppedAttempt, PlanCandidatesOptions, PlannedCandidate } from './plan-candidates.js';
export { combineCandidates } from './combine-candidates.js';
export type { CombinableBug, CombineOptions } from './combine-candidates.js';
