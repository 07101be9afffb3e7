import { readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { compareDebianVersions } from './debian-version.js';
import { parseIni } from './ini.js';
import { markerHolds } from './markers.js';
import type { MarkerEnvironment } from './markers.js';
import { parsePyproject, readText, table as tableOrNull, usesPbr } from './packaging.js';
import type { Table } from './packaging.js';
import { readSetupRequirements } from './setup-script.js';
import type { RequiredVersion } from './types.js';

/** dh-python's map of distribution names to Debian packages (package dh-python). */
export const DH_PYTHON_MAP = '/usr/share/dh-python/dist/cpython3_fallback';

/** What a project declares it needs to run its tests, as Debian packages. */
export interface DeclaredDependencies {
  /** Debian packages of the declared distributions, sorted. */
  packages: string[];
  /** Declared distributions Debian does not package (by dh-python's map), sorted. */
  unpackaged: string[];
  /** Where they were declared (`pyproject.toml [project.optional-dependencies] test`, `requirements-dev.txt`). */
  sources: string[];
  /** The lowest versions the declarations accept, by Debian package (`parso>=0.8.6` → python3-parso), sorted by package; absent: none. */
  minimums?: RequiredVersion[];
}

// Groups of test and development requirements.
const TEST_GROUP = /^(tests?|testing|dev|develop|development|ci|check)$|test/i;
// Linters, type checkers, formatters, docs and release tooling: not needed to run the tests.
const TOOLING = /^(mypy|flake8.*|black|ruff|pylint|isort|pre-commit|tox|nox|twine|codespell|pyright|bandit|types-.*|.*-stubs|sphinx.*|furo|mkdocs.*|myst-parser|readme-renderer|check-manifest|bump.*|towncrier|setuptools.*|wheel|pip|build|hatch.*|flit.*|poetry.*|pdm.*|pytest)$/;

/** A distribution name as PEP 503 compares them. */
export function normalizeDistribution(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/**
 * The distributions of `declared` (PEP 503 names) that provide the module `module`: the one named
 * as the module or its top-level package is (`pytest_relaxed` → pytest-relaxed), or else those
 * named below a namespace package (`jaraco` → jaraco-test, for `jaraco.test`).
 */
export function distributionsProviding(module: string, declared: readonly string[]): string[] {
  const top = normalizeDistribution(module.split('.')[0] ?? '');
  const named = [normalizeDistribution(module), top].find((name) => declared.includes(name));
  return named !== undefined ? [named] : declared.filter((name) => name.startsWith(`${top}-`));
}

/** A requirement line without its comment, as its specification and its environment marker (`pyte>=0.8; python_version>"2.7"`). */
function splitRequirement(line: string): { spec: string; marker: string | undefined } {
  const [spec = '', marker] = line.replace(/(^|\s)#.*$/, '').split(';', 2);
  return { spec: spec.trim(), marker: marker?.trim() };
}

/** The distribution a requirement line names (`foo[bar]>=1; python_version>"3"` → `foo`), or null for options, paths and URLs. */
export function requirementName(line: string): string | null {
  const trimmed = line.replace(/(^|\s)#.*$/, '').trim();
  if (trimmed === '' || trimmed.startsWith('-') || /^[./]|:\/\//.test(trimmed)) return null;
  return /^([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(trimmed)?.[1] ?? null;
}

/** Of several lower bounds on one package, the highest, one per package, sorted by package. */
export function highestMinimums(minimums: Iterable<RequiredVersion>): RequiredVersion[] {
  const byPackage = new Map<string, RequiredVersion>();
  for (const minimum of minimums) {
    const known = byPackage.get(minimum.package);
    if (known === undefined || compareDebianVersions(minimum.version, known.version) > 0) byPackage.set(minimum.package, minimum);
  }
  return [...byPackage.values()].sort((a, b) => a.package.localeCompare(b.package));
}

/**
 * The lowest version a requirement line accepts, where it gives one with `>=`, `~=` or `>`
 * (`parso>=0.8.6,<0.9` → `0.8.6`), as Debian orders versions (a pre-release `2.0rc1` is
 * `2.0~rc1`). Null for pins (`==`, a lock file's), for none, and where an environment
 * marker may leave the requirement out (one that does not hold in `environment`, or cannot be told).
 */
export function requirementMinimum(line: string, environment?: MarkerEnvironment): string | null {
  const { spec: trimmed, marker } = splitRequirement(line);
  if (marker !== undefined && (environment === undefined || markerHolds(marker, environment) !== true)) return null;
  const bound = /(?:>=|~=|>)\s*v?([0-9][0-9A-Za-z.+!-]*)/.exec(trimmed)?.[1];
  return bound === undefined ? null : bound.replace(/\.?(a|b|rc|alpha|beta|c|pre|preview|dev)(?=\d*$|\d*\.)/, '~$1');
}

/**
 * An `extras_require` key in setuptools' marker syntax: the extra's name and its environment
 * marker (`test:python_version<"3"` → test; a key with no name, `:python_version>"2.7"`, holds
 * dependencies every install gets where the marker holds, as `install_requires` would).
 */
function splitExtraKey(key: string): { extra: string; marker: string | null } {
  const colon = key.indexOf(':');
  return colon < 0 ? { extra: key.trim(), marker: null } : { extra: key.slice(0, colon).trim(), marker: key.slice(colon + 1).trim() };
}

/** Requirement lines under an extra's marker, as a line of their own would give it (`pyte; python_version>"2.7"`). */
function withMarker(lines: readonly string[], marker: string | null): string[] {
  if (marker === null || marker === '') return [...lines];
  return lines.map((line) => {
    if (requirementName(line) === null) return line;
    const { spec, marker: own } = splitRequirement(line);
    return own === undefined ? `${spec}; ${marker}` : `${spec}; (${own}) and (${marker})`;
  });
}

/** The file a requirements line includes (`-r base.txt`, `--requirement=base.txt`). */
function includedFile(line: string): string | undefined {
  const include = /^-r\s*(\S+)|^--requirement[=\s]\s*(\S+)/.exec(line.trim());
  return include?.[1] ?? include?.[2];
}

/** A value of tox's config with its `{[section]key}` references put in (as tox substitutes them). */
function toxValue(ini: ReadonlyMap<string, ReadonlyMap<string, string>>, section: string, key: string, depth = 0): string {
  const value = ini.get(section)?.get(key) ?? '';
  if (depth > 5) return value;
  return value.replace(/\{\[([^\]]+)\]([^}\s]+)\}/g, (_, other: string, otherKey: string) => toxValue(ini, other, otherKey, depth + 1));
}

/**
 * tox's sections the tests run in: `[testenv]`, and each `[testenv:NAME]` whose commands (its
 * own, else `[testenv]`'s) run pytest (`[testenv:test-py{3.11,3.12}]` with `coverage run -m
 * pytest`), not those that lint, type-check, build or write docs.
 */
function toxTestSections(ini: ReadonlyMap<string, ReadonlyMap<string, string>>): string[] {
  const runsPytest = (section: string): boolean => /\bpy(\.)?test\b/.test(toxValue(ini, section, 'commands') || toxValue(ini, 'testenv', 'commands'));
  return ['testenv', ...[...ini.keys()].filter((section) => section.startsWith('testenv:') && runsPytest(section))];
}

/**
 * dh-python's map: normalized distribution name → the Debian package that ships it, whatever
 * the package is named (`python3-yaml`, and also `ghp-import`, `mkdocs`, `cython3`, whose
 * modules are on Debian's python3 path as well). Empty when dh-python is not installed.
 */
export async function readDebianMap(path = DH_PYTHON_MAP): Promise<Map<string, string>> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const map = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [name, deb] = line.trim().split(/\s+/);
    if (name && deb) map.set(normalizeDistribution(name), deb);
  }
  return map;
}

/**
 * A requirements file for running or testing the project: `requirements.txt`, a top-level
 * `*req*` file for tests, development or CI (`requirements-dev.txt`, `test-requirements.txt`),
 * such a file in a `requirements/` directory (`requirements/tests.txt`, `requirements/base.txt`),
 * or any in one of its directories for tests, development or CI (`requirements/test/requirements.txt`).
 */
function isRequirementFile(path: string): boolean {
  const parts = path.toLowerCase().split('/');
  const name = parts.at(-1) ?? '';
  if (!/\.(txt|in)$/.test(name)) return false;
  if (parts.length === 1) return /^requirements\.(txt|in)$/.test(name) || (name.includes('req') && /test|dev|ci/.test(name));
  if (!(parts[0] ?? '').startsWith('req')) return false;
  if (parts.length === 2) return /test|dev|ci|base|main|install|requirements/.test(name);
  // One directory per environment (`requirements/test/requirements.txt`).
  return parts.length === 3 && /test|dev|ci/.test(parts[1] ?? '');
}

const table = (value: unknown): Table => tableOrNull(value) ?? {};
const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);

/** The lines of requirements files, each once, in reading order, following `-r` includes that stay in the repo. */
async function readRequirementFiles(root: string, paths: readonly string[]): Promise<Array<[string, string[]]>> {
  const read: Array<[string, string[]]> = [];
  const seen = new Set<string>();
  const visit = async (path: string): Promise<void> => {
    const clean = normalize(path);
    if (seen.has(clean) || clean.startsWith('..')) return;
    seen.add(clean);
    const text = await readText(root, clean);
    if (text === null) return;
    const lines = text.split('\n');
    read.push([clean, lines]);
    for (const line of lines) {
      const target = includedFile(line);
      if (target !== undefined) await visit(join(dirname(clean), target));
    }
  };
  for (const path of paths) await visit(path);
  return read;
}

/** The extras a requirement line installs the project itself with (`-e .[test,docs]`, `..[dev]`, `{toxinidir}[tests]`), or none. */
export function ownExtras(line: string): string[] {
  const match = /^(?:-e\s+|--editable[=\s]\s*)?(?:\.{1,2}|\{toxinidir\})\/?\[([^\]]+)\]/.exec(line.trim());
  return extraNames(match?.[1] ?? '');
}

/** The names of a comma-separated list of extras (`test, docs`). */
function extraNames(list: string): string[] {
  return list.split(',').map((extra) => extra.trim()).filter((extra) => /^[A-Za-z0-9._-]+$/.test(extra));
}

/** The extras a requirement of the project itself names (`proj[django,yaml]` where `own` is proj), or none. */
function extrasOf(line: string, own: string | null): string[] {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*\[([^\]]+)\]/.exec(line.trim());
  if (own === null || match === null || normalizeDistribution(match[1] ?? '') !== normalizeDistribution(own)) return [];
  return extraNames(match[2] ?? '');
}

