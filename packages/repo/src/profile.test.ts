import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseProject, deriveProfile, detectProfile, profileHash } from './profile.js';
import type { TreeListing } from './profile.js';

/** Runs `use` on a fresh directory, with `put` writing a file into it, and removes it after. */
async function inTree(use: (tree: string, put: (rel: string, text?: string) => void) => Promise<void>): Promise<void> {
  const tree = mkdtempSync(join(tmpdir(), 'envgen-profile-'));
  const put = (rel: string, text = ''): void => {
    mkdirSync(dirname(join(tree, rel)), { recursive: true });
    writeFileSync(join(tree, rel), text);
  };
  try {
    await use(tree, put);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}

function listing(files: string[], configFiles: TreeListing['configFiles'] = []): TreeListing {
  return { files, configFiles };
}

describe('deriveProfile', () => {
  it('splits tests from source and points pytest at the top-level entries holding tests', () => {
    const profile = deriveProfile(
      listing(['setup.py', 'conftest.py', 'toolz/__init__.py', 'toolz/itertoolz.py', 'toolz/tests/test_itertoolz.py', 'toolz/tests/helpers.py', 'bench/test_speed.py', 'doc/source/conf.py', 'docs_src/first_steps/tutorial001.py', '.tox/py3/lib/x.py', 'build/lib/toolz/__init__.py', 'README.rst']),
    );
    expect(profile.testFiles).toEqual(['conftest.py', 'toolz/tests/helpers.py', 'toolz/tests/test_itertoolz.py']);
    expect(profile.sourceFiles).toEqual(['toolz/__init__.py', 'toolz/itertoolz.py']);
    expect(profile.testArgs).toEqual(['toolz']);
    expect(profile.env).toEqual({ PYTHONHASHSEED: '0' });
    expect(profile.python).toBe('/usr/bin/python3');
    expect(profile.timeoutMs).toBe(600_000);
    expect(profile.aptPackages).toEqual(['python3-pytest']);
  });

  it('says a native TOML config needs pytest 9 (or its minversion), unless testArgs of the user\'s own give its settings', () => {
    const files = ['cov/core.py', 'tests/test_core.py'];
    const config = { path: 'pyproject.toml', text: '[tool.pytest]\nminversion = "9.0.0"\npython_classes = ["*Test"]\n' };
    const profile = deriveProfile(listing(files, [config]));
    expect(profile.requiresPytest).toEqual({ version: '9.0', from: 'pyproject.toml [tool.pytest]' });
    expect(profile.provenance['requiresPytest']).toContain('native TOML');
    const overridden = deriveProfile(listing(files, [config]), { overrides: [{ source: 'profile file', values: { testArgs: ['-o', 'python_classes=*Test', 'tests'] } }] });
    expect(overridden.requiresPytest).toBeUndefined();
    expect(deriveProfile(listing(files, [{ path: 'pyproject.toml', text: '[tool.pytest.ini_options]\nminversion = "9.0"\n' }])).requiresPytest).toBeUndefined();
  });

  it("runs the test paths the project's runner names, where no pytest config chooses them (before, every top-level entry holding test files)", () => {
    const files = ['jmespath/lexer.py', 'tests/__init__.py', 'tests/test_lexer.py', 'tests/test_parser.py', 'extra/test_hypothesis.py'];
    const runnerTestPaths = { paths: ['tests'], from: ['.github/workflows/run-tests.yml: py.test --cov jmespath'] };
    const profile = deriveProfile({ ...listing(files), runnerTestPaths });
    expect(profile.testArgs).toEqual(['tests']);
    expect(profile.testFiles).toContain('extra/test_hypothesis.py');
    expect(profile.provenance['testArgs']).toBe("the test paths the project's runner names (.github/workflows/run-tests.yml: py.test --cov jmespath)");
    expect(deriveProfile(listing(files)).testArgs).toEqual(['extra', 'tests']);
    // A pytest config's testpaths come first; a runner that names no test module is no suite.
    const config = { path: 'setup.cfg', text: '[tool:pytest]\ntestpaths = extra tests\n' };
    expect(deriveProfile({ ...listing(files, [config]), runnerTestPaths }).testArgs).toEqual([]);
    expect(deriveProfile({ ...listing(files), runnerTestPaths: { paths: ['jmespath'], from: ['tox.ini: pytest jmespath'] } }).testArgs).toEqual(['extra', 'tests']);
  });

  it("leaves benchmarks out of the tests' runs as the project's runner or addopts do, where pytest-benchmark is among the packages (before, every benchmark ran for timed rounds)", () => {
    const files = ['pint/registry.py', 'pint/testsuite/test_registry.py', 'pint/testsuite/benchmarks/test_10_registry.py'];
    const runnerOptions = { options: ['--benchmark-skip'], from: ['.github/workflows/ci.yml: pytest -rfsxEX -s --benchmark-skip'] };
    const declared = { packages: ['python3-pytest-benchmark', 'python3-pytest-subtests'], unpackaged: [], sources: ['pyproject.toml [project.optional-dependencies] testbase'] };
    const profile = deriveProfile({ ...listing(files), runnerOptions, declared });
    expect(profile.testArgs).toEqual(['--benchmark-skip', 'pint']);
    expect(profile.provenance['testArgs.runner']).toBe("--benchmark-skip, as the project's runner gives pytest (.github/workflows/ci.yml: pytest -rfsxEX -s --benchmark-skip)");
    // Without the plugin the option is a usage error: not given, as before.
    expect(deriveProfile({ ...listing(files), runnerOptions }).testArgs).toEqual(['pint']);
    // A config's addopts choosing one keeps it where the plugin is there, and drops it where it is not.
    const config = { path: 'setup.cfg', text: '[tool:pytest]\naddopts = --benchmark-skip --benchmark-autosave -ra\n' };
    expect(deriveProfile({ ...listing(files, [config]), runnerOptions, declared }).testArgs).toEqual(['-o', 'addopts=--benchmark-skip -ra', 'pint']);
    expect(deriveProfile({ ...listing(files, [config]), runnerOptions }).testArgs).toEqual(['-o', 'addopts=-ra', 'pint']);
  });

  it('builds the compiled extensions setup.py declares in place, with what building them takes', () => {
    const files = ['setup.py', 'bits/__init__.py', 'bits/_bits.c', 'bits/_fast.pyx', 'bits/test_bits.py', 'devel/bench.c'];
    const script = 'from setuptools import setup, Extension\nsetup(ext_modules=[Extension("bits._bits", ["bits/_bits.c"]), Extension("bits._fast", ["bits/_fast.pyx"])])\n';
    const profile = deriveProfile({ ...listing(files), setupScript: script });
    expect(profile.install).toHaveLength(1);
    expect(profile.install[0]?.split('\n')[1]).toMatch(/^\{ \/usr\/bin\/python3 setup\.py build_ext --inplace \|\| \/usr\/bin\/python3 -c 'import runpy, sys$/);
    expect(profile.install[0]).toMatch(/runpy\.run_path\("setup\.py", run_name="__main__"\)\n' build_ext --inplace; \} \|\| echo /);
    // Only the sources setup.py names: devel/bench.c is not an extension of it.
    expect(profile.install[0]).toContain('(bits/_bits.c, bits/_fast.pyx)');
    expect(profile.aptPackages).toEqual(['cython3', 'g++', 'gcc', 'python3-dev', 'python3-pytest', 'python3-setuptools']);
    expect(profile.provenance['install']).toBe('compiled extensions of setup.py built in place (2 C/C++/Cython source(s))');
    // Sources alone, or a setup.py that builds no extension, build nothing.
    expect(deriveProfile({ ...listing(files), setupScript: 'from setuptools import setup\nsetup(name="bits")\n' }).install).toEqual([]);
    expect(deriveProfile(listing(files)).install).toEqual([]);
  });

  it("has Cython make the generated C sources setup.py names and the checkout lacks, before the build (yarl, frozenlist)", () => {
    const files = ['setup.py', 'Makefile', 'pkg/__init__.py', 'pkg/_speed.pyx', 'pkg/_speed.pxd', 'pkg/_plus.pyx', 'pkg/_kept.pyx', 'pkg/_kept.c', 'tests/test_speed.py'];
    const script = 'from setuptools import setup, Extension\nsetup(ext_modules=[Extension("pkg._speed", ["pkg/_speed.c"]), Extension("pkg._plus", ["pkg/_plus.cpp"]), Extension("pkg._kept", ["pkg/_kept.c"])])\n';
    const profile = deriveProfile({ ...listing(files), setupScript: script });
    // Before, setuptools was given pkg/_speed.c, which no checkout holds: the build failed and tests that import it did not collect.
    expect(profile.install[0]?.split('\n')[1]).toMatch(
      /^\/usr\/bin\/python3 -m cython -3 -I pkg -o pkg\/_speed\.c pkg\/_speed\.pyx && \/usr\/bin\/python3 -m cython -3 --cplus -I pkg -o pkg\/_plus\.cpp pkg\/_plus\.pyx && \{ \/usr\/bin\/python3 setup\.py build_ext --inplace \|\| /,
    );
    expect(profile.aptPackages).toContain('cython3');
    expect(profile.provenance['install']).toContain('Cython makes pkg/_speed.c, pkg/_plus.cpp, which setup.py names and the checkout lacks');
    // A setup.py that cythonizes the .pyx itself, or names it, needs no step of envgen's.
    const cythonized = deriveProfile({ ...listing(files), setupScript: 'from setuptools import setup\nfrom Cython.Build import cythonize\nsetup(ext_modules=cythonize(["pkg/_speed.pyx"]))\n' });
    expect(cythonized.install[0]).not.toContain('-m cython');
  });

  it('sets PYTHONPATH=src for a src layout and takes single-file suites', () => {
    const profile = deriveProfile(listing(['src/text_unidecode/__init__.py', 'test_unidecode.py']));
    expect(profile.env).toEqual({ PYTHONHASHSEED: '0', PYTHONPATH: 'src' });
    expect(profile.provenance['env.PYTHONPATH']).toBe('src layout (src/text_unidecode/__init__.py)');
    expect(profile.testArgs).toEqual(['test_unidecode.py']);
    expect(deriveProfile(listing(['jsonpatch.py', 'tests.py', 'bin/jsonpatch'])).testArgs).toEqual(['tests.py']);
    // pytest would not collect tests/test.py from the tests directory: the file itself is named.
    expect(deriveProfile(listing(['src/decorator/__init__.py', 'tests/test.py', 'tests/documentation.py'])).testArgs).toEqual(['tests/test.py']);
    // Beside other test modules of its directory it is matched by name, so pytest collects it once.
    expect(deriveProfile(listing(['taggit/models.py', 'tests/tests.py', 'tests/test_admin.py', 'tests/settings.py'])).testArgs).toEqual(['-o', 'python_files=test_*.py *_test.py tests/tests.py', 'tests']);
  });

  it('uses configured testpaths and python_files', () => {
    const profile = deriveProfile(
      listing(['pkg/__init__.py', 'pkg/check_a.py', 'suite/check_b.py', 'other/test_c.py'], [{ path: 'pytest.ini', text: '[pytest]\ntestpaths = suite missing\npython_files = check_*.py\n' }]),
    );
    expect(profile.testArgs).toEqual([]);
    expect(profile.provenance['testArgs']).toBe('none: pytest applies testpaths from pytest.ini [pytest] itself');
    expect(profile.testFiles).toEqual(['pkg/check_a.py', 'suite/check_b.py']);
    expect(profile.sourceFiles).toEqual(['other/test_c.py', 'pkg/__init__.py']);
  });

  it('leaves discovery to pytest when addopts enable doctests', () => {
    const profile = deriveProfile(listing(['ordered_set/__init__.py', 'test/test_ordered_set.py', 'README.md'], [{ path: 'pytest.ini', text: '[pytest]\naddopts = --doctest-modules --doctest-glob=README.md\n' }]));
    expect(profile.testArgs).toEqual([]);
    expect(profile.provenance['testArgs']).toContain('enable doctests');
  });

  it('neutralizes plugin options in addopts', () => {
    const profile = deriveProfile(listing(['a.py', 'tests/test_a.py'], [{ path: 'pyproject.toml', text: '[tool.pytest.ini_options]\naddopts = "-ra --cov=a -n 4"\ntestpaths = ["tests"]\n' }]));
    expect(profile.testArgs).toEqual(['-o', 'addopts=-ra']);
    expect(profile.provenance['testArgs.addopts']).toContain('--cov=a -n 4');
  });

  it("keeps -p loads of pytest's own plugins and of the project's modules, drops third-party ones", () => {
    const config = { path: 'setup.cfg', text: '[tool:pytest]\naddopts = -p tests.plugin -p pytester -p no:randomly -p pytest_cov -psrcplug --strict-markers\n' };
    const profile = deriveProfile(listing(['a.py', 'tests/__init__.py', 'tests/plugin.py', 'tests/test_a.py', 'src/srcplug.py', 'src/b/__init__.py'], [config]));
    expect(profile.testArgs).toEqual(['-o', 'addopts=-p tests.plugin -p pytester -p no:randomly -psrcplug --strict-markers', 'tests']);
    expect(profile.provenance['testArgs.addopts']).toContain('-p pytest_cov');
  });

  it('applies overrides in order with provenance', () => {
    const profile = deriveProfile(listing(['src/m/__init__.py', 'checks/verify.py']), {
      aptPackages: ['python3-yaml'],
      overrides: [
        { source: 'profile file a.json', values: { testGlobs: ['checks/*.py'], testArgs: ['checks'], env: { A: '1' } } },
        { source: 'profile file b.json', values: { deselect: ['checks/verify.py::test_net'], env: { A: '2' }, timeoutMs: 5000 } },
      ],
    });
    expect(profile.testFiles).toEqual(['checks/verify.py']);
    expect(profile.testArgs).toEqual(['checks']);
    expect(profile.env).toEqual({ PYTHONHASHSEED: '0', PYTHONPATH: 'src', A: '2' });
    expect(profile.deselect).toEqual(['checks/verify.py::test_net']);
    expect(profile.aptPackages).toEqual(['python3-pytest', 'python3-yaml']);
    expect(profile.provenance).toMatchObject({ testArgs: 'profile file a.json', 'env.A': 'profile file b.json', timeoutMs: 'profile file b.json', 'env.PYTHONPATH': 'src layout (src/m/__init__.py)' });
  });

  it('reports a repo without test modules', () => {
    try {
      deriveProfile(listing(['pkg/__init__.py', 'conftest.py', 'tests/__init__.py', 'docs/test_doc.py']));
      expect.unreachable();
    } catch (error) {
      expect(isEnvgenError(error, 'no-python-tests')).toBe(true);
      expect((error as Error).message).toContain('configs/profiles/<owner>__<name>.json');
    }
  });

  it("says why a project whose only tests are its docstrings' examples makes no bundles (jaraco.context: addopts=--doctest-modules, no test file)", () => {
    const config = { path: 'pytest.ini', text: '[pytest]\nnorecursedirs=dist build .tox .eggs\naddopts=--doctest-modules\n' };
    expect(() => deriveProfile(listing(['jaraco/context.py', 'docs/conf.py', 'pytest.ini'], [config]))).toThrow(
      /Its only tests are doctests: addopts in pytest\.ini \[pytest\] give --doctest-modules, which runs the examples in the docstrings of its 1 source module\(s\)\. envgen needs test files: a bundle's test_weaken\.diff edits only test files the tree holds/,
    );
  });
  it("runs a project whose only tests are doctests when a conftest.py above its modules can deselect the failing ones (jaraco.itertools)", () => {
    const config = { path: 'pytest.ini', text: '[pytest]\nnorecursedirs=dist build .tox .eggs\naddopts=--doctest-modules\n' };
    const profile = deriveProfile(listing(['conftest.py', 'jaraco/itertools.py', 'docs/conf.py', 'pytest.ini'], [config]));
    expect(profile.testArgs).toEqual([]);
    expect(profile.testFiles).toEqual(['conftest.py']);
    expect(profile.sourceFiles).toEqual(['jaraco/itertools.py']);
    expect(profile.provenance['doctestsOnly']).toContain('deselected from conftest.py');
  });

  it('refuses a doctest-only project when a source module has no conftest.py at or above it', () => {
    const config = { path: 'pytest.ini', text: '[pytest]\naddopts=--doctest-modules\n' };
    expect(() => deriveProfile(listing(['pkg/conftest.py', 'pkg/a.py', 'other.py', 'pytest.ini'], [config]))).toThrow(/no conftest\.py is at or above 1 of those modules/);
  });
});

describe('profileHash', () => {
  it('changes with settings that affect results, not with provenance or file lists', () => {
    const profile = deriveProfile(listing(['a.py', 'test_a.py']));
    const same = { ...profile, provenance: {}, sourceFiles: [], testFiles: ['x'] };
    expect(profileHash(same)).toBe(profileHash(profile));
    expect(profileHash({ ...profile, deselect: ['test_a.py::t'] })).not.toBe(profileHash(profile));
    expect(profileHash({ ...profile, env: { X: '1' } })).not.toBe(profileHash(profile));
    expect(profileHash(profile)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('tells a tree with its git submodules from one without (a baseline made while one could not be fetched is not reused)', () => {
    const profile = deriveProfile(listing(['a.py', 'test_a.py']));
    const withData = { ...profile, submodules: [{ path: 'tests/data', commit: 'a'.repeat(40) }] };
    expect(profileHash(withData)).not.toBe(profileHash(profile));
    expect(profileHash({ ...profile, submodules: [{ path: 'tests/data', commit: 'b'.repeat(40) }] })).not.toBe(profileHash(withData));
    // Without submodules, the hash every earlier baseline was cached under.
    expect(profileHash({ ...profile, submodules: [] })).toBe(profileHash(profile));
  });
});

describe('detectProfile', () => {
  const root = mkdtempSync(join(tmpdir(), 'envgen-profile-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text = ''): void => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };

  it('reads the tree and its config from disk, skipping virtualenvs', async () => {
    write('src/markupsafe/__init__.py', 'x = 1\n');
    write('tests/test_escape.py', 'def test_x(): pass\n');
    write('tests/conftest.py');
    write('env/pyvenv.cfg', 'home = /usr\n');
    write('env/lib/python3/site.py');
    write('setup.cfg', '[tool:pytest]\ntestpaths = tests\n');
    const profile = await detectProfile(root);
    expect(profile.testArgs).toEqual([]);
    expect(profile.env).toEqual({ PYTHONHASHSEED: '0', PYTHONPATH: 'src' });
    expect(profile.testFiles).toEqual(['tests/conftest.py', 'tests/test_escape.py']);
    expect(profile.sourceFiles).toEqual(['src/markupsafe/__init__.py']);
    expect(profile.provenance['testArgs']).toBe('none: pytest applies testpaths from setup.cfg [tool:pytest] itself');
  });
  it("names a unittest suite's modules python_files leaves out, unless the config sets python_files", async () => {
    await inTree(async (tree, put) => {
      put('peewee.py', 'x = 1\n');
      put('runtests.py', 'import unittest\nunittest.main(module="tests")\n');
      put('tests/__init__.py', 'from .models import *\n');
      put('tests/base.py', 'import unittest\n\n\nclass ModelTestCase(unittest.TestCase):\n    pass\n');
      put('tests/models.py', 'from .base import ModelTestCase\n\n\nclass TestModels(ModelTestCase):\n    def test_save(self):\n        pass\n');
      put('tests/test_utils.py', 'def test_x():\n    pass\n');
      const profile = await detectProfile(tree);
      // Matched by its path in python_files: named as a path beside the tests directory, pytest 7 would collect it twice.
      expect(profile.testArgs).toEqual(['-o', 'python_files=test_*.py *_test.py tests/models.py', 'tests']);
      expect(profile.provenance['testArgs']).toBe(
        'top-level entries holding test files + the unittest modules python_files leaves out (1: tests/models.py); files named otherwise in a directory named too, matched by their path in python_files so pytest collects each once (tests/models.py)',
      );
      // A module of another name is no match: playhouse/models.py is neither collected nor rewritten.
      put('playhouse/models.py', 'X = 1\n');
      expect((await detectProfile(tree)).testArgs).toEqual(['-o', 'python_files=test_*.py *_test.py tests/models.py', 'tests']);
      // One whose path ends the same way would be: the file is named as a path.
      put('vendored/tests/models.py', 'X = 1\n');
      expect((await detectProfile(tree)).testArgs).toEqual(['tests', 'tests/models.py']);
      put('setup.cfg', '[tool:pytest]\npython_files = test_*.py\n');
      expect((await detectProfile(tree)).testArgs).toEqual(['tests']);
    });
  });

  it("names a single-file suite to pytest only where it defines tests, not a scratch script (wireservice/leather's test.py)", async () => {
    await inTree(async (tree, put) => {
      put('leather/__init__.py', 'x = 1\n');
      put('test.py', "import leather\n\nchart = leather.Chart()\nchart.to_svg('test.svg')\n");
      put('tests/test_chart.py', 'def test_x():\n    pass\n');
      const profile = await detectProfile(tree);
      expect(profile.testArgs).toEqual(['tests']);
      expect(profile.provenance['testArgs']).toBe("top-level entries holding test files; not named: test.py (no test defined: a script, which pytest's python_files leaves out too)");
      put('test.py', 'import unittest\n\n\nclass ChartTest(unittest.TestCase):\n    def test_draw(self):\n        pass\n');
      expect((await detectProfile(tree)).testArgs).toEqual(['test.py', 'tests']);
    });
  });

  it('takes a package named build or dist for source, and build output for none (pypa/build: src/build)', async () => {
    await inTree(async (tree, put) => {
      put('pyproject.toml', '[project]\nname = "build"\nversion = "1.0"\n');
      put('src/build/__init__.py', 'x = 1\n');
      put('src/build/_compat/__init__.py');
      put('src/build/dist/__init__.py');
      put('build/lib/build/__init__.py', 'x = 1\n');
      put('dist/build-1.0/src/build/__init__.py', 'x = 1\n');
      put('tests/test_build.py', 'def test_x(): pass\n');
      const profile = await detectProfile(tree);
      expect(profile.sourceFiles).toEqual(['src/build/__init__.py', 'src/build/_compat/__init__.py', 'src/build/dist/__init__.py']);
      expect(profile.env['PYTHONPATH']).toBe('src');
      expect(deriveProfile(listing(['src/build/__init__.py', 'build/lib/build/__init__.py', 'tests/test_build.py'])).sourceFiles).toEqual(['src/build/__init__.py']);
    });
  });

  it("takes a module python_files names for its doctests for source, unless it defines tests (check-manifest: python_files = tests.py check_manifest.py)", async () => {
    await inTree(async (tree, put) => {
      put('setup.cfg', '[tool:pytest]\npython_files = tests.py check_manifest.py helpers.py\naddopts = --doctest-modules\n');
      put('check_manifest.py', 'def strip(name):\n    """\n    >>> strip("a ")\n    \'a\'\n    """\n    return name.strip()\n');
      put('helpers.py', 'import unittest\n\n\nclass Base(unittest.TestCase):\n    pass\n');
      put('tests.py', 'from check_manifest import strip\n\n\ndef test_strip():\n    assert strip("a ") == "a"\n');
      const profile = await detectProfile(tree);
      expect(profile.sourceFiles).toEqual(['check_manifest.py']);
      expect(profile.testFiles).toEqual(['helpers.py', 'tests.py']);
      expect(profile.testGlobs).not.toContain('check_manifest.py');
      expect(profile.provenance['testGlobs']).toContain('check_manifest.py but for the library modules it matches');
      // Tests named otherwise (python_functions) cannot be told from the text: the config's word stands.
      put('setup.cfg', '[tool:pytest]\npython_files = tests.py check_manifest.py\npython_functions = check_*\n');
      expect((await detectProfile(tree)).testFiles).toEqual(['check_manifest.py', 'tests.py']);
    });
  });

  it('takes the modules a broad python_files pattern matches for source where another module imports them, though they define tests beside their code (patsy: python_files = *.py)', async () => {
    await inTree(async (tree, put) => {
      put('setup.cfg', '[tool:pytest]\npython_files = *.py\ntestpaths = geo\n');
      // An import's parenthesized names may span lines.
      put('geo/__init__.py', 'from geo.shapes import area\nfrom . import (  # the rest\n    angles,\n)\n');
      put('geo/angles.py', 'def right():\n    return 90\n\n\ndef test_right():\n    assert right() == 90\n');
      put('geo/shapes.py', 'from .util import square\n\n\ndef area(side):\n    return square(side)\n\n\ndef test_area():\n    assert area(2) == 4\n');
      put('geo/util.py', 'def square(x):\n    return x * x\n\n\ndef test_square():\n    assert square(3) == 9\n');
      put('geo/checks.py', 'from geo import area\n\n\ndef check(side):\n    return area(side)\n\n\ndef test_check():\n    assert check(1) == 1\n');
      put('geo/test_more.py', 'from geo import area\n\n\ndef test_more():\n    assert area(0) == 0\n');
      put('geo/tests/helpers.py', 'def test_helper():\n    pass\n');
      const profile = await detectProfile(tree);
      expect(profile.sourceFiles).toEqual(['geo/__init__.py', 'geo/angles.py', 'geo/shapes.py', 'geo/util.py']);
      // A module nothing imports that defines tests is a test module, as are the conventional ones.
      expect(profile.testFiles).toEqual(['geo/checks.py', 'geo/test_more.py', 'geo/tests/helpers.py']);
      expect(profile.provenance['testGlobs']).toContain('*.py but for the library modules it matches');
    });
  });

  it("takes a module named like a test for source where the library imports it (bandit's bandit/core/test_set.py)", async () => {
    await inTree(async (tree, put) => {
      put('scan/__init__.py', 'from scan.core import test_set  # noqa\nfrom scan.core.test_properties import *  # noqa\n');
      put('scan/core/__init__.py');
      put('scan/core/test_set.py', 'class TestSet:\n    def tests_for(self, node):\n        return []\n');
      put('scan/core/test_properties.py', 'def test_id(value):\n    def wrapper(func):\n        func.test_id = value\n        return func\n\n    return wrapper\n');
      put('scan/plugins/asserts.py', 'from scan.core import test_properties as test\n\n\n@test.test_id("B101")\ndef asserts(node):\n    return node\n');
      // Beside the code and imported by nothing but tests: a test module.
      put('scan/util_test.py', 'from scan.helpers import test_helper\n\n\ndef test_util():\n    assert test_helper()\n');
      put('scan/helpers/test_helper.py', 'def test_helper():\n    return True\n');
      put('tests/test_scan.py', 'import scan\n\n\ndef test_scan():\n    assert scan.test_set.TestSet().tests_for(None) == []\n');
      put('tests/test_more.py', 'def test_more():\n    pass\n');
      // A single-file suite a script at the top imports is no library's.
      put('test_cli.py', 'def test_cli():\n    pass\n');
      put('runtests.py', 'import unittest\n\nimport test_cli\n\nunittest.main(test_cli)\n');
      const profile = await detectProfile(tree);
      expect(profile.sourceFiles).toEqual(['runtests.py', 'scan/__init__.py', 'scan/core/__init__.py', 'scan/core/test_properties.py', 'scan/core/test_set.py', 'scan/plugins/asserts.py']);
      expect(profile.testFiles).toEqual(['scan/helpers/test_helper.py', 'scan/util_test.py', 'test_cli.py', 'tests/test_more.py', 'tests/test_scan.py']);
      // The files the narrowed entry matches that envgen's conventions match anyway are left to them.
      expect(profile.testGlobs).toContain('scan/helpers/test_helper.py');
      expect(profile.testGlobs).not.toContain('tests/test_scan.py');
      expect(profile.provenance['testGlobs']).toContain('pytest default python_files, test_*.py but for the library modules it matches');
    });
  });

  it('tests the nested project holding the most tests: a monorepo, or a package in a subdirectory', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'envgen-monorepo-'));
    const put = (rel: string, text = ''): void => {
      mkdirSync(dirname(join(repo, rel)), { recursive: true });
      writeFileSync(join(repo, rel), text);
    };
    try {
      put('pyproject.toml', '[tool.ruff]\nline-length = 100\n');
      put('libs/core/pyproject.toml', '[project]\nname = "core"\nversion = "1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\naddopts = "--cov=core -q"\n');
      put('libs/core/src/core/__init__.py', 'x = 1\n');
      put('libs/core/tests/test_a.py');
      put('libs/core/tests/test_b.py');
      put('libs/core/tests/fixtures/sample/setup.py', 'from setuptools import setup\nsetup(name="sample")\n');
      put('libs/core/tests/fixtures/sample/test_sample.py');
      put('libs/cli/setup.py', 'from setuptools import setup\nsetup(name="cli")\n');
      put('libs/cli/cli/__init__.py');
      put('libs/cli/tests/test_a.py');
      put('libs/core/requirements-test.txt', 'freezegun\ncli>=1\nnot-in-debian-xyz\n');
      put('requirements-dev.txt', 'pyyaml\n');
      put('libs/cli/requirements-dev.txt', 'requests\n');
      const profile = await detectProfile(repo);
      // What the project and the repo's root declare; not what the other projects do.
      expect(profile.aptPackages).toEqual(['python3-freezegun', 'python3-pytest', 'python3-yaml']);
      // A sibling project it needs (libs/cli's setup.py names it "cli") is the repo's own, not a missing package.
      expect(profile.provenance['aptPackages']).toMatch(/; not packaged in Debian: not-in-debian-xyz \+ python3-pytest$/);
      expect(profile.testArgs).toEqual(['-o', 'addopts=-q', 'libs/core/tests']);
      expect(profile.env).toEqual({ PYTHONHASHSEED: '0', PYTHONPATH: 'libs/core/src:libs/core:libs/cli' });
      expect(profile.sourceFiles).toEqual(['libs/core/src/core/__init__.py']);
      expect(profile.testFiles).toEqual(['libs/core/tests/fixtures/sample/setup.py', 'libs/core/tests/fixtures/sample/test_sample.py', 'libs/core/tests/test_a.py', 'libs/core/tests/test_b.py']);
      expect(profile.provenance['project']).toMatch(/^libs\/core: .*holds the most test modules \(3\), before libs\/cli \(1\)/);
      expect(profile.provenance['testArgs.addopts']).toBe("addopts from libs/core/pyproject.toml [tool.pytest.ini_options] without the options envgen's runs leave out (plugins', stopping at a failure): --cov=core");
      // A profile's "project" picks another; without a pytest config pytest stops looking for conftests there.
      const cli = await detectProfile(repo, { overrides: [{ source: 'profile file p.json', values: { project: 'libs/cli' } }] });
      expect(cli.testArgs).toEqual(['--confcutdir', 'libs/cli', 'libs/cli/tests']);
      expect(cli.env['PYTHONPATH']).toBe('libs/cli:libs/core/src');
      expect(cli.provenance['project']).toBe('libs/cli: from profile file p.json');
      await expect(detectProfile(repo, { overrides: [{ source: 'p.json', values: { project: 'libs/none' } }] })).rejects.toThrow(/"project" names libs\/none/);
      // As many test modules of the root's own keep the root (its developers install the nested
      // projects beside it, as a workspace does); fewer do not.
      put('tests/test_smoke.py');
      expect((await detectProfile(repo)).provenance['project']).toMatch(/^libs\/core: .*before the root \(1\), libs\/cli \(1\)/);
      put('tests/test_more.py');
      put('tests/test_most.py');
      // A directory whose pyproject.toml only declares dependencies (feedparser's requirements/docs) is no project of the workspace.
      put('requirements/docs/pyproject.toml', '[tool.poetry]\npackage-mode = false\n');
      const root = await detectProfile(repo);
      expect(root.provenance['project']).toBeUndefined();
      expect(root.env['PYTHONPATH']).toBe('libs/cli:libs/core/src');
      expect(root.testArgs).toEqual(['libs', 'tests']);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('chooses the root when its config runs pytest, and never a sample project of the tests', () => {
    const files = ['python/setup.py', 'python/pkg/__init__.py', 'python/tests/test_pkg.py', 'js/index.js'];
    expect(chooseProject(files, false)).toMatchObject({ dir: 'python' });
    expect(chooseProject(files, true)).toEqual({ dir: '', why: '' });
    expect(chooseProject(['pkg/__init__.py', 'tests/test_pkg.py', 'tests/data/proj/setup.py', 'tests/data/proj/test_x.py'], false)).toEqual({ dir: '', why: '' });
    // A project the tests build or install (a plugin under test, a package to import) is theirs, whatever its name.
    expect(chooseProject(['pkg/__init__.py', 'tests/test_pkg.py', 'tests/myplugin/setup.py', 'tests/myplugin/test_a.py', 'tests/myplugin/test_b.py', 'testing/proj/pyproject.toml'], false)).toEqual({ dir: '', why: '' });
    // A config at the root runs the projects' tests together unless two would be one module (each project's tests/ a package).
    const packages = ['api', 'sdk', 'sdk'].flatMap((name, index) => [`${name}/pyproject.toml`, `${name}/src/${name}/__init__.py`, `${name}/tests/__init__.py`, `${name}/tests/conftest.py`, `${name}/tests/test_${index}.py`]);
    expect(chooseProject(packages, true)).toMatchObject({ dir: 'sdk', why: expect.stringContaining('two are module tests.conftest') });
    const flat = ['api', 'sdk'].flatMap((name) => [`${name}/setup.py`, `${name}/${name}/__init__.py`, `${name}/tests/conftest.py`, `${name}/tests/test_${name}.py`]);
    expect(chooseProject(flat, true)).toEqual({ dir: '', why: '' });
    expect(chooseProject(flat, false)).toMatchObject({ dir: 'api' });
  });
});
