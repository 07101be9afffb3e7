import { describe, expect, it } from 'vitest';
import { nextRunAt } from './schedule.js';

describe('nextRunAt', () => {
  it('finds the next slot of a nightly schedule and rejects what is not cron', () => {
    const from = new Date(2026, 0, 5, 3, 0, 0);
    expect(nextRunAt('0 2 * * *', from)).toEqual(new Date(2026, 0, 6, 2, 0, 0));
    expect(nextRunAt('*/5 * * * * *', from).getTime() - from.getTime()).toBe(5000);
    expect(() => nextRunAt('every night')).toThrow(/not a cron expression/);
  });
});
