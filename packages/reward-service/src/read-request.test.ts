import { describe, expect, it } from 'vitest';
import { readBatchItems, readInjectorRequest, readOutcomeRequest, readScoreRequest } from './read-request.js';
import type { ReadResult } from './read-request.js';

function faultOf<T>(result: ReadResult<T>): { field: string; message: string } {
  if (result.ok) throw new Error(`expected a fault, got ${JSON.stringify(result.value)}`);
  return result.fault;
}

function valueOf<T>(result: ReadResult<T>): T {
  if (!result.ok) throw new Error(`expected a request, got ${result.fault.field}: ${result.fault.message}`);
  return result.value;
}

const gold = [{ file: 'a.py', changes: { edited_entities: ['a.py:f'], edited_modules: ['a.py:f'] } }];

describe('readScoreRequest', () => {
  it('reads a score by instance id with structured locations, normalized', () => {
    expect(valueOf(readScoreRequest({ instance_id: 'x', locations: [{ file: './a.py', function_name: 'C.m' }] }))).toEqual({
      gold: { kind: 'instance', instanceId: 'x' },
      localization: { kind: 'locations', locations: [{ file: 'a.py', class_name: 'C', function_name: 'm' }] },
      record: false,
    });
  });

  it('reads inline gold, filling the added lists, and raw arguments with a repo root', () => {
    expect(valueOf(readScoreRequest({ gold, arguments: '{"locations": []}', repo_root: '/srv/repo' }))).toEqual({
      gold: { kind: 'inline', gold: [{ file: 'a.py', changes: { edited_entities: ['a.py:f'], edited_modules: ['a.py:f'], added_entities: [], added_modules: [] } }] },
      localization: { kind: 'arguments', arguments: '{"locations": []}', repoRoot: '/srv/repo' },
      record: false,
    });
    // A null `arguments` is "no localization_finish call", scored 0 later, not a fault.
    expect(valueOf(readScoreRequest({ instance_id: 'x', arguments: null, record: true })).localization).toEqual({ kind: 'arguments', arguments: null });
  });

  it('names the field at fault', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [[], '', /request body must be a JSON object, got an array/],
      [{ locations: [{ file: 'a.py' }] }, 'instance_id', /instance_id is required \(or gold/],
      [{ instance_id: '', locations: [{ file: 'a.py' }] }, 'instance_id', /non-empty string/],
      [{ instance_id: 7, locations: [{ file: 'a.py' }] }, 'instance_id', /got a number/],
      [{ instance_id: 'x', gold, locations: [{ file: 'a.py' }] }, 'gold', /either instance_id or gold, not both/],
      [{ instance_id: 'x' }, 'locations', /locations is required \(or arguments/],
      [{ instance_id: 'x', locations: [{ file: 'a.py' }], arguments: {} }, 'arguments', /not both/],
      [{ instance_id: 'x', locations: { file: 'a.py' } }, 'locations', /must be an array/],
      [{ instance_id: 'x', locations: [] }, 'locations', /locations is empty/],
      [{ instance_id: 'x', locations: [{ file: 'a.py' }, { file: 'b.py' }, { file: 3 }] }, 'locations[2].file', /^locations\[2\]\.file is missing or not a string$/],
      [{ instance_id: 'x', locations: [{ file: 'a.py', class_name: 1 }] }, 'locations[0].class_name', /string or null/],
      [{ instance_id: 'x', locations: [{ file: '../a.py' }] }, 'locations[0].file', /leaves the repo/],
      [{ instance_id: 'x', locations: [{ file: '/abs/a.py' }] }, 'locations[0].file', /is absolute/],
      [{ instance_id: 'x', locations: [{ file: 'a.py' }], repo_root: 'rel' }, 'repo_root', /absolute path/],
      [{ instance_id: 'x', locations: [{ file: 'a.py' }], record: 'yes' }, 'record', /true or false, got a string/],
      [{ gold, locations: [{ file: 'a.py' }], record: true }, 'record', /needs instance_id/],
      [{ instanceId: 'x', locations: [{ file: 'a.py' }] }, 'instanceId', /not a known field; known fields: instance_id, gold/],
      [{ gold: {}, locations: [{ file: 'a.py' }] }, 'gold', /array of \{file, changes\}/],
      [{ gold: [null], locations: [{ file: 'a.py' }] }, 'gold[0]', /must be an object/],
      [{ gold: [{ changes: {} }], locations: [{ file: 'a.py' }] }, 'gold[0].file', /non-empty string/],
      [{ gold: [{ file: 'a.py' }], locations: [{ file: 'a.py' }] }, 'gold[0].changes', /must be an object/],
      [{ gold: [{ file: 'a.py', changes: { edited_modules: [] } }], locations: [{ file: 'a.py' }] }, 'gold[0].changes.edited_entities', /array of strings, got nothing/],
      [{ gold: [{ file: 'a.py', changes: { edited_entities: ['a', 2], edited_modules: [] } }], locations: [{ file: 'a.py' }] }, 'gold[0].changes.edited_entities[1]', /must be a string/],
    ];
    for (const [body, field, message] of cases) {
      const fault = faultOf(readScoreRequest(body));
      expect({ body, field: fault.field }).toEqual({ body, field });
      expect(fault.message).toMatch(message);
    }
  });

  it('prefixes fields with the batch item path', () => {
    expect(faultOf(readScoreRequest({ instance_id: 'x', locations: [{ file: 'a.py' }, 5] }, 'items[3]'))).toMatchObject({
      field: 'items[3].locations[1]',
      message: expect.stringMatching(/^items\[3\]\.locations\[1\] is not an object/),
    });
    expect(faultOf(readScoreRequest(null, 'items[0]'))).toEqual({ field: 'items[0]', message: 'items[0] must be a JSON object, got null' });
  });
});

