import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { createProgress, formatEnvReport, runEnv, runInject } from '@envgen/cli';
import { writeFixtureRepo } from '../support/fixture-repo.js';
import { SHAPES } from './shapes.js';

const quiet = createProgress({ quiet: true });
const scratch = mkdtempSync(join(tmpdir(), 'envgen-elsewhere-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * PyYAML before 5.4: setup.py computes its package directory when it runs
 * (`{2: 'lib', 3: 'lib3'}[sys.version_info[0]]`), which no reading of the file gives, so the
 * tests import Debian's yaml and pass on it.
 */
const COMPUTED_SETUP = `import sys

from setuptools import setup

setup(
    name="yaml-lite",
    version="1.0",
    package_dir={"": {2: "lib2", 3: "lib"}[sys.version_info[0]]},
    packages=["yaml"],
)
`;

describe('a project whose tests import another copy of its package', () => {
  const files = { ...SHAPES['setup-py-package-dir']?.files, 'setup.py': COMPUTED_SETUP };

  it('env names the copy and says no bug can be proved; inject stops with why; a profile file naming the directory makes it work', async () => {
    const repo = writeFixtureRepo(files, { git: true, name: 'yaml-lite' });
    const home = join(scratch, 'home');
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: scratch });

    const env = await runEnv({ repo }, settings, silentLogger, quiet);
    expect(env.tests.passed).toBe(7);
    expect(env.coverage).toEqual({ coveredFunctions: 0, allFunctions: 4 });
    expect(env.importedElsewhere).toEqual([{ module: 'yaml', tree: 'lib/yaml', imported: '/usr/lib/python3/dist-packages/yaml/__init__.py' }]);
    const text = formatEnvReport(env);
    expect(text).toContain("  imported  yaml from /usr/lib/python3/dist-packages/yaml/__init__.py, not the tree's lib/yaml\n");
    expect(text).toContain(`envgen cannot use local/yaml-lite: its tests pass but ran none of the tree's 4 functions`);
    expect(text).toContain('{"env": {"PYTHONPATH": "lib"}}');

    // Before: 0 tried, exit 0, and nothing said why.
    await expect(runInject({ repo, count: 4, seed: 11, tasks: null }, settings, silentLogger, quiet)).rejects.toMatchObject({
      code: 'no-python-tests',
      message: expect.stringContaining("ran none of the tree's 4 functions (they import yaml from /usr/lib/python3/dist-packages/yaml/__init__.py, not the tree's lib/yaml)"),
    });

    // What the message says to do.
    const profiles = join(scratch, 'profiles');
    mkdirSync(profiles, { recursive: true });
    writeFileSync(join(profiles, 'local__yaml-lite.json'), JSON.stringify({ comment: 'setup.py computes lib/', env: { PYTHONPATH: 'lib' } }));
    const withProfile = resolveConfig({ env: { ENVGEN_HOME: home, ENVGEN_PROFILES_DIRS: profiles }, cwd: scratch });
    const fixed = await runEnv({ repo }, withProfile, silentLogger, quiet);
    expect(fixed.importedElsewhere).toEqual([]);
    expect(fixed.coverage.coveredFunctions).toBe(4);
    const report = await runInject({ repo, count: 8, seed: 11, tasks: null }, withProfile, silentLogger, quiet);
    expect(report.kept).toBeGreaterThan(0);
  });
});
