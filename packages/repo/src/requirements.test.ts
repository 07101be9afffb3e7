import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deriveProfile } from './profile.js';
import { linuxEnvironment } from './markers.js';
import { DH_PYTHON_MAP, distributionsProviding, normalizeDistribution, ownExtras, readDebianMap, readDeclaredDependencies, requirementMinimum, requirementName } from './requirements.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tree(files: Record<string, string>): { root: string; files: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'envgen-requirements-'));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return { root, files: Object.keys(files) };
}

const MAP = new Map([
  ['pyyaml', 'python3-yaml'],
  ['freezegun', 'python3-freezegun'],
  ['pytest-cov', 'python3-pytest-cov'],
  ['attrs', 'python3-attr'],
  ['python-dateutil', 'python3-dateutil'],
  ['hypothesis', 'python3-hypothesis'],
]);

describe('requirementName', () => {
  it('names the distribution of a requirement, and nothing for options, paths and URLs', () => {
    expect(requirementName('PyYAML[extra]>=5.1; python_version > "3.6"  # yaml')).toBe('PyYAML');
    expect(requirementName('python_dateutil==2.8')).toBe('python_dateutil');
    expect(requirementName('-r base.txt')).toBeNull();
    expect(requirementName('-e .')).toBeNull();
    expect(requirementName('./vendor/thing')).toBeNull();
    expect(requirementName('https://example.invalid/x.whl')).toBeNull();
    expect(requirementName('# comment')).toBeNull();
    expect(normalizeDistribution('Python_Dateutil.Extra')).toBe('python-dateutil-extra');
  });
});

describe('distributionsProviding', () => {
  it('names the distribution named as the module or its package, else those below a namespace package', () => {
    const declared = ['jaraco-functools', 'jaraco-test', 'pytest-relaxed'];
    expect(distributionsProviding('pytest_relaxed', declared)).toEqual(['pytest-relaxed']);
    expect(distributionsProviding('jaraco', declared)).toEqual(['jaraco-functools', 'jaraco-test']);
    expect(distributionsProviding('yaml', declared)).toEqual([]);
  });
});