describe('readBatchItems', () => {
  it('takes {items} or a bare array, non-empty and bounded', () => {
    expect(valueOf(readBatchItems({ items: [1, 2] }, 10))).toEqual([1, 2]);
    expect(valueOf(readBatchItems([1], 10))).toEqual([1]);
    expect(faultOf(readBatchItems({ items: [] }, 10))).toMatchObject({ field: 'items', message: expect.stringMatching(/empty/) });
    expect(faultOf(readBatchItems({ items: [1, 2, 3] }, 2))).toMatchObject({ field: 'items', message: expect.stringMatching(/3 requests, more than the 2/) });
    expect(faultOf(readBatchItems({ items: 'x' }, 2))).toMatchObject({ field: 'items' });
    expect(faultOf(readBatchItems({ requests: [] }, 2))).toMatchObject({ field: 'requests' });
  });
});

describe('readOutcomeRequest', () => {
  it('reads a known reward or a localization to score', () => {
    expect(valueOf(readOutcomeRequest({ instance_id: 'x', reward: 2.5, solved: false }))).toEqual({ kind: 'reward', instanceId: 'x', reward: 2.5, solved: false });
    expect(valueOf(readOutcomeRequest({ instance_id: 'x', arguments: null }))).toEqual({
      kind: 'localization',
      instanceId: 'x',
      localization: { kind: 'arguments', arguments: null },
    });
  });

  it('names the field at fault', () => {
    expect(faultOf(readOutcomeRequest({ reward: 1, solved: true })).field).toBe('instance_id');
    expect(faultOf(readOutcomeRequest({ instance_id: 'x' })).field).toBe('reward');
    expect(faultOf(readOutcomeRequest({ instance_id: 'x', reward: '1', solved: true })).message).toMatch(/reward must be a finite number, got a string/);
    expect(faultOf(readOutcomeRequest({ instance_id: 'x', reward: 1 }))).toMatchObject({ field: 'solved', message: expect.stringMatching(/got nothing/) });
    expect(faultOf(readOutcomeRequest({ instance_id: 'x', reward: 1, solved: true, locations: [{ file: 'a.py' }] })).message).toMatch(/not both/);
    expect(faultOf(readOutcomeRequest({ instance_id: 'x', locations: [{ file: 'a.py', function_name: 4 }] })).field).toBe('locations[0].function_name');
  });
});

describe('readInjectorRequest', () => {
  it('reads an inline outcome or an instance, with an optional alpha', () => {
    expect(valueOf(readInjectorRequest({ checks_passed: true, solve_rate: 0.25 }))).toEqual({ kind: 'inline', checksPassed: true, solveRate: 0.25 });
    expect(valueOf(readInjectorRequest({ checks_passed: false }))).toEqual({ kind: 'inline', checksPassed: false, solveRate: null });
    expect(valueOf(readInjectorRequest({ instance_id: 'x', alpha: 0 }))).toEqual({ kind: 'instance', instanceId: 'x', alpha: 0 });
  });

  it('names the field at fault', () => {
    expect(faultOf(readInjectorRequest({})).field).toBe('checks_passed');
    expect(faultOf(readInjectorRequest({ checks_passed: 1 })).message).toMatch(/true or false, got a number/);
    expect(faultOf(readInjectorRequest({ checks_passed: true })).field).toBe('solve_rate');
    expect(faultOf(readInjectorRequest({ checks_passed: true, solve_rate: 1.5 })).message).toMatch(/solve_rate must be a number in \[0, 1\], got 1.5/);
    expect(faultOf(readInjectorRequest({ checks_passed: true, solve_rate: 0.5, alpha: -1 })).field).toBe('alpha');
    expect(faultOf(readInjectorRequest({ instance_id: 'x', solve_rate: 0.5 })).field).toBe('instance_id');
  });
});
