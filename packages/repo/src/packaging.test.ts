import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { git } from './git-test-helpers.fixture.js';
import { gitVersion, installedMetadataStep, packageRoots, readPackaging, renamedPackages, versionTuple } from './packaging.js';
import { deriveProfile, detectProfile } from './profile.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'envgen-packaging-'));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

function committed(files: Record<string, string>): string {
  const root = tree(files);
  git(root, 'init', '-q');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'first');
  return root;
}

const pyFiles = (files: Record<string, string>) => Object.keys(files).filter((path) => path.endsWith('.py'));

describe('versionTuple', () => {
  it("reads a version as setuptools-scm's version_tuple does", () => {
    expect(versionTuple('1.2.3')).toBe('(1, 2, 3)');
    expect(versionTuple('4.16.1.dev5')).toBe("(4, 16, 1, 'dev5')");
    expect(versionTuple('1.2.1.dev1+gabc1234')).toBe("(1, 2, 1, 'dev1', 'gabc1234')");
    expect(versionTuple('7')).toBe('(7,)');
  });
});

describe('gitVersion', () => {
  it("computes the checkout's version from its tags as setuptools-scm does by default", async () => {
    const root = committed({ 'a.txt': 'a' });
    expect(await gitVersion(root)).toMatch(/^0\.1\.dev1\+g[0-9a-f]{7}$/);
    git(root, 'tag', 'v1.2.0');
    expect(await gitVersion(root)).toBe('1.2.0');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'next');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'next');
    const sha = git(root, 'rev-parse', '--short=7', 'HEAD');
    expect(await gitVersion(root)).toBe(`1.2.1.dev2+g${sha}`);
    expect(await gitVersion(root, false)).toBe('1.2.1.dev2');
    git(root, 'tag', '2.0.0rc1');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'next');
    expect(await gitVersion(root, false)).toBe('2.0.0.dev1');
  });

  it("reads the upstream version from the tag of envgen's Debian snapshots and ignores a tag without a version", async () => {
    const root = committed({ 'a.txt': 'a' });
    git(root, 'tag', 'release-notes');
    expect(await gitVersion(root)).toMatch(/^0\.1\.dev1\+g[0-9a-f]{7}$/);
    git(root, 'tag', 'debian/0.13.0+dfsg-1.1_deb12u1');
    expect(await gitVersion(root)).toBe('0.13.0');
  });

  it('is null outside a git repo', async () => {
    expect(await gitVersion(tree({ 'a.txt': 'a' }))).toBeNull();
  });
});

