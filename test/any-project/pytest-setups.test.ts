import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkBundle } from '@envgen/bundle';
import { resolveConfig } from '@envgen/config';
import { silentLogger, volatileIds } from '@envgen/core';
import { checkoutRepo, createProgress, resolveProfile, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { buildBaseline } from '@envgen/testrun';
import { writeFixtureRepo } from '../support/fixture-repo.js';
import { plainPytest } from '../support/plain-pytest.js';
import { SHAPES } from './shapes.js';

const quiet = createProgress({ quiet: true });

afterEach(() => {
  vi.unstubAllEnvs();
});

describe.each(Object.entries(SHAPES))('a project with %s', (name, shape) => {
  it(`${shape.about}: clean outcomes are plain pytest's, no candidate crashes, kept bugs pass their own bundle checks cold`, async () => {
    const repo = writeFixtureRepo(shape.files, { git: true, name, ...(shape.releaseTag === undefined ? {} : { releaseTag: shape.releaseTag }) });
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    for (const [key, value] of Object.entries(shape.machineEnv ?? {})) vi.stubEnv(key, value);

    const report = await runInject({ repo, count: shape.count ?? 16, seed: 11, combine: 2, tasks: null }, settings, silentLogger, quiet);
    expect(report.rejected['crashed'] ?? 0).toBe(0);
    // Bugs go only into lines the clean suite ran, whatever the set-up.
    expect(report.sites.linesKnown).toBe(true);
    // One truth: nothing the validator proved is rejected by the weakening or the checks.
    expect(report.afterVerdict).toEqual([]);
    // Each rejection is listed with what the candidate changed and why it is no instance.
    const listed: Record<string, number> = {};
    for (const rejection of report.rejections) listed[rejection.reason] = (listed[rejection.reason] ?? 0) + 1;
    expect(listed).toEqual(report.rejected);
    for (const rejection of report.rejections) expect(rejection.description).not.toBe('');
    // The first kept bundle's own script agrees with the verdict, the reference way's too.
    expect(report.replay).toMatchObject({ agreed: true });
    if (shape.hangs) expect(report.rejected['timeout']).toBeGreaterThan(0);
    else expect(report.rejected['timeout'] ?? 0).toBe(0);
    // Bugs go into the tree's own code, which the clean suite ran.
    expect(report.tried).toBeGreaterThan(0);
    expect(report.kept).toBeGreaterThanOrEqual(Math.ceil(report.tried * 0.6));
    // Renamed tests are left out of the sets, never a reason to validate the slow way; only a
    // change to a file pytest imports when it starts is, where a fork of a warm pytest cannot
    // run it as a fresh pytest would (outside function bodies that run in tests).
    if (shape.importedByPytest) {
      expect(report.validation.reference).toBeGreaterThan(0);
      expect(report.validation.reference).toBeLessThan(report.tried);
      expect(Object.keys(report.validation.declined)).toContain('iniconfig/__init__.py is imported by pytest itself when it starts');
    } else expect(report.validation.reference).toBe(0);
    if (shape.keepsImport) expect(report.rejected['no-passing-test'] ?? 0).toBe(0);
    if (shape.resumes) expect(report.validation.resumed + report.validation.collection, JSON.stringify(report.validation.declined)).toBeGreaterThan(report.tried / 2);

    const { provider, repo: resolved, worktree } = await checkoutRepo(repo, settings, silentLogger, quiet);
    const pool = openPool(home);
    try {
      const profile = await resolveProfile(worktree.path, resolved, settings, provider);
      const baseline = await buildBaseline({ worktree: worktree.path, commit: resolved.commit, profile, sandboxProvider: provider, home });
      const clean = Object.fromEntries(Object.entries(baseline.results).map(([id, result]) => [id, result.outcome]));
      const plain = plainPytest(repo, { install: shape.installed === true, ...(shape.plainPrepare === undefined ? {} : { prepare: shape.plainPrepare }), ...(shape.project === undefined ? {} : { project: shape.project }), ...(shape.plainArgs === undefined ? {} : { args: shape.plainArgs }) });
      const renamed = volatileIds(Object.keys(clean), Object.keys(plain));
      expect(renamed.size > 0).toBe(shape.renamesIds === true);
      const named = (outcomes: Record<string, string>) => Object.fromEntries(Object.entries(outcomes).filter(([id]) => !renamed.has(id)));
      expect(named(clean)).toEqual(named(plain));
      for (const id of shape.mustHold ?? []) expect(clean[id]).toBe('passed');

      const instances = report.instanceIds.map((id) => pool.getInstance(id));
      // Every test an instance names is one another run of the suite finds.
      for (const instance of instances) {
        for (const id of [...(instance?.FAIL_TO_PASS ?? []), ...(instance?.PASS_TO_PASS ?? [])]) expect(plain[id], id).toBe('passed');
      }
      if (shape.failingSomewhere !== undefined) {
        const prefix = shape.failingSomewhere;
        expect(instances.some((instance) => instance?.FAIL_TO_PASS.some((id) => id.startsWith(prefix)))).toBe(true);
      }
      if (shape.stopsEarly) {
        // Bugs that break more tests than the config lets a run fail before it stops.
        for (const instance of instances.filter((each) => (each?.FAIL_TO_PASS.length ?? 0) > 2).slice(0, 2)) {
          const bugged = mkdtempSync(join(tmpdir(), 'envgen-bugged-'));
          execFileSync('cp', ['-a', `${repo}/.`, bugged]);
          execFileSync('git', ['apply'], { cwd: bugged, input: pool.readBundle(instance?.instance_id ?? '')['bug_inject.diff'] });
          for (const id of instance?.FAIL_TO_PASS ?? []) expect(plainPytest(bugged, { args: [id] })[id], id).toMatch(/^(failed|error)$/);
          execFileSync('rm', ['-rf', bugged]);
        }
      }
      if (shape.finalizerErrors !== undefined) {
        const leakCheck = shape.finalizerErrors;
        expect(instances.some((instance) => (instance?.FAIL_TO_PASS.length ?? 0) >= 3)).toBe(true);
        for (const instance of instances) expect(instance?.FAIL_TO_PASS).not.toContain(leakCheck);
      }
      // One truth: the bundle's own script and parser, run cold in the sandbox, see exactly the
      // validator's FAIL_TO_PASS, but for tests counted flaky, which are in neither set (a
      // multiprocessing pool that hangs now and then on a busy machine; two kept bugs per
      // shape keep the suite quick).
      const flaky = new Set([...baseline.flaky, ...(report.cleanRun?.flaky ?? []), ...report.warmFlaky, ...report.flipped]);
      for (const instance of instances.slice(0, 2)) {
        const bundle = pool.readBundle(instance?.instance_id ?? '');
        const checked = await checkBundle({ bundle, worktree: worktree.path, profile, sandboxProvider: provider });
        expect(checked.checks.filter((check) => !check.passed)).toEqual([]);
        expect(checked.brokenTests.filter((id) => !flaky.has(id)).sort()).toEqual(instance?.FAIL_TO_PASS);
      }
    } finally {
      pool.close();
      await worktree.remove();
      execFileSync('rm', ['-rf', home]);
    }
  });
});
