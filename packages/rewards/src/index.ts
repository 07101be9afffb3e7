export { f1 } from './f1.js';
export { normalizeLocations } from './normalize-locations.js';
export type { NormalizeLocationsOptions, NormalizeLocationsResult } from './normalize-locations.js';
export { goldSets, predictionSets } from './localization-sets.js';
export { isSolved, localizationReward } from './localization-reward.js';
export type { IsSolvedOptions, SolveLevel } from './localization-reward.js';
export { DEFAULT_INJECTOR_ALPHA, injectorReward, repairReward } from './injector-reward.js';
export type { InjectorOutcome, InjectorRewardOptions, RepairOutcome } from './injector-reward.js';
export type { GoldFileChanges, LocalizationReward, LocalizationSets, Location } from './types.js';