describe('readPackaging', () => {
  it('is null when nothing in the project needs it installed', async () => {
    const files = { 'pyproject.toml': '[project]\nname = "plain"\nversion = "1.0"\n', 'plain/__init__.py': 'X = 1\n', 'tests/test_plain.py': 'def test_x():\n    pass\n' };
    expect(await readPackaging(tree(files), Object.keys(files), pyFiles(files), [])).toBeNull();
  });

  it('reads entry points, the version file the build writes and a version from git tags', async () => {
    const files = {
      'pyproject.toml': `[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "Fancy.Tool"
dynamic = ["version"]

[project.scripts]
fancy = "fancy.cli:main"

[project.entry-points."fancy.plugins"]
one = "fancy.plugins:one"

[tool.hatch]
version.source = "vcs"
version.raw-options.local_scheme = "no-local-version"
build.hooks.vcs.version-file = "src/fancy/_version.py"
`,
      'src/fancy/__init__.py': 'from ._version import __version__\n',
      'tests/test_fancy.py': 'def test_x():\n    pass\n',
    };
    const root = committed(files);
    git(root, 'tag', 'v0.9.0');
    const packaging = await readPackaging(root, Object.keys(files), pyFiles(files), []);
    expect(packaging).toEqual({
      name: 'Fancy.Tool',
      version: '0.9.0',
      versionFrom: 'git tags, as setuptools-scm computes it',
      entryPoints: { console_scripts: { fancy: 'fancy.cli:main' }, 'fancy.plugins': { one: 'fancy.plugins:one' } },
      scriptsRun: [],
      versionFile: { path: 'src/fancy/_version.py', template: null },
      needs: ['it declares entry points (fancy.plugins)', 'its build writes src/fancy/_version.py'],
    });
  });

  it("takes setup.cfg's metadata and entry points, a version attribute's literal and code that reads metadata", async () => {
    const files = {
      'setup.cfg': '[metadata]\nname = oldstyle\nversion = attr: oldstyle.__version__\n\n[options.entry_points]\nconsole_scripts =\n    old = oldstyle:main\n',
      'oldstyle/__init__.py': '__version__ = "3.1.4"\n',
      'tests/test_meta.py': 'import importlib.metadata\n\ndef test_version():\n    assert importlib.metadata.version("oldstyle") == "3.1.4"\n',
    };
    const packaging = await readPackaging(tree(files), Object.keys(files), pyFiles(files), []);
    expect(packaging).toMatchObject({ name: 'oldstyle', version: '3.1.4', versionFrom: 'oldstyle.__version__ in oldstyle/__init__.py', entryPoints: { console_scripts: { old: 'oldstyle:main' } } });
    expect(packaging?.needs).toEqual(['tests/test_meta.py reads installed metadata']);
  });

  it("takes a pbr project's entry points from setup.cfg's own [entry_points] section and its version from git tags (bandit's plugins)", async () => {
    const files = {
      'setup.py': 'import setuptools\n\nsetuptools.setup(setup_requires=["pbr>=2.0.0"], pbr=True)\n',
      'setup.cfg':
        '[metadata]\nname = scanner\n\n[entry_points]\nconsole_scripts =\n    scanner = scanner.cli:main\nscanner.plugins =\n    # scanner/plugins/asserts.py\n    assert_used = scanner.plugins.asserts:assert_used\n',
      'scanner/__init__.py': '',
      'tests/test_cli.py': 'import subprocess\n\ndef test_help():\n    subprocess.run(["scanner", "--help"], check=True)\n',
    };
    const root = committed(files);
    git(root, 'tag', '1.8.6');
    const packaging = await readPackaging(root, Object.keys(files), pyFiles(files), ['tests/test_cli.py']);
    expect(packaging).toMatchObject({
      name: 'scanner',
      version: '1.8.6',
      versionFrom: 'git tags, as pbr computes it',
      entryPoints: { console_scripts: { scanner: 'scanner.cli:main' }, 'scanner.plugins': { assert_used: 'scanner.plugins.asserts:assert_used' } },
      scriptsRun: ['scanner'],
    });
    // Without pbr, setuptools reads no such section.
    const plain = { ...files, 'setup.py': 'import setuptools\n\nsetuptools.setup()\n' };
    expect((await readPackaging(tree(plain), Object.keys(plain), pyFiles(plain), ['tests/test_cli.py']))?.entryPoints ?? {}).toEqual({});
  });

  it("takes a setup.py's literal name and version", async () => {
    const files = {
      'setup.py': 'from setuptools import setup\n\nsetup(\n    name="legacy-lib",\n    version="0.4.2",\n    packages=["legacy"],\n)\n',
      'legacy/__init__.py': 'import pkg_resources\n\n__version__ = pkg_resources.get_distribution("legacy-lib").version\n',
    };
    expect(await readPackaging(tree(files), Object.keys(files), pyFiles(files), [])).toMatchObject({ name: 'legacy-lib', version: '0.4.2', versionFrom: 'setup.py', needs: ['legacy/__init__.py reads installed metadata'] });
    const byAttribute = {
      'setup.py': 'import legacy\nfrom setuptools import setup\n\nsetup(name="legacy-lib", version=legacy.__version__)\n',
      'legacy/__init__.py': '__version__ = "0.5.0"\n',
      'tests/test_legacy.py': 'from importlib import metadata\n',
    };
    expect(await readPackaging(tree(byAttribute), Object.keys(byAttribute), pyFiles(byAttribute), [])).toMatchObject({ version: '0.5.0', versionFrom: 'legacy.__version__ in legacy/__init__.py' });
  });

  it("prefers an sdist's PKG-INFO to git for a version the build computes", async () => {
    const files = {
      'PKG-INFO': 'Metadata-Version: 2.1\nName: fromsdist\nVersion: 2.5.0\n',
      'pyproject.toml': '[project]\nname = "fromsdist"\ndynamic = ["version"]\n\n[tool.setuptools_scm]\nwrite_to = "fromsdist/_version.py"\n',
      'fromsdist/__init__.py': 'from ._version import version\n',
    };
    expect(await readPackaging(tree(files), Object.keys(files), pyFiles(files), [])).toMatchObject({ version: '2.5.0', versionFrom: "the sdist's PKG-INFO" });
  });
});

