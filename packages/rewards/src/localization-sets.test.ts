import { describe, expect, it } from 'vitest';
import { goldSets, predictionSets } from './localization-sets.js';

describe('predictionSets', () => {
  it('maps class + function, class only, function only and file only per CodeScout', () => {
    const sets = predictionSets([
      { file: 'a.py', class_name: 'C', function_name: 'm' },
      { file: 'b.py', class_name: 'D' },
      { file: 'c.py', function_name: 'f' },
      { file: 'd.py', class_name: null, function_name: null },
    ]);
    expect([...sets.files]).toEqual(['a.py', 'b.py', 'c.py', 'd.py']);
    expect([...sets.modules]).toEqual(['a.py:C', 'b.py:D', 'c.py:f']);
    expect([...sets.entities]).toEqual(['a.py:C.m', 'c.py:f']);
  });

  it('merges repeated files and classes', () => {
    const sets = predictionSets([
      { file: 'a.py', class_name: 'C', function_name: 'm' },
      { file: 'a.py', class_name: 'C', function_name: 'n' },
    ]);
    expect([...sets.files]).toEqual(['a.py']);
    expect([...sets.modules]).toEqual(['a.py:C']);
    expect([...sets.entities]).toEqual(['a.py:C.m', 'a.py:C.n']);
  });
});

describe('goldSets', () => {
  it('takes every file and only the edited modules and entities', () => {
    const sets = goldSets([
      {
        file: 'a.py',
        changes: {
          edited_entities: ['a.py:C.m'],
          edited_modules: ['a.py:C'],
          added_entities: ['a.py:C.new'],
          added_modules: ['a.py:New'],
        },
      },
      { file: 'b.py', changes: { edited_entities: [], edited_modules: [], added_entities: ['b.py:g'], added_modules: ['b.py:g'] } },
    ]);
    expect([...sets.files]).toEqual(['a.py', 'b.py']);
    expect([...sets.modules]).toEqual(['a.py:C']);
    expect([...sets.entities]).toEqual(['a.py:C.m']);
  });
});