/** A PEP 735 dependency group's requirements, the groups it includes (`{ include-group = "django" }`) put in. */
function groupRequirements(groups: Table, name: string, seen = new Set<string>()): string[] {
  const key = Object.keys(groups).find((group) => normalizeDistribution(group) === normalizeDistribution(name));
  if (key === undefined || seen.has(key)) return [];
  seen.add(key);
  const list = groups[key];
  return (Array.isArray(list) ? list : []).flatMap((item): string[] => {
    if (typeof item === 'string') return [item];
    const included = table(item)['include-group'];
    return typeof included === 'string' ? groupRequirements(groups, included, seen) : [];
  });
}

/**
 * The distribution name the project at `root` gives itself: pyproject's `[project] name` or
 * Poetry's, setup.cfg's `[metadata] name`, else a literal `name=` of setup.py's `setup()`.
 */
export async function readDistributionName(root: string): Promise<string | null> {
  const pyproject = parsePyproject(await readText(root, 'pyproject.toml'));
  const name = table(pyproject['project'])['name'] ?? table(table(pyproject['tool'])['poetry'])['name'];
  if (typeof name === 'string') return name;
  const setupCfg = await readText(root, 'setup.cfg');
  const fromCfg = setupCfg === null ? undefined : parseIni(setupCfg).get('metadata')?.get('name');
  if (fromCfg) return fromCfg;
  const setupPy = await readText(root, 'setup.py');
  return (setupPy === null ? undefined : /\bsetup\s*\([^)]*?\bname\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]/s.exec(setupPy)?.[1]) ?? null;
}

