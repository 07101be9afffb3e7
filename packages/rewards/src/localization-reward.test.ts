import { describe, expect, it } from 'vitest';
import { createRng, isEnvgenError } from '@envgen/core';
import type { Rng } from '@envgen/core';
import { f1 } from './f1.js';
import { goldSets } from './localization-sets.js';
import { isSolved, localizationReward } from './localization-reward.js';
import type { GoldFileChanges, Location } from './types.js';

function goldFile(file: string, edited: { entities?: string[]; modules?: string[]; added?: string[] } = {}): GoldFileChanges {
  const qualify = (names: string[] = []) => names.map((name) => `${file}:${name}`);
  return {
    file,
    changes: {
      edited_entities: qualify(edited.entities),
      edited_modules: qualify(edited.modules),
      added_entities: qualify(edited.added),
      added_modules: [],
    },
  };
}

const call = (...locations: Location[]) => ({ locations });

describe('localizationReward', () => {
  const method = [goldFile('pkg/a.py', { entities: ['C.m'], modules: ['C'] })];

  it('scores an exact match 3', () => {
    expect(localizationReward(method, call({ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }))).toEqual({
      reward: 3,
      file: 1,
      module: 1,
      entity: 1,
      valid: true,
    });
  });

  it('scores partial overlaps with fractional F1s', () => {
    const gold = [
      goldFile('a.py', { entities: ['C.m'], modules: ['C'] }),
      goldFile('b.py', { entities: ['f'], modules: ['f'] }),
    ];
    // files {a,c} vs {a,b}: 2·1/(2+2) = 1/2; modules {a:C, c:g} vs {a:C, b:f}: 1/2;
    // entities {a:C.m, c:g} vs {a:C.m, b:f}: 1/2; total 3/2.
    const result = localizationReward(
      gold,
      call({ file: 'a.py', class_name: 'C', function_name: 'm' }, { file: 'c.py', function_name: 'g' }),
    );
    expect(result).toMatchObject({ file: 1 / 2, module: 1 / 2, entity: 1 / 2, valid: true });
    expect(result.reward).toBeCloseTo(1.5, 12);
  });

  it('scores several entities in one file', () => {
    const gold = [goldFile('a.py', { entities: ['C.m', 'C.n', 'f'], modules: ['C', 'f'] })];
    // files 1; modules {a:C, a:g} vs {a:C, a:f}: 2·1/4 = 1/2;
    // entities {a:C.m, a:g} vs {a:C.m, a:C.n, a:f}: 2·1/5 = 2/5; total 1.9.
    const result = localizationReward(
      gold,
      call({ file: 'a.py', class_name: 'C', function_name: 'm' }, { file: 'a.py', function_name: 'g' }),
    );
    expect(result).toMatchObject({ file: 1, module: 1 / 2, entity: 2 / 5 });
    expect(result.reward).toBeCloseTo(1.9, 12);
  });

  it('lowers only the levels that extra files touch', () => {
    // files {a,b,c} vs {a}: 2·1/(3+1) = 1/2; modules and entities exact; total 2.5.
    const result = localizationReward(
      method,
      call({ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 'pkg/b.py' }, { file: 'pkg/c.py' }),
    );
    expect(result).toMatchObject({ reward: 2.5, file: 1 / 2, module: 1, entity: 1 });
  });

  it('does not count duplicates or ./ spellings twice', () => {
    const result = localizationReward(
      method,
      call(
        { file: 'pkg/a.py', class_name: 'C', function_name: 'm' },
        { file: './pkg/a.py', class_name: 'C', function_name: 'm' },
        { file: 'pkg//a.py', function_name: 'C.m' },
      ),
    );
    expect(result.reward).toBe(3);
  });

  it('scores a class-only prediction of a method at file and module level', () => {
    expect(localizationReward(method, call({ file: 'pkg/a.py', class_name: 'C' }))).toMatchObject({ reward: 2, entity: 0 });
  });

  it('scores a function-only prediction as module and entity', () => {
    const gold = [goldFile('b.py', { entities: ['f'], modules: ['f'] })];
    expect(localizationReward(gold, call({ file: 'b.py', function_name: 'f' })).reward).toBe(3);
    // As a method of a class named f it hits the module `b.py:f` but not the entity.
    expect(localizationReward(gold, call({ file: 'b.py', class_name: 'f', function_name: 'g' }))).toMatchObject({
      reward: 2,
      module: 1,
      entity: 0,
    });
  });

  it('scores 0 on levels whose gold set is empty', () => {
    const moduleOnly = [goldFile('a.py', { modules: ['C'] })];
    expect(localizationReward(moduleOnly, call({ file: 'a.py', class_name: 'C' }))).toMatchObject({ reward: 2, entity: 0 });
    expect(localizationReward(moduleOnly, call({ file: 'a.py', class_name: 'C', function_name: 'm' }))).toMatchObject({
      reward: 2,
      entity: 0,
    });
    const fileOnly = [goldFile('a.py', { added: ['new_func'] })];
    expect(localizationReward(fileOnly, call({ file: 'a.py' }))).toMatchObject({ reward: 1, module: 0, entity: 0 });
    expect(localizationReward(fileOnly, call({ file: 'a.py', class_name: 'C', function_name: 'm' })).reward).toBe(1);
    expect(localizationReward([], call({ file: 'a.py' }))).toEqual({ reward: 0, file: 0, module: 0, entity: 0, valid: true });
  });

  it('scores a JSON-string call like the object and uses repoRoot for absolute paths', () => {
    const args = call({ file: 'pkg/a.py', class_name: 'C', function_name: 'm' });
    expect(localizationReward(method, JSON.stringify(args))).toEqual(localizationReward(method, args));
    const absolute = call({ file: '/srv/checkout/pkg/a.py', class_name: 'C', function_name: 'm' });
    expect(localizationReward(method, absolute, { repoRoot: '/srv/checkout' }).reward).toBe(3);
    expect(localizationReward(method, absolute)).toMatchObject({ reward: 0, valid: false });
  });

  it('scores 0 with valid=false and a reason when there is no valid call', () => {
    expect(localizationReward(method, null)).toEqual({
      reward: 0,
      file: 0,
      module: 0,
      entity: 0,
      valid: false,
      reason: 'no localization_finish call',
    });
    expect(localizationReward(method, { locations: [] })).toMatchObject({
      reward: 0,
      valid: false,
      reason: 'locations is empty; name at least one file',
    });
    // One bad entry voids the call, even next to a perfect one.
    const mixed = { locations: [{ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 7 }] };
    expect(localizationReward(method, mixed)).toMatchObject({
      reward: 0,
      valid: false,
      reason: 'locations[1].file is missing or not a string',
    });
  });
});

