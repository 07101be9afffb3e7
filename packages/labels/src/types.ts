/** One file as the fix sees it: `before` is the buggy content, `after` the clean one; null = absent. */
export interface FixedFile {
  /** Repo-relative path with forward slashes. */
  path: string;
  before: string | null;
  after: string | null;
}

/** What the fix edits and adds in one file (DESIGN.md, "Gold localization"). */
export interface LocalizationChanges {
  /** `path:Class.method` / `path:func` of entities that exist before the fix and that it changes or deletes. */
  edited_entities: string[];
  /** `path:Class` / `path:func` of modules that exist before the fix and that it changes or deletes. */
  edited_modules: string[];
  /** Entities the fix creates. */
  added_entities: string[];
  /** Modules (classes, top-level functions) the fix creates. */
  added_modules: string[];
}

/** The gold localization of one file: `{file, changes}`, every list sorted and deduplicated. */
export interface FileChanges {
  file: string;
  changes: LocalizationChanges;
}