describe('readDeclaredDependencies', () => {
  it("maps runtime and test dependencies to Debian packages, names the unpackaged ones and leaves out tooling and the project itself", async () => {
    const { root, files } = tree({
      'pyproject.toml': `[project]
name = "demo"
dependencies = ["attrs>=21", "python-dateutil"]

[project.optional-dependencies]
tests = ["freezegun", "pytest>=7", "pytest-lazy-fixtures", "demo[extra]"]
docs = ["sphinx", "furo"]

[dependency-groups]
dev = ["mypy", "ruff", "hypothesis"]
`,
      'requirements/tests.txt': '-r base.txt\npytest-cov\n',
      'requirements/base.txt': 'PyYAML\n',
      'requirements/docs.txt': 'mkdocs\n',
      'tox.ini': '[testenv]\ndeps =\n    -r{toxinidir}/requirements/tests.txt\n',
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-attr', 'python3-dateutil', 'python3-freezegun', 'python3-hypothesis', 'python3-pytest-cov', 'python3-yaml'],
      unpackaged: ['pytest-lazy-fixtures'],
      sources: [
        'pyproject.toml [project] dependencies',
        'pyproject.toml [project.optional-dependencies] tests',
        'pyproject.toml [dependency-groups] dev',
        'requirements/base.txt',
        'requirements/tests.txt',
      ],
      minimums: [{ package: 'python3-attr', version: '21', requirement: 'attrs>=21' }],
    });
  });

  it("reads the test environments of hatch (with the extras they install), pdm's and uv's development dependencies (before, none: soupsieve's bs4)", async () => {
    const { root, files } = tree({
      'pyproject.toml': `[project]
name = "demo"

[project.optional-dependencies]
yaml = ["PyYAML"]

[tool.hatch.envs.dev]
dependencies = ["pytest", "ruff", "python-dateutil"]
features = ["yaml"]

[tool.hatch.envs.docs]
dependencies = ["sphinx", "attrs"]

[tool.hatch.envs.default]
extra-dependencies = ["freezegun"]

[tool.pdm.dev-dependencies]
test = ["hypothesis"]
lint = ["flake8"]

[tool.uv]
dev-dependencies = ["pytest-cov"]
`,
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-dateutil', 'python3-freezegun', 'python3-hypothesis', 'python3-pytest-cov', 'python3-yaml'],
      unpackaged: [],
      sources: [
        'pyproject.toml [project.optional-dependencies] yaml',
        'pyproject.toml [tool.hatch.envs.dev]',
        'pyproject.toml [tool.hatch.envs.default]',
        'pyproject.toml [tool.pdm.dev-dependencies] test',
        'pyproject.toml [tool.uv] dev-dependencies',
      ],
    });
  });

  it("reads setup.cfg's install_requires and test extras, and top-level requirements files for tests", async () => {
    const { root, files } = tree({
      'setup.cfg': '[metadata]\nname = old\n\n[options]\ninstall_requires =\n    attrs\n\n[options.extras_require]\ntesting =\n    freezegun\n',
      'requirements-dev.txt': 'hypothesis\nblack\n',
      'requirements-docs.txt': 'sphinx-rtd-theme\n',
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-attr', 'python3-freezegun', 'python3-hypothesis'],
      unpackaged: [],
      sources: ['setup.cfg install_requires', 'setup.cfg extras_require testing', 'requirements-dev.txt'],
    });
  });

  it("reads a pbr project's extras from setup.cfg's [extras], those tox installs for the tests (bandit: extras = yaml baseline)", async () => {
    const { root, files } = tree({
      'setup.py': 'import setuptools\n\nsetuptools.setup(setup_requires=["pbr>=2.0.0"], pbr=True)\n',
      'setup.cfg': '[metadata]\nname = scanner\n\n[extras]\nyaml =\n    PyYAML\nbaseline =\n    python-dateutil>=2.8\ndocs =\n    sphinx\n',
      'tox.ini': '[testenv]\nextras =\n    yaml\n    baseline\ncommands =\n    stestr run {posargs}\n',
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-dateutil', 'python3-yaml'],
      unpackaged: [],
      sources: ['setup.cfg [extras] yaml', 'setup.cfg [extras] baseline'],
      minimums: [{ package: 'python3-dateutil', requirement: 'python-dateutil>=2.8', version: '2.8' }],
    });
  });

  it('counts the extras the requirements files install the project with as test groups, whatever their names', async () => {
    const { root, files } = tree({
      'pyproject.toml': '[project]\nname = "demo"\n\n[project.optional-dependencies]\nall = ["freezegun"]\nyaml = ["PyYAML"]\ndocs = ["sphinx"]\n',
      'requirements/dev.txt': '-e ..[all, yaml]\nhypothesis\n',
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-freezegun', 'python3-hypothesis', 'python3-yaml'],
      unpackaged: [],
      sources: ['pyproject.toml [project.optional-dependencies] all', 'pyproject.toml [project.optional-dependencies] yaml', 'requirements/dev.txt'],
    });
    expect(ownExtras('.[test]')).toEqual(['test']);
    expect(ownExtras('--editable=.[tests,docs]')).toEqual(['tests', 'docs']);
    expect(ownExtras('{toxinidir}[dev]')).toEqual(['dev']);
    expect(ownExtras('requests[socks]')).toEqual([]);
    expect(ownExtras('-e .')).toEqual([]);
  });

  it("reads setup.py's requirements from its syntax: literals, names the script binds (and adds to), sums; tox's extras count as test groups", async () => {
    const { root, files } = tree({
      'setup.py': `import sys
from setuptools import setup

install_requires = ["attrs>=21", "PyYAML"]
if sys.version_info < (3, 11):
    install_requires += ["python-dateutil; python_version < '3.11'"]

tests_require = ("pytest>=7", "pytest-cov")
extras = {"tests": tests_require + ["hypothesis"], "docs": ["sphinx-rtd-theme"], "all": ["freezegun"]}


def computed():
    install_requires = ["not-declared"]
    return install_requires


if __name__ == "__main__":
    setup(
        name="demo",
        install_requires=install_requires,
        extras_require=extras,
        setup_requires=open("requirements-build.in").read().splitlines(),
    )
`,
      'tox.ini': '[testenv]\nextras =\n    all\ncommands = pytest\n',
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-attr', 'python3-dateutil', 'python3-freezegun', 'python3-hypothesis', 'python3-pytest-cov', 'python3-yaml'],
      unpackaged: [],
      sources: ['setup.py install_requires', 'setup.py extras_require tests', 'setup.py extras_require all'],
      minimums: [{ package: 'python3-attr', version: '21', requirement: 'attrs>=21' }],
    });
  });

  it("reads extras keyed with setuptools' markers: a key with no name holds required dependencies (nvbn/thefuck's `':python_version>\"2.7\"'`)", async () => {
    const { root, files } = tree({
      'setup.py': 'from setuptools import setup\n\nsetup(name="x", extras_require={\':python_version>"2.7"\': ["pyyaml>=5"], \'testing:sys_platform!="win32"\': ["freezegun"], ":sys_platform==\'win32\'": ["attrs"], "docs": ["hypothesis"]})\n',
    });
    // A marker may leave a requirement out on this Python: no minimum is asked of `pyyaml>=5`.
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-attr', 'python3-freezegun', 'python3-yaml'],
      unpackaged: [],
      sources: ['setup.py extras_require :python_version>"2.7"', 'setup.py extras_require testing:sys_platform!="win32"', "setup.py extras_require :sys_platform=='win32'"],
    });
  });

  it('leaves out requirements whose marker does not hold where the tests run, and takes the bounds of those whose marker does', async () => {
    const { root, files } = tree({
      'setup.py': 'from setuptools import setup\n\nsetup(name="x", extras_require={\':python_version>"2.7"\': ["pyyaml>=5"], \'testing:sys_platform!="win32"\': ["freezegun"], ":sys_platform==\'win32\'": ["attrs"], ":python_version<\'3.4\'": ["pathlib2"], "tests": ["hypothesis; extra == \'tests\'"]})\n',
    });
    const linux = linuxEnvironment('3.11.2');
    expect(await readDeclaredDependencies(root, files, MAP, [], linux)).toEqual({
      packages: ['python3-freezegun', 'python3-hypothesis', 'python3-yaml'],
      unpackaged: [],
      sources: ['setup.py extras_require :python_version>"2.7"', 'setup.py extras_require testing:sys_platform!="win32"', 'setup.py extras_require tests'],
      minimums: [{ package: 'python3-yaml', version: '5', requirement: 'pyyaml>=5' }],
    });
    expect(requirementMinimum('freezegun>=1.2; python_version < "3.12"', linux)).toBe('1.2');
    expect(requirementMinimum('freezegun>=1.2; extra == "tests"', linux)).toBeNull();
  });

  it("reads tox's deps from pyproject's legacy_tox_ini, following {[section]deps} references", async () => {
    const legacy = '[core]\ndeps=\n    pytest-cov\n    hypothesis\n\n[testenv]\ndeps=\n    {[core]deps}\n    freezegun\n';
    const { root, files } = tree({ 'pyproject.toml': `[project]\nname = "x"\n\n[tool.tox]\nlegacy_tox_ini = """\n${legacy}"""\n` });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-freezegun', 'python3-hypothesis', 'python3-pytest-cov'],
      unpackaged: [],
      sources: ['pyproject.toml [tool.tox] legacy_tox_ini [testenv] deps'],
    });
  });

  it("reads the package of a tox deps line a factor conditions (dj32: Django>=3.2), not the factor", async () => {
    const { root, files } = tree({ 'tox.ini': '[testenv]\ndeps =\n    dj32: hypothesis>=6,<7\n    py{38,39}-dj42: hypothesis\n    !latest: freezegun\n    {py38}: pytest-cov\n' });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-freezegun', 'python3-hypothesis', 'python3-pytest-cov'],
      unpackaged: [],
      sources: ['tox.ini [testenv] deps'],
      minimums: [{ package: 'python3-hypothesis', version: '6', requirement: 'hypothesis>=6' }],
    });
  });

  it("reads the deps of tox's named sections that run pytest, and requirement files one directory per environment (before, none: feedparser's responses)", async () => {
    const toxIni = [
      '[testenv]\ncommands = python -c "raise SystemExit(1)"\n',
      '[testenv:test-py{3.11,3.12}{-chardet,}]\ndeps =\n    -r requirements/test/requirements.txt\n    chardet: freezegun\ncommands =\n    coverage run -m pytest {posargs:}\n',
      '[testenv:docs]\ndeps = -r requirements/docs/requirements.txt\ncommands = sphinx-build docs out\n',
      '[testenv:lint]\ndeps = attrs\ncommands = flake8\n',
    ].join('\n');
    const { root, files } = tree({
      'tox.ini': toxIni,
      'requirements/test/requirements.txt': 'hypothesis==6.1 ; python_version >= "3.10"\n',
      'requirements/docs/requirements.txt': 'pyyaml==6\n',
    });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-freezegun', 'python3-hypothesis'],
      unpackaged: [],
      sources: ['tox.ini [testenv:test-py{3.11,3.12}{-chardet,}] deps', 'requirements/test/requirements.txt'],
    });
    // Without tox, the environment's directory names the file's purpose.
    const alone = tree({ 'requirements/test/requirements.txt': 'hypothesis\n', 'requirements/docs/requirements.txt': 'pyyaml\n' });
    expect((await readDeclaredDependencies(alone.root, alone.files, MAP))?.packages).toEqual(['python3-hypothesis']);
  });

  it('puts in the dependency groups a test group includes, and the extras the tests install the project with by its name (before, none: environs, dj-database-url)', async () => {
    const pyproject = [
      '[project]\nname = "Env_Kit"\n',
      '[project.optional-dependencies]\ndjango = ["python-dateutil"]\nyaml = ["pyyaml"]\ntests = ["env-kit[yaml]"]\ndocs = ["attrs"]\n',
      '[dependency-groups]\nfreeze = ["freezegun"]\ntests = [{ include-group = "freeze" }, "env_kit[django]", "pytest"]\ndev = [{ include-group = "tests" }, { include-group = "dev" }]\n',
    ].join('\n');
    const { root, files } = tree({ 'pyproject.toml': pyproject });
    expect(await readDeclaredDependencies(root, files, MAP)).toEqual({
      packages: ['python3-dateutil', 'python3-freezegun', 'python3-yaml'],
      unpackaged: [],
      sources: [
        'pyproject.toml [project.optional-dependencies] django',
        'pyproject.toml [project.optional-dependencies] tests',
        'pyproject.toml [project.optional-dependencies] yaml',
        'pyproject.toml [dependency-groups] tests',
        'pyproject.toml [dependency-groups] dev',
      ],
    });
  });

  it("keeps each package's highest declared lower bound, not pins, nor requirements a marker may leave out (davidhalter/jedi: parso>=0.8.6)", async () => {
    expect(requirementMinimum('parso>=0.8.6,<0.9.0')).toBe('0.8.6');
    expect(requirementMinimum('attrs ~= 23.1')).toBe('23.1');
    expect(requirementMinimum('hypothesis>=6.0rc1')).toBe('6.0~rc1');
    expect(requirementMinimum('pyyaml==6.0.3')).toBeNull();
    expect(requirementMinimum('freezegun>=1.2; python_version < "3.12"')).toBeNull();
    expect(requirementMinimum('pyyaml')).toBeNull();
    const { root, files } = tree({
      'setup.py': 'from setuptools import setup\n\nsetup(name="x", install_requires=["python-dateutil>=2.7", "pyyaml==6.0.3"], extras_require={"testing": ["python-dateutil>=2.8.1", "hypothesis>=6"]})\n',
    });
    expect((await readDeclaredDependencies(root, files, MAP))?.minimums).toEqual([
      { package: 'python3-dateutil', version: '2.8.1', requirement: 'python-dateutil>=2.8.1' },
      { package: 'python3-hypothesis', version: '6', requirement: 'hypothesis>=6' },
    ]);
  });

  it('is null when the project declares nothing beyond pytest and tooling', async () => {
    const { root, files } = tree({ 'pyproject.toml': '[project]\nname = "x"\n\n[project.optional-dependencies]\ntest = ["pytest"]\n' });
    expect(await readDeclaredDependencies(root, files, MAP)).toBeNull();
  });

  it("reads dh-python's own map (installed by scripts/setup.sh)", async () => {
    const debian = await readDebianMap(DH_PYTHON_MAP);
    expect(debian.get('pyyaml')).toBe('python3-yaml');
    expect(debian.get('pytest-cov')).toBe('python3-pytest-cov');
    expect(debian.get('beautifulsoup4')).toBe('python3-bs4');
    // Packages not named python3-* ship modules on python3's path too (mkdocs/mkdocs' `ghp-import` was named as one Debian lacks).
    expect(debian.get('ghp-import')).toBe('ghp-import');
    expect(debian.get('cython')).toBe('cython3');
  });
});