describe('isSolved', () => {
  const perfect = { reward: 3, file: 1, module: 1, entity: 1, valid: true };
  const partial = { reward: 1 + 1 / 3 + 2 / 3, file: 1, module: 2 / 3, entity: 1 / 3, valid: true };

  it('defaults to entity F1 == 1', () => {
    expect(isSolved(perfect)).toBe(true);
    expect(isSolved(partial)).toBe(false);
    expect(isSolved({ ...perfect, entity: 0.999 })).toBe(false);
  });

  it('compares the chosen level against the threshold', () => {
    expect(isSolved(partial, { by: 'file' })).toBe(true);
    expect(isSolved(partial, { by: 'module' })).toBe(false);
    expect(isSolved(partial, { by: 'module', threshold: 2 / 3 })).toBe(true);
    expect(isSolved(partial, { by: 'entity', threshold: 0.5 })).toBe(false);
    expect(isSolved(partial, { by: 'total', threshold: 2 })).toBe(true);
    expect(isSolved(partial, { by: 'total' })).toBe(false);
    expect(isSolved(perfect, { by: 'total' })).toBe(true);
  });

  it('never counts an invalid localization as solved', () => {
    expect(isSolved({ reward: 0, file: 0, module: 0, entity: 0, valid: false }, { by: 'total', threshold: 0.1 })).toBe(false);
  });

  it('rejects thresholds outside (0, max]', () => {
    for (const [by, threshold] of [['entity', 0], ['entity', 1.5], ['total', 3.5], ['file', Number.NaN]] as const) {
      let caught: unknown;
      try {
        isSolved(perfect, { by, threshold });
      } catch (error) {
        caught = error;
      }
      expect(isEnvgenError(caught, 'internal')).toBe(true);
    }
  });
});

// ---- property-style checks on seeded random gold and predictions ----

const FILES = ['pkg/a.py', 'pkg/b.py', 'pkg/sub/c.py', 'd.py'];
const NAMES = ['C', 'D', 'f', 'g', 'm', 'n'];

