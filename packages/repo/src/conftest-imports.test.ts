import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findNestedConftests, ignoreConftestDirs } from './conftest-imports.js';
import { deriveProfile } from './profile.js';

const scratch = await mkdtemp(join(tmpdir(), 'envgen-conftests-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

async function tree(name: string, files: Record<string, string>): Promise<string> {
  const root = join(scratch, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('findNestedConftests', () => {
  it("lists conftests of a part of the suite with the imports the tree does not hold, not the root's or the whole suite's (thefuck's tests/functional)", async () => {
    const root = await tree('thefuck', {
      'conftest.py': 'import pytest_docker_pexpect\n',
      'thefuck/__init__.py': '',
      'thefuck/utils.py': '',
      'tests/conftest.py': 'import docker\n',
      'tests/test_utils.py': 'from thefuck.utils import x\n',
      'tests/functional/conftest.py': 'import pytest\nfrom pytest_docker_pexpect.docker import run\nfrom thefuck import utils\nfrom tests.tools import y\n',
      'tests/functional/test_bash.py': '',
      'tests/tools.py': '',
    });
    const profile = deriveProfile({ files: ['conftest.py', 'thefuck/__init__.py', 'thefuck/utils.py', 'tests/conftest.py', 'tests/test_utils.py', 'tests/functional/conftest.py', 'tests/functional/test_bash.py', 'tests/tools.py'], configFiles: [] });
    expect(await findNestedConftests(root, profile)).toEqual([{ file: 'tests/functional/conftest.py', dir: 'tests/functional', imports: ['pytest', 'pytest_docker_pexpect'] }]);
  });
});

describe('ignoreConftestDirs', () => {
  const profile = deriveProfile({ files: ['pkg/__init__.py', 'tests/test_a.py', 'tests/functional/conftest.py', 'tests/functional/test_b.py'], configFiles: [] });
  const conftests = [{ file: 'tests/functional/conftest.py', dir: 'tests/functional', imports: ['pytest', 'pytest_docker_pexpect'] }];

  it('leaves out the directory of a conftest that imports what the python lacks, and says why', () => {
    const ignored = ignoreConftestDirs(profile, conftests, new Set(['pytest_docker_pexpect']));
    expect(ignored.testArgs).toEqual([...profile.testArgs, '--ignore=tests/functional']);
    expect(ignored.provenance['testArgs']).toContain('--ignore tests/functional (its conftest.py imports pytest_docker_pexpect, which the tests\' python cannot import: install it to run the tests there)');
  });

  it('changes nothing when the python has every module, or the test arguments leave the directory out already', () => {
    expect(ignoreConftestDirs(profile, conftests, new Set<string>())).toBe(profile);
    const already = { ...profile, testArgs: ['tests', '--ignore=tests/functional'] };
    expect(ignoreConftestDirs(already, conftests, new Set(['pytest_docker_pexpect']))).toBe(already);
  });
});
