import { recentCache } from '@envgen/core';
import { extractEntities, findEnclosingEntity } from '@envgen/python';
import type { Entity } from '@envgen/python';
import { diffLineHunks } from './line-diff.js';
import type { FileChanges, FixedFile } from './types.js';

/** Qualified names of the entity and module that own a line; null where the line is outside them. */
interface Owner {
  entity: string | null;
  module: string | null;
}

const PYTHON_FILE = /\.pyi?$/;

/**
 * The owner of a line by DESIGN's rules: a method → `Class.method` in module `Class`; a
 * class body outside methods (decorators of methods included) → module `Class`; a top-level
 * function (nested functions included) → entity and module `func`; else module level.
 */
function toOwner(entity: Entity | null): Owner {
  if (entity === null) return { entity: null, module: null };
  if (entity.kind === 'class') return { entity: null, module: entity.qualifiedName };
  return { entity: entity.qualifiedName, module: entity.className ?? entity.qualifiedName };
}

function ownerOfLine(entities: readonly Entity[], line: number): Owner {
  return toOwner(findEnclosingEntity(entities, line, { includeDecorators: false }));
}

/**
 * The owner of the gap after old line `anchor`: the innermost entity whose span holds both
 * neighbours, so an insertion between two lines of a function edits that function.
 */
function ownerOfGap(entities: readonly Entity[], anchor: number): Owner {
  const holdingNext = entities.filter((entity) => entity.defLine <= anchor + 1 && anchor + 1 <= entity.endLine);
  return ownerOfLine(holdingNext, anchor);
}

function moduleNames(entities: readonly Entity[]): Set<string> {
  return new Set(entities.filter((entity) => entity.kind !== 'method').map((entity) => entity.qualifiedName));
}

function sorted(names: Set<string>, path: string): string[] {
  return [...names].sort().map((name) => `${path}:${name}`);
}

/**
 * The entities of the last 8 Python file texts labelled: the fixes of one repo's tasks share
 * their clean files (each fix's after), so a run of tasks parses each clean file once, not
 * once per task.
 */
const keptEntities = recentCache<string, readonly Entity[]>(8);

function entitiesOf(source: string, path: string): readonly Entity[] {
  return keptEntities.get(`${path}\0${source}`, () => extractEntities(source, path).entities);
}

function labelFile({ path, before, after }: FixedFile): FileChanges {
  const edited = { entities: new Set<string>(), modules: new Set<string>() };
  const added = { entities: new Set<string>(), modules: new Set<string>() };
  if (PYTHON_FILE.test(path)) {
    const oldEntities = before === null ? [] : extractEntities(before, path).entities;
    const newEntities = after === null ? [] : entitiesOf(after, path);
    const oldEntityNames = new Set(oldEntities.map((entity) => entity.qualifiedName));
    const oldModuleNames = moduleNames(oldEntities);
    const markEdited = (owner: Owner): void => {
      if (owner.entity !== null) edited.entities.add(owner.entity);
      if (owner.module !== null) edited.modules.add(owner.module);
    };
    for (const hunk of diffLineHunks(before ?? '', after ?? '')) {
      for (const line of hunk.deleted) markEdited(ownerOfLine(oldEntities, line));
      if (hunk.deleted.length === 0) markEdited(ownerOfGap(oldEntities, hunk.oldAnchor));
      for (const line of hunk.added) {
        const owner = ownerOfLine(newEntities, line);
        if (owner.entity !== null) (oldEntityNames.has(owner.entity) ? edited : added).entities.add(owner.entity);
        if (owner.module !== null) (oldModuleNames.has(owner.module) ? edited : added).modules.add(owner.module);
      }
    }
  }
  return {
    file: path,
    changes: {
      edited_entities: sorted(edited.entities, path),
      edited_modules: sorted(edited.modules, path),
      added_entities: sorted(added.entities, path),
      added_modules: sorted(added.modules, path),
    },
  };
}

/**
 * Gold localization labels of a fix (DESIGN.md, "Gold localization"; CodeScout's rules).
 * `files` hold each changed file's content before the fix (the buggy file) and after it
 * (the clean file), null where the file is absent. Deleted lines are mapped to entities in
 * the old file, added lines in the new one; an insertion that deletes nothing also edits the
 * entity around its insertion point. Every changed file appears, sorted by path, with empty
 * lists when only module-level code changed; non-Python files never name entities. Files
 * whose content is unchanged are left out.
 */
export function computeGoldLabels(files: readonly FixedFile[]): FileChanges[] {
  return files
    .filter((file) => file.before !== file.after)
    .map(labelFile)
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
