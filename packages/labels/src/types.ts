/** One file as the fix sees it: `before` is the buggy content, `after` the clean one; null = absent. */
export interface FixedFile {
  /** Repo-relative path with forward slashes. */
  path: string;
  before: string | null;
  after: string | null;
}

/** The gold-label shapes are contracts shared with rewards and exports (DESIGN.md, "Gold localization"). */
export type { FileChanges, LocalizationChanges } from '@envgen/core';
