export { computeGoldLabels } from './gold-labels.js';
export { diffLineHunks } from './line-diff.js';
export type { LineHunk } from './line-diff.js';
export type { FileChanges, FixedFile, LocalizationChanges } from './types.js';
