import { describe, expect, it } from 'vitest';
import { isEnvgenError } from '@envgen/core';
import { DEFAULT_REWARD_PORT } from './http-server.js';
import { readServeFlags } from './serve-flags.js';
import type { ServeFlags } from './serve-flags.js';

describe('readServeFlags', () => {
  it('defaults to loopback, the default port, no token and entity F1 = 1', () => {
    expect(readServeFlags({}, {})).toEqual({ host: '127.0.0.1', port: DEFAULT_REWARD_PORT, solve: { by: 'entity', threshold: 1 } });
  });

  it('reads every flag, and the token from ENVGEN_SERVE_TOKEN when no flag gives one', () => {
    expect(readServeFlags({ host: '0.0.0.0', port: '0', token: 'flag', solvedBy: 'total', solvedThreshold: '2.5' }, { ENVGEN_SERVE_TOKEN: 'env' })).toEqual({
      host: '0.0.0.0',
      port: 0,
      token: 'flag',
      solve: { by: 'total', threshold: 2.5 },
    });
    expect(readServeFlags({}, { ENVGEN_SERVE_TOKEN: 'env' }).token).toBe('env');
    expect(readServeFlags({}, { ENVGEN_SERVE_TOKEN: '' }).token).toBeUndefined();
    expect(readServeFlags({ solvedBy: 'total' }, {}).solve).toEqual({ by: 'total', threshold: 3 });
  });

  it('names the bad flag in a usage error', () => {
    const cases: Array<[ServeFlags, RegExp]> = [
      [{ port: '-1' }, /--port -1 is not a port number/],
      [{ port: '65536' }, /--port 65536/],
      [{ port: '80.5' }, /--port 80.5/],
      [{ host: ' ' }, /--host is empty/],
      [{ token: '' }, /--token is empty/],
      [{ solvedBy: 'line' }, /--solved-by line is not a score; pass one of entity, module, file, total/],
      [{ solvedThreshold: '0' }, /--solved-threshold 0 is out of range for entity; pass a number in \(0, 1\]/],
      [{ solvedThreshold: '1.5' }, /out of range for entity/],
      [{ solvedBy: 'total', solvedThreshold: '3.5' }, /out of range for total; pass a number in \(0, 3\]/],
      [{ solvedThreshold: 'high' }, /--solved-threshold high/],
    ];
    for (const [flags, message] of cases) {
      let caught: unknown;
      try {
        readServeFlags(flags, {});
      } catch (error) {
        caught = error;
      }
      expect(isEnvgenError(caught, 'usage')).toBe(true);
      expect((caught as Error).message).toMatch(message);
    }
  });
});
