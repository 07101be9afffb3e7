import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { createLogger, silentLogger } from '@envgen/core';
import { createProgress, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { LIB, TESTS } from '../support/calc-fixture.js';
import { writeFixtureRepo } from '../support/fixture-repo.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function poolIds(home: string): string[] {
  const pool = openPool(home);
  try {
    return [...pool.listInstances()].map((entry) => entry.instance.instance_id);
  } finally {
    pool.close();
  }
}

describe('a killed envgen inject', () => {
  it('leaves no half-written instance, and the rerun resumes to what an uninterrupted run keeps', async () => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    const options = { repo, count: 24, seed: 3, combine: 0, concurrency: 1 };

    // Uninterrupted run in a home of its own: what the pool should end with.
    const cleanHome = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const quiet = createProgress({ quiet: true });
    const uninterrupted = await runInject(options, resolveConfig({ env: { ENVGEN_HOME: cleanHome }, cwd: cleanHome }), silentLogger, quiet);
    expect(uninterrupted.kept).toBeGreaterThan(3);

    // The same run as a real process, killed with SIGKILL once it has stored a few instances.
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const child = spawn(
      process.execPath,
      ['--conditions=@envgen/source', '--import', 'tsx', join(ROOT, 'test/support/run-cli.ts'), 'inject', '--repo', repo, '-n', '24', '--seed', '3', '--combine', '0', '--concurrency', '1', '--json'],
      { cwd: ROOT, env: { ...process.env, ENVGEN_HOME: home }, stdio: 'ignore', detached: true },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 120_000;
    let stored = 0;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stored = poolIds(home).length;
      if (stored >= 2) break;
    }
    process.kill(-(child.pid as number), 'SIGKILL');
    await exited;
    expect(stored).toBeGreaterThanOrEqual(2);

    // Whatever the kill interrupted, every stored instance is whole.
    const pool = openPool(home);
    const before = [...pool.listInstances()].map((entry) => entry.instance.instance_id);
    for (const id of before) expect(Object.keys(pool.readBundle(id))).toHaveLength(5);
    pool.close();
    expect(before.length).toBeLessThan(uninterrupted.kept);

    const resumed = await runInject(options, resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home }), silentLogger, quiet);
    expect(resumed.known).toBe(before.length);
    expect(resumed.kept).toBe(uninterrupted.kept - before.length);
    expect(poolIds(home)).toEqual(poolIds(cleanHome));
  });
});

describe('envgen inject run again', () => {
  it('starts no validator for a rerun whose candidates the pool already holds or rejected', async () => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    const options = { repo, count: 8, seed: 5, combine: 0, concurrency: 1 };
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const config = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    const quiet = createProgress({ quiet: true });
    const preloads = (): { logger: ReturnType<typeof createLogger>; count: () => number } => {
      const lines: string[] = [];
      return { logger: createLogger({ level: 'debug', write: (line) => lines.push(line) }), count: () => lines.filter((line) => line.startsWith('debug: preloaded')).length };
    };
    const first = preloads();
    const proved = await runInject(options, config, first.logger, quiet);
    expect(proved.tried).toBe(8);
    expect(first.count()).toBeGreaterThan(0);

    const again = preloads();
    const rerun = await runInject(options, config, again.logger, quiet);
    expect(rerun).toMatchObject({ tried: 8, kept: 0, known: proved.kept });
    expect(again.count()).toBe(0);
  });

  it('proves its candidates again once a package the tests can import was installed', async () => {
    // A directory on the tests' import path outside the worktree, as dist-packages is (the
    // `none` backend runs on the host, so the test can install into it).
    const site = mkdtempSync(join(tmpdir(), 'envgen-site-'));
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    const options = { repo, count: 8, seed: 5, combine: 0, concurrency: 1 };
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const config = { ...resolveConfig({ env: { ENVGEN_HOME: home, ENVGEN_SANDBOX: 'none' }, cwd: home }), profiles: { 'local/calc': { env: { PYTHONPATH: site } } } };
    const quiet = createProgress({ quiet: true });
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
    const preloaded = (): number => lines.filter((line) => line.startsWith('debug: preloaded')).length;
    const first = await runInject(options, config, logger, quiet);
    expect(Object.values(first.rejected).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    const started = preloaded();

    writeFileSync(join(site, 'installed_pkg.py'), 'VALUE = 1\n');
    const after = await runInject(options, config, logger, quiet);
    // Neither a rejection nor the bundle script's clean run made before the install is taken on trust.
    expect(preloaded()).toBeGreaterThan(started);
    expect(after).toMatchObject({ tried: 8, kept: 0, known: first.kept, rejected: first.rejected });
    expect(after.cleanRun).toMatchObject({ cached: false });
    expect(lines.join('\n')).toContain('packages the tests import or the locales changed since the cached baseline was made');
  });
});