/** Gold as the labeler builds it: every touched method also marks its class, every function itself. */
function randomGold(rng: Rng): GoldFileChanges[] {
  return rng
    .shuffle(FILES)
    .slice(0, 1 + rng.int(3))
    .map((file) => {
      const entities = new Set<string>();
      const modules = new Set<string>();
      const added: string[] = [];
      for (let touch = rng.int(4); touch > 0; touch--) {
        const kind = rng.int(5);
        const cls = `K${rng.pick(NAMES)}`;
        const fn = rng.pick(NAMES);
        if (kind === 0) {
          entities.add(`${cls}.${fn}`);
          modules.add(cls);
        } else if (kind === 1) modules.add(cls);
        else if (kind === 2) {
          entities.add(fn);
          modules.add(fn);
        } else if (kind === 3) added.push(`new_${fn}`);
        // kind 4: module-level code, the file only.
      }
      return goldFile(file, { entities: [...entities], modules: [...modules], added });
    });
}

/** The locations that name exactly the gold, one per entity, class-only module and bare file. */
function perfectPrediction(gold: GoldFileChanges[]): Location[] {
  return gold.flatMap(({ file, changes }) => {
    const local = (qualified: string) => qualified.slice(file.length + 1);
    const entities = changes.edited_entities.map(local);
    const locations: Location[] = entities.map((entity) => {
      const dot = entity.indexOf('.');
      if (dot < 0) return { file, function_name: entity };
      return { file, class_name: entity.slice(0, dot), function_name: entity.slice(dot + 1) };
    });
    for (const module of changes.edited_modules.map(local)) {
      const covered = entities.some((entity) => entity === module || entity.startsWith(`${module}.`));
      if (!covered) locations.push({ file, class_name: module });
    }
    if (locations.length === 0) locations.push({ file });
    return locations;
  });
}

function randomLocation(rng: Rng): Location {
  const location: Location = { file: rng.pick([...FILES, 'other.py']) };
  if (rng.int(2) === 0) location.class_name = `K${rng.pick(NAMES)}`;
  if (rng.int(2) === 0) location.function_name = rng.pick(NAMES);
  return location;
}

describe('localization reward properties (seeded)', () => {
  const rng = createRng('rewards-properties');
  const cases = Array.from({ length: 400 }, () => {
    const gold = randomGold(rng);
    const prediction = [
      ...perfectPrediction(gold).filter(() => rng.int(2) === 0),
      ...Array.from({ length: rng.int(4) }, () => randomLocation(rng)),
    ];
    return { gold, prediction };
  });

  it('keeps every level in [0, 1] and the reward, their sum, in [0, 3]', () => {
    for (const { gold, prediction } of cases) {
      const result = localizationReward(gold, call(...prediction));
      if (prediction.length === 0) {
        expect(result.valid).toBe(false);
        continue;
      }
      for (const level of [result.file, result.module, result.entity]) {
        expect(level).toBeGreaterThanOrEqual(0);
        expect(level).toBeLessThanOrEqual(1);
      }
      expect(result.reward).toBe(result.file + result.module + result.entity);
      expect(result.reward).toBeLessThanOrEqual(3);
    }
  });

  it('scores a perfect prediction as the number of non-empty gold levels, however it is spelled', () => {
    const seenLevels = new Set<number>();
    for (const { gold } of cases) {
      const sets = goldSets(gold);
      const levels = [sets.files, sets.modules, sets.entities].filter((set) => set.size > 0).length;
      seenLevels.add(levels);
      const perfect = perfectPrediction(gold);
      expect(localizationReward(gold, call(...perfect)).reward).toBe(levels);
      const respelled = rng.shuffle([...perfect, ...perfect.map((location) => ({ ...location, file: `./${location.file}` }))]);
      expect(localizationReward(gold, JSON.stringify(call(...respelled))).reward).toBe(levels);
    }
    // The generator reaches file-only, file+module and all-three gold.
    expect([...seenLevels].sort()).toEqual([1, 2, 3]);
  });

  it('does not depend on the order of the locations', () => {
    for (const { gold, prediction } of cases) {
      if (prediction.length === 0) continue;
      expect(localizationReward(gold, call(...rng.shuffle(prediction)))).toEqual(localizationReward(gold, call(...prediction)));
    }
  });

  it('has a symmetric F1 on non-empty sets', () => {
    for (let i = 0; i < 400; i++) {
      const a = new Set(NAMES.filter(() => rng.int(2) === 0));
      const b = new Set(NAMES.filter(() => rng.int(2) === 0));
      if (a.size === 0 || b.size === 0) continue;
      expect(f1(a, b)).toBe(f1(b, a));
    }
  });
});
