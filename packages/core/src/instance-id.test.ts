import { describe, expect, it } from 'vitest';
import { makeInstanceId } from './instance-id.js';

describe('makeInstanceId', () => {
  it('follows DESIGN.md and depends on the patch, not on when it was made', () => {
    const input = { owner: 'debian', name: 'toolz', commit: 'a946ba658ae3df90476859bdadf8508d41413e02', strategy: 'change_operator', patch: '--- a/x.py\n+++ b/x.py\n' };
    const id = makeInstanceId(input);
    expect(id).toMatch(/^debian__toolz\.a946ba65\.change_operator__[0-9a-f]{8}$/);
    expect(makeInstanceId({ ...input })).toBe(id);
    expect(makeInstanceId({ ...input, patch: `${input.patch} ` })).not.toBe(id);
  });
});
