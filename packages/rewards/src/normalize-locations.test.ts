import { describe, expect, it } from 'vitest';
import { isEnvgenError } from '@envgen/core';
import { normalizeLocations } from './normalize-locations.js';
import type { NormalizeLocationsResult } from './normalize-locations.js';

function locationsOf(result: NormalizeLocationsResult) {
  if (!result.ok) throw new Error(`expected a valid call, got: ${result.reason}`);
  return result.locations;
}

function reasonOf(result: NormalizeLocationsResult): string {
  if (result.ok) throw new Error('expected an invalid call');
  return result.reason;
}

describe('normalizeLocations', () => {
  it('reads an arguments object and fills absent names with null', () => {
    const result = normalizeLocations({
      locations: [{ file: 'pkg/a.py', class_name: 'C', function_name: 'm' }, { file: 'pkg/b.py' }],
    });
    expect(locationsOf(result)).toEqual([
      { file: 'pkg/a.py', class_name: 'C', function_name: 'm' },
      { file: 'pkg/b.py', class_name: null, function_name: null },
    ]);
  });

  it('reads arguments sent as a JSON string, and a JSON-string locations', () => {
    const inner = JSON.stringify([{ file: 'a.py', function_name: 'f' }]);
    expect(locationsOf(normalizeLocations(JSON.stringify({ locations: [{ file: 'a.py', function_name: 'f' }] })))).toEqual([
      { file: 'a.py', class_name: null, function_name: 'f' },
    ]);
    expect(locationsOf(normalizeLocations({ locations: inner }))).toEqual([{ file: 'a.py', class_name: null, function_name: 'f' }]);
  });

  it('normalizes paths to repo-relative form', () => {
    const files = locationsOf(
      normalizeLocations({
        locations: [
          { file: './a.py' },
          { file: 'pkg//b.py' },
          { file: ' pkg/./c.py ' },
          { file: 'pkg/sub/../d.py' },
          { file: 'pkg/e.py/' },
        ],
      }),
    ).map((location) => location.file);
    expect(files).toEqual(['a.py', 'pkg/b.py', 'pkg/c.py', 'pkg/d.py', 'pkg/e.py']);
  });

  it('makes absolute paths inside repoRoot relative and rejects the rest', () => {
    const result = normalizeLocations({ locations: [{ file: '/work/repo//pkg/a.py' }] }, { repoRoot: '/work/repo/' });
    expect(locationsOf(result)).toEqual([{ file: 'pkg/a.py', class_name: null, function_name: null }]);
    expect(reasonOf(normalizeLocations({ locations: [{ file: '/work/repo/a.py' }] }))).toMatch(
      /locations\[0\]\.file "\/work\/repo\/a\.py" is absolute/,
    );
    expect(reasonOf(normalizeLocations({ locations: [{ file: '/work/other/a.py' }] }, { repoRoot: '/work/repo' }))).toMatch(
      /not inside the repo/,
    );
    expect(reasonOf(normalizeLocations({ locations: [{ file: '/work/repo/../x.py' }] }, { repoRoot: '/work/repo' }))).toMatch(
      /not inside the repo/,
    );
    expect(reasonOf(normalizeLocations({ locations: [{ file: '/work/repo' }] }, { repoRoot: '/work/repo' }))).toMatch(
      /not inside the repo/,
    );
  });

  it('throws when repoRoot itself is relative', () => {
    let caught: unknown;
    try {
      normalizeLocations({ locations: [{ file: 'a.py' }] }, { repoRoot: 'repo' });
    } catch (error) {
      caught = error;
    }
    expect(isEnvgenError(caught, 'internal')).toBe(true);
  });

  it('rejects the whole call when a path leaves the repo or names no file', () => {
    const ok = { file: 'a.py' };
    expect(reasonOf(normalizeLocations({ locations: [ok, { file: '../a.py' }] }))).toMatch(
      /locations\[1\]\.file "\.\.\/a\.py" leaves the repo/,
    );
    expect(reasonOf(normalizeLocations({ locations: [{ file: 'pkg/../../a.py' }] }))).toMatch(/leaves the repo/);
    expect(reasonOf(normalizeLocations({ locations: [{ file: '' }] }))).toMatch(/names no file/);
    expect(reasonOf(normalizeLocations({ locations: [{ file: './' }] }))).toMatch(/names no file/);
    expect(reasonOf(normalizeLocations({ locations: [{ file: 'pkg/..' }] }))).toMatch(/names no file/);
  });

  it('trims names and treats empty names as absent', () => {
    const result = normalizeLocations({
      locations: [
        { file: 'a.py', class_name: '  C ', function_name: '' },
        { file: 'b.py', class_name: ' ', function_name: ' f' },
      ],
    });
    expect(locationsOf(result)).toEqual([
      { file: 'a.py', class_name: 'C', function_name: null },
      { file: 'b.py', class_name: null, function_name: 'f' },
    ]);
  });

  it('splits a dotted function name without a class and drops a repeated class prefix', () => {
    const result = normalizeLocations({
      locations: [
        { file: 'a.py', function_name: 'C.m' },
        { file: 'b.py', class_name: 'C', function_name: 'C.m' },
        { file: 'c.py', class_name: 'C', function_name: 'D.m' },
        { file: 'd.py', function_name: 'C.' },
      ],
    });
    expect(locationsOf(result)).toEqual([
      { file: 'a.py', class_name: 'C', function_name: 'm' },
      { file: 'b.py', class_name: 'C', function_name: 'm' },
      { file: 'c.py', class_name: 'C', function_name: 'D.m' },
      { file: 'd.py', class_name: 'C', function_name: null },
    ]);
  });

  it('drops duplicates after normalization, keeping the first', () => {
    const result = normalizeLocations({
      locations: [
        { file: 'a.py', class_name: 'C', function_name: 'm' },
        { file: './a.py', class_name: ' C', function_name: 'm ' },
        { file: 'a.py', function_name: 'C.m' },
        { file: 'a.py', class_name: 'C' },
        { file: 'a.py', class_name: 'C', function_name: null },
      ],
    });
    expect(locationsOf(result)).toEqual([
      { file: 'a.py', class_name: 'C', function_name: 'm' },
      { file: 'a.py', class_name: 'C', function_name: null },
    ]);
  });

  it('ignores unknown keys', () => {
    expect(locationsOf(normalizeLocations({ thought: 'x', locations: [{ file: 'a.py', line: 3 }] }))).toEqual([
      { file: 'a.py', class_name: null, function_name: null },
    ]);
  });

  it('rejects a missing call and malformed arguments with a reason', () => {
    expect(reasonOf(normalizeLocations(null))).toBe('no localization_finish call');
    expect(reasonOf(normalizeLocations(undefined))).toBe('no localization_finish call');
    expect(reasonOf(normalizeLocations('{"locations": ['))).toMatch(/^the arguments must be JSON when sent as a string/);
    expect(reasonOf(normalizeLocations(42))).toMatch(/not an object/);
    expect(reasonOf(normalizeLocations([{ file: 'a.py' }]))).toMatch(/not an object/);
    expect(reasonOf(normalizeLocations({}))).toMatch(/locations is missing or not an array/);
    expect(reasonOf(normalizeLocations({ locations: { file: 'a.py' } }))).toMatch(/locations is missing or not an array/);
    expect(reasonOf(normalizeLocations({ locations: 'a.py' }))).toMatch(/^locations must be JSON when sent as a string/);
    expect(reasonOf(normalizeLocations({ locations: [] }))).toBe('locations is empty; name at least one file');
  });

  it('rejects the whole call when any entry has the wrong types', () => {
    const good = { file: 'a.py' };
    expect(reasonOf(normalizeLocations({ locations: [good, 'b.py'] }))).toMatch(/^locations\[1\] is not an object/);
    expect(reasonOf(normalizeLocations({ locations: [good, null] }))).toMatch(/^locations\[1\] is not an object/);
    expect(reasonOf(normalizeLocations({ locations: [{ class_name: 'C' }] }))).toBe('locations[0].file is missing or not a string');
    expect(reasonOf(normalizeLocations({ locations: [{ file: 3 }] }))).toBe('locations[0].file is missing or not a string');
    expect(reasonOf(normalizeLocations({ locations: [{ file: 'a.py', class_name: 1 }] }))).toBe(
      'locations[0].class_name must be a string or null',
    );
    expect(reasonOf(normalizeLocations({ locations: [{ file: 'a.py', function_name: ['f'] }] }))).toBe(
      'locations[0].function_name must be a string or null',
    );
  });

  it('names the field at fault, for services that answer with it', () => {
    const fieldOf = (result: NormalizeLocationsResult): string | undefined => (result.ok ? 'ok' : result.field);
    const ok = { file: 'a.py' };
    expect(fieldOf(normalizeLocations(null))).toBeUndefined();
    expect(fieldOf(normalizeLocations('{'))).toBeUndefined();
    expect(fieldOf(normalizeLocations(7))).toBeUndefined();
    expect(fieldOf(normalizeLocations({}))).toBe('locations');
    expect(fieldOf(normalizeLocations({ locations: '[' }))).toBe('locations');
    expect(fieldOf(normalizeLocations({ locations: [] }))).toBe('locations');
    expect(fieldOf(normalizeLocations({ locations: [ok, ok, 'c.py'] }))).toBe('locations[2]');
    expect(fieldOf(normalizeLocations({ locations: [ok, ok, { file: 3 }] }))).toBe('locations[2].file');
    expect(fieldOf(normalizeLocations({ locations: [ok, { file: '../x.py' }] }))).toBe('locations[1].file');
    expect(fieldOf(normalizeLocations({ locations: [{ file: '/abs.py' }] }))).toBe('locations[0].file');
    expect(fieldOf(normalizeLocations({ locations: [{ file: './' }] }))).toBe('locations[0].file');
    expect(fieldOf(normalizeLocations({ locations: [{ file: 'a.py', class_name: 1 }] }))).toBe('locations[0].class_name');
    expect(fieldOf(normalizeLocations({ locations: [{ file: 'a.py', function_name: {} }] }))).toBe('locations[0].function_name');
  });
});
