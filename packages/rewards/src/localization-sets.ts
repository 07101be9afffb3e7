import type { GoldFileChanges, LocalizationSets, Location } from './types.js';

/**
 * The predicted file, module and entity sets of a localization, CodeScout's way:
 * every location adds its file; class + function adds module `file:Class` and entity
 * `file:Class.func`; class only adds module `file:Class`; function only adds both module
 * and entity `file:func`. Empty names count as absent.
 */
export function predictionSets(locations: readonly Location[]): LocalizationSets {
  const sets: LocalizationSets = { files: new Set(), modules: new Set(), entities: new Set() };
  for (const { file, class_name, function_name } of locations) {
    sets.files.add(file);
    if (class_name) {
      sets.modules.add(`${file}:${class_name}`);
      if (function_name) sets.entities.add(`${file}:${class_name}.${function_name}`);
    } else if (function_name) {
      sets.modules.add(`${file}:${function_name}`);
      sets.entities.add(`${file}:${function_name}`);
    }
  }
  return sets;
}

/**
 * The gold sets of an instance: every file in the gold list, and only the
 * `edited_modules` / `edited_entities` (what the fix adds is not scored).
 */
export function goldSets(gold: readonly GoldFileChanges[]): LocalizationSets {
  const sets: LocalizationSets = { files: new Set(), modules: new Set(), entities: new Set() };
  for (const { file, changes } of gold) {
    sets.files.add(file);
    for (const module of changes.edited_modules) sets.modules.add(module);
    for (const entity of changes.edited_entities) sets.entities.add(entity);
  }
  return sets;
}