/**
 * The distributions the project at `root` declares for running and testing it: pyproject's
 * `[project] dependencies`, its optional-dependency and dependency groups for tests and
 * development, Poetry's dependencies and groups, setup.cfg's `install_requires` and test
 * extras, setup.py's `install_requires`, `tests_require` and test extras (read from its
 * syntax, see {@link readSetupRequirements}), requirements files for tests and development
 * (following `-r`), and the deps of tox's sections the tests run in (in tox.ini or
 * pyproject's `[tool.tox] legacy_tox_ini`, `{[section]deps}` references followed). An extra
 * those sections install (`extras`), or those files install the project with (`-e .[all]`),
 * counts as a test group whatever its name. Mapped to Debian packages by dh-python's map.
 * Null when it declares none.
 *
 * @param files repo-relative paths of the tree's files
 * @param provided distributions the repo itself holds (the other projects of a monorepo), left out as the project's own name is
 */
export async function readDeclaredDependencies(
  root: string,
  files: readonly string[],
  debianMap: ReadonlyMap<string, string>,
  provided: readonly string[] = [],
  environment?: MarkerEnvironment,
): Promise<DeclaredDependencies | null> {
  const names = new Set<string>();
  const sources: string[] = [];
  /** The lower bounds declared (`parso>=0.8.6`), by normalized distribution. */
  const minimums: Array<[string, { version: string; requirement: string }]> = [];
  const declare = (source: string, lines: Iterable<string>) => {
    let any = false;
    for (const line of lines) {
      const name = requirementName(line);
      if (name === null) continue;
      // A requirement for other platforms or Pythons (`pywin32; sys_platform == "win32"`, `importlib-metadata; python_version < "3.8"`) is none here.
      const { marker } = splitRequirement(line);
      if (marker !== undefined && environment !== undefined && markerHolds(marker, environment) === false) continue;
      const normalized = normalizeDistribution(name);
      names.add(normalized);
      any = true;
      const minimum = requirementMinimum(line, environment);
      if (minimum !== null) minimums.push([normalized, { version: minimum, requirement: `${name}>=${minimum}` }]);
    }
    if (any) sources.push(source);
  };

  const pyproject = parsePyproject(await readText(root, 'pyproject.toml'));
  // tox's config: tox.ini, else pyproject's [tool.tox] legacy_tox_ini.
  const legacyTox = table(table(pyproject['tool'])['tox'])['legacy_tox_ini'];
  const toxFile = await readText(root, 'tox.ini');
  const toxIni = toxFile === null ? (typeof legacyTox === 'string' ? legacyTox : null) : toxFile;
  const tox = toxIni === null ? null : parseIni(toxIni);
  const toxSections = tox === null ? [] : toxTestSections(tox);
  const toxLines = (section: string, key: string): string => (tox === null ? '' : toxValue(tox, section, key));
  const toxExtras = new Set(toxSections.flatMap((section) => toxLines(section, 'extras').split(/[\s,]+/)).filter((extra) => /^[A-Za-z0-9._-]+$/.test(extra)));
  // A line of a factor's only (`dj32: Django>=3.2,<3.3`, `!latest: djangorestframework`) names its package after the condition.
  const toxDepsOf = (section: string): string[] => toxLines(section, 'deps').split('\n').map((line) => line.replace(/^\s*[\w{}.,!-]+:\s+/, ''));
  const toxDeps = toxSections.flatMap(toxDepsOf);
  const included = toxDeps.map((line) => includedFile(line)?.replace(/^\{toxinidir\}\/?/, '')).filter((path): path is string => path !== undefined);
  const requirements = await readRequirementFiles(root, [...files.filter(isRequirementFile).sort(), ...included]);
  // Hatch's environments where the tests run: its default one (`hatch run test`) and those named for tests or development.
  const hatchEnvs = Object.entries(table(table(table(pyproject['tool'])['hatch'])['envs'])).filter(([name]) => name === 'default' || TEST_GROUP.test(name));
  const own = await readDistributionName(root);
  const groups = table(pyproject['dependency-groups']);
  const testGroups = Object.keys(groups).filter((group) => TEST_GROUP.test(group)).map((group): [string, string[]] => [group, groupRequirements(groups, group)]);
  // Extras the tests' requirements install the project with (`-e .[test]`, `proj[django]`, a hatch environment's `features`) are test groups too.
  const installedExtras = new Set([
    ...[...toxDeps, ...requirements.flatMap(([, lines]) => lines), ...testGroups.flatMap(([, lines]) => lines)].flatMap((line) => [...ownExtras(line), ...extrasOf(line, own)]),
    ...hatchEnvs.flatMap(([, env]) => strings(table(env)['features'])),
  ]);
  const isTestGroup = (group: string): boolean => TEST_GROUP.test(group) || toxExtras.has(group) || installedExtras.has(group);

  const project = table(pyproject['project']);
  declare('pyproject.toml [project] dependencies', strings(project['dependencies']));
  const optional = table(project['optional-dependencies']);
  const testExtras = new Set(Object.keys(optional).filter(isTestGroup));
  // A set grows as it is walked: a test extra's own extras (`test = ["proj[django]"]`) join it.
  for (const extra of testExtras) for (const line of strings(optional[extra])) for (const more of extrasOf(line, own)) testExtras.add(more);
  for (const extra of testExtras) declare(`pyproject.toml [project.optional-dependencies] ${extra}`, strings(optional[extra]));
  for (const [group, lines] of testGroups) declare(`pyproject.toml [dependency-groups] ${group}`, lines);
  const poetry = table(table(pyproject['tool'])['poetry']);
  declare('pyproject.toml [tool.poetry.dependencies]', Object.keys(table(poetry['dependencies'])).filter((name) => name !== 'python'));
  declare('pyproject.toml [tool.poetry.dev-dependencies]', Object.keys(table(poetry['dev-dependencies'])));
  for (const [group, body] of Object.entries(table(poetry['group']))) {
    if (TEST_GROUP.test(group)) declare(`pyproject.toml [tool.poetry.group.${group}]`, Object.keys(table(table(body)['dependencies'])));
  }
  for (const [name, env] of hatchEnvs) {
    declare(`pyproject.toml [tool.hatch.envs.${name}]`, [...strings(table(env)['dependencies']), ...strings(table(env)['extra-dependencies'])]);
  }
  for (const [group, list] of Object.entries(table(table(table(pyproject['tool'])['pdm'])['dev-dependencies']))) {
    if (TEST_GROUP.test(group)) declare(`pyproject.toml [tool.pdm.dev-dependencies] ${group}`, strings(list));
  }
  declare('pyproject.toml [tool.uv] dev-dependencies', strings(table(table(pyproject['tool'])['uv'])['dev-dependencies']));

  const setupPy = await readText(root, 'setup.py');
  const setupCfg = await readText(root, 'setup.cfg');
  if (setupCfg !== null) {
    const ini = parseIni(setupCfg);
    declare('setup.cfg install_requires', (ini.get('options')?.get('install_requires') ?? '').split('\n'));
    for (const section of usesPbr(setupPy, pyproject) ? ['options.extras_require', 'extras'] : ['options.extras_require']) {
      for (const [extra, lines] of ini.get(section) ?? []) {
        if (isTestGroup(extra)) declare(`setup.cfg ${section === 'extras' ? '[extras]' : 'extras_require'} ${extra}`, lines.split('\n'));
      }
    }
  }

  if (setupPy !== null) {
    const setup = readSetupRequirements(setupPy);
    declare('setup.py install_requires', setup.installRequires);
    declare('setup.py tests_require', setup.testsRequire);
    for (const [key, list] of Object.entries(setup.extras)) {
      const { extra, marker } = splitExtraKey(key);
      if (extra === '' || isTestGroup(extra)) declare(`setup.py extras_require ${key}`, withMarker(list, marker));
    }
  }

  for (const section of toxSections) {
    declare(`${toxFile === null ? 'pyproject.toml [tool.tox] legacy_tox_ini' : 'tox.ini'} [${section}] deps`, toxDepsOf(section).map((line) => line.replace(/^\{[^}]*\}\s*/, '')));
  }
  for (const [path, lines] of requirements) declare(path, lines);

  for (const name of [...(own === null ? [] : [own]), ...provided]) names.delete(normalizeDistribution(name));
  const wanted = [...names].filter((name) => !TOOLING.test(name));
  if (wanted.length === 0) return null;
  const packages = new Set<string>();
  const unpackaged: string[] = [];
  for (const name of wanted) {
    const deb = debianMap.get(name);
    if (deb === undefined) unpackaged.push(name);
    else packages.add(deb);
  }
  // Tooling's bounds too: pytest's is the one most often newer than Debian's.
  const required = highestMinimums(
    minimums.flatMap(([name, minimum]) => {
      const deb = debianMap.get(name);
      return deb === undefined ? [] : [{ package: deb, ...minimum }];
    }),
  );
  return { packages: [...packages].sort(), unpackaged: unpackaged.sort(), sources, ...(required.length > 0 ? { minimums: required } : {}) };
}