describe('deriveProfile with declared dependencies', () => {
  const files = ['x/__init__.py', 'tests/test_x.py'];
  const declared = { packages: ['python3-freezegun'], unpackaged: ['pytest-lazy-fixtures'], sources: ['pyproject.toml [project.optional-dependencies] tests'] };

  it("takes them as the repo's Debian packages, saying where they come from and which Debian lacks", () => {
    const profile = deriveProfile({ files, configFiles: [], declared });
    expect(profile.aptPackages).toEqual(['python3-freezegun', 'python3-pytest']);
    expect(profile.provenance['aptPackages']).toBe(
      "declared dependencies (pyproject.toml [project.optional-dependencies] tests) by dh-python's map; not packaged in Debian: pytest-lazy-fixtures + python3-pytest",
    );
    expect(profile.unpackaged).toEqual(['pytest-lazy-fixtures']);
  });

  it("keeps a Debian source's Build-Depends instead, and says when dh-python's map is missing", () => {
    expect(deriveProfile({ files, configFiles: [], declared }, { aptPackages: ['python3-yaml'] }).aptPackages).toEqual(['python3-pytest', 'python3-yaml']);
    const unmapped = deriveProfile({ files, configFiles: [], declared: 'unmapped' });
    expect(unmapped.aptPackages).toEqual(['python3-pytest']);
    expect(unmapped.provenance['aptPackages']).toContain('apt-get install dh-python');
  });
});