describe('installedMetadataStep', () => {
  it('leaves metadata that importlib.metadata finds beside the package, and the version file', async () => {
    const files = {
      'pyproject.toml': '[project]\nname = "ivl-tools"\ndynamic = ["version"]\n\n[project.entry-points."ivl.transforms"]\ndouble = "ivl.builtin:double"\n\n[tool.setuptools_scm]\nwrite_to = "src/ivl/_version.py"\n',
      'src/ivl/__init__.py': 'from ._version import __version__, __version_tuple__\n',
      'src/ivl/builtin.py': 'def double(x):\n    return 2 * x\n',
    };
    const root = committed(files);
    git(root, 'tag', '1.4.0');
    const packaging = await readPackaging(root, Object.keys(files), pyFiles(files), []);
    if (packaging === null) throw new Error('expected packaging');
    const step = installedMetadataStep(packaging, 'src/', { python: '/usr/bin/python3', importPaths: ['src'] });
    execFileSync('sh', ['-c', step], { cwd: root });
    // Idempotent: the bundle's script runs it again on a tree that has it.
    execFileSync('sh', ['-c', step], { cwd: root });
    const probe = [
      'import importlib.metadata as m, ivl',
      'print(m.version("ivl-tools"), ivl.__version__, ivl.__version_tuple__)',
      'print([e.load()(3) for e in m.entry_points(group="ivl.transforms")])',
    ].join('\n');
    const out = execFileSync('/usr/bin/python3', ['-c', probe], { cwd: root, encoding: 'utf8', env: { ...process.env, PYTHONPATH: 'src' } });
    expect(out).toBe("1.4.0 1.4.0 (1, 4, 0)\n[6]\n");
    expect(readFileSync(join(root, 'src/ivl/_version.py'), 'utf8')).toContain("__version__ = version = '1.4.0'");
  });

  it('makes the console scripts the tests run, which run the tree\'s code from any directory, and names their directory for PATH', async () => {
    const files = {
      'pyproject.toml': '[project]\nname = "ivl"\nversion = "0.3.0"\n\n[project.scripts]\nivl-total = "ivl.cli:main"\nivl-dump = "ivl.cli:Dump.run [color]"\n\n[tool.setuptools.package-dir]\n"" = "lib"\n\n[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n',
      'lib/ivl/__init__.py': '',
      'lib/ivl/cli.py': 'import sys\n\n\ndef main():\n    print(sum(int(a) for a in sys.argv[1:]))\n    return 3\n\n\nclass Dump:\n    @staticmethod\n    def run():\n        print("dump")\n',
      // A mention outside the tests (a parser's prog name) is no reason: only what tests run.
      'lib/ivl/args.py': 'PROG = "ivl-dump"\n',
      // A test file by the project's own python_files.
      'checks/check_cli.py': 'import subprocess\n\n\ndef test_total():\n    subprocess.run(["ivl-total", "1"])\n',
    };
    const root = tree(files);
    const profile = await detectProfile(root, { aptPackages: [] });
    expect(profile.testFiles).toEqual(['checks/check_cli.py']);
    expect(profile.provenance['env.ENVGEN_SCRIPTS']).toContain('(ivl-total)');
    expect(profile.env).toMatchObject({ PYTHONPATH: 'lib', ENVGEN_SCRIPTS: 'lib/ivl-0.3.0.dist-info/bin' });
    for (const step of profile.install) execFileSync('sh', ['-c', step], { cwd: root });
    // Every script pip would make, run from elsewhere with nothing of the tree on the path.
    const run = (name: string, ...args: string[]) =>
      spawnSync(join(root, 'lib/ivl-0.3.0.dist-info/bin', name), args, { cwd: tmpdir(), encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    expect(run('ivl-total', '1', '2')).toMatchObject({ status: 3, stdout: '3\n' });
    expect(run('ivl-dump')).toMatchObject({ status: 0, stdout: 'dump\n' });
  });

  it("goes into the profile's install steps, which a profile file's own replace", () => {
    const packaging = { name: 'x', version: '1.0', versionFrom: 'pyproject.toml', entryPoints: {}, scriptsRun: [], versionFile: null, needs: ['tests/test_x.py reads installed metadata'] };
    const listing = { files: ['x/__init__.py', 'tests/test_x.py'], configFiles: [], packaging };
    const detected = deriveProfile(listing);
    expect(detected.install).toHaveLength(1);
    expect(detected.install[0]).toContain("mkdir -p x-1.0.dist-info");
    expect(detected.provenance['install']).toBe('installed metadata beside the package, version from pyproject.toml');
    const overridden = deriveProfile(listing, { overrides: [{ source: 'profile file p.json', values: { install: ['make'] } }] });
    expect(overridden.install).toEqual(['make']);
  });
});

describe('packageRoots', () => {
  it('reads the package directories setuptools, hatch, Poetry and PDM are configured with', () => {
    const pyproject = (text: string) => packageRoots([{ path: 'pyproject.toml', text }]);
    expect(pyproject('[tool.setuptools.package-dir]\n"" = "lib"\n')).toEqual(['lib']);
    expect(pyproject('[tool.setuptools.packages.find]\nwhere = ["python", "."]\n')).toEqual(['python']);
    expect(pyproject('[tool.hatch.build.targets.wheel]\npackages = ["code/pkg", "top"]\n')).toEqual(['code']);
    expect(pyproject('[tool.poetry]\npackages = [{ include = "pkg", from = "source" }]\n')).toEqual(['source']);
    expect(pyproject('[tool.pdm.build]\npackage-dir = "pdmsrc"\n')).toEqual(['pdmsrc']);
    expect(packageRoots([{ path: 'setup.cfg', text: '[options]\npackage_dir =\n    =lib\n\n[options.packages.find]\nwhere = lib\n' }])).toEqual(['lib']);
    expect(pyproject('[project]\nname = "x"\n')).toEqual([]);
    // A top-level package's own directory puts its parent on the path; a renamed one gives none.
    expect(pyproject('[tool.setuptools.package-dir]\npkg = "code/pkg"\nother = "elsewhere"\n')).toEqual(['code']);
    expect(packageRoots([{ path: 'setup.cfg', text: '[options]\npackage_dir =\n    pkg = python/pkg\n' }])).toEqual(['python']);
  });

  it("reads the package_dir literal of setup.py's setup() call", () => {
    const setup = (script: string) => packageRoots([], script);
    expect(setup("setup(\n    name='PyYAML',\n    package_dir={'': 'lib'},\n    packages=['yaml', '_yaml'],\n)\n")).toEqual(['lib']);
    expect(setup('setup(package_dir={"pkg": "src/pkg", "pkg.sub": "src/pkg/sub"})')).toEqual(['src']);
    expect(setup("setup(package_dir = { '' : 'python/' , })")).toEqual(['python']);
    // Computed when setup.py runs (PyYAML before 5.4): not guessed.
    expect(setup("setup(package_dir={'': {2: 'lib', 3: 'lib3'}[sys.version_info[0]]})")).toEqual([]);
    expect(setup("setup(packages=find_packages())")).toEqual([]);
  });

  it('puts such a directory on the path of the tests, and the installed metadata in it', () => {
    const configFiles = [{ path: 'pyproject.toml', text: '[tool.setuptools.package-dir]\n"" = "lib"\n' }];
    const packaging = { name: 'x', version: '1.0', versionFrom: 'pyproject.toml', entryPoints: {}, scriptsRun: [], versionFile: null, needs: ['tests/test_x.py reads installed metadata'] };
    const profile = deriveProfile({ files: ['lib/x/__init__.py', 'tests/test_x.py', 'pyproject.toml'], configFiles, packaging });
    expect(profile.env['PYTHONPATH']).toBe('lib');
    expect(profile.provenance['env.PYTHONPATH']).toBe('package directories of the packaging config (lib)');
    expect(profile.install[0]).toContain("mkdir -p lib/x-1.0.dist-info");
    expect(profile.sourceFiles).toEqual(['lib/x/__init__.py']);
  });
});


describe('renamedPackages', () => {
  const pyproject = (text: string) => [{ path: 'pyproject.toml', text }];

  it("finds packages whose directory has another name: setuptools' renaming package_dir, coherent.build's root package", () => {
    expect(renamedPackages(['lib/__init__.py'], pyproject('[tool.setuptools.package-dir]\npkg = "lib"\n'))).toEqual([{ name: 'pkg', dir: 'lib', from: 'setuptools package_dir pkg = lib' }]);
    expect(renamedPackages(['lib/__init__.py'], [{ path: 'setup.cfg', text: '[options]\npackage_dir =\n    pkg = lib\n' }]).map((found) => found.name)).toEqual(['pkg']);
    expect(renamedPackages(['lib/__init__.py'], [], "setup(package_dir={'pkg': 'lib'})").map((found) => found.dir)).toEqual(['lib']);
    // The root package (jaraco/tempora), named as the repository.
    expect(renamedPackages(['__init__.py', 'schedule.py'], pyproject("[build-system]\nrequires = ['coherent.build']\nbuild-backend = 'coherent.build'\n"), null, 'tempora')).toEqual([
      { name: 'tempora', dir: '', from: "coherent.build's essential layout (the repository root is the package, named as the repository)" },
    ]);
    // Directories named as the package, or not packages, are no renaming.
    expect(renamedPackages(['src/pkg/__init__.py', 'lib/x.py'], pyproject('[tool.setuptools.package-dir]\n"" = "src"\npkg = "src/pkg"\nother = "lib"\n'))).toEqual([]);
    expect(renamedPackages(['schedule.py'], pyproject("[build-system]\nbuild-backend = 'coherent.build'\n"), null, 'tempora')).toEqual([]);
  });

  it('makes each importable under its name from the tests, its modules and code at their paths in the tree', () => {
    const root = mkdtempSync(join(tmpdir(), 'envgen-renamed-'));
    roots.push(root);
    const files: Record<string, string> = {
      'pyproject.toml': "[build-system]\nrequires = ['coherent.build']\nbuild-backend = 'coherent.build'\n",
      '__init__.py': 'from .schedule import every\n\nVALUE = every(2)\n',
      'schedule.py': 'def every(n):\n    return n * 3\n',
      'data.txt': 'read through importlib.resources\n',
      'tests/test_schedule.py': 'from tempora import schedule\n\n\ndef test_every():\n    assert schedule.every(1) == 3\n',
    };
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    const profile = deriveProfile({ files: Object.keys(files), configFiles: pyproject(files['pyproject.toml'] ?? '') }, { repoName: 'tempora' });
    expect(profile.env['PYTHONPATH']).toBe('.envgen-packages');
    expect(profile.sourceFiles).toEqual(['__init__.py', 'schedule.py']);
    execFileSync('bash', ['-c', profile.install.join('\n')], { cwd: root });
    const check = [
      'import importlib.resources, inspect, os, tempora, tempora.schedule',
      'print(tempora.VALUE, os.path.relpath(tempora.__file__), os.path.relpath(tempora.schedule.__file__), os.path.relpath(inspect.getsourcefile(tempora.schedule.every)))',
      'print(importlib.resources.files("tempora").joinpath("data.txt").read_text().strip())',
    ].join('\n');
    const ran = spawnSync('/usr/bin/python3', ['-W', 'error', '-c', check], { cwd: join(root, 'tests'), env: { ...process.env, PYTHONPATH: join(root, '.envgen-packages') }, encoding: 'utf8' });
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('6 ../__init__.py ../schedule.py ../schedule.py\nread through importlib.resources\n');
  });
});
