import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { runGit } from './git.js';
import { parseIni } from './ini.js';
import { quoteShellWord } from './pytest-config.js';

/**
 * What `pip install -e .` leaves for a project's tests to find, read from its packaging
 * configuration without running its build backend (Debian's backends are often too old for
 * a project's `pyproject.toml`, and running one executes the project's code outside the
 * sandbox): the distribution's metadata (name, version, entry points) and the version file
 * its build writes (setuptools-scm's `version_file`, hatch-vcs's `version-file`).
 */
export interface Packaging {
  name: string;
  version: string;
  /** Where the version came from, for the profile's provenance. */
  versionFrom: string;
  /** Entry point groups: group → name → `module:attr`. */
  entryPoints: Record<string, Record<string, string>>;
  /**
   * The console scripts the tests run by name (a test file names one in a string:
   * `subprocess.run(["tool", ...])`): then every console and GUI script is made, as pip makes
   * them, and put first on the tests' PATH (see {@link scriptsDir}).
   */
  scriptsRun: string[];
  /** The version file the build writes and the tree lacks, with its template when configured. */
  versionFile: { path: string; template: string | null } | null;
  /** Why the tests need it (a version file the code imports, declared entry points, code that reads metadata). */
  needs: string[];
}

/** A TOML or JSON-like table. */
export type Table = Record<string, unknown>;

/** A pyproject.toml's tables; empty when the file is absent or is not valid TOML (pip would stop there, the tests need not). */
export function parsePyproject(text: string | null | undefined): Table {
  if (text === null || text === undefined) return {};
  try {
    return parseToml(text) as Table;
  } catch {
    return {};
  }
}

/** `value` when it is a table, else null. */
export function table(value: unknown): Table | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Table) : null;
}

function dig(value: unknown, ...keys: string[]): unknown {
  let current: unknown = value;
  for (const key of keys) current = table(current)?.[key];
  return current;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** Whether `source` holds `command` as a string of its own or the start of a command line (`"tool"`, `'tool --help'`). */
function namesCommand(source: string, command: string): boolean {
  const name = command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(['"])${name}(?:\\1|\\s)`).test(source);
}

// Code that looks itself (or another distribution) up as installed.
const METADATA_READS = /\bimportlib\.metadata\b|\bimportlib_metadata\b|\bpkg_resources\b|from\s+importlib\s+import\s+(?:[\w\s,()]*\b)?metadata\b/;

/** The release and the rest of a version, as setuptools-scm's `version_tuple`: `1.2.3.dev4+gabc` → `(1, 2, 3, 'dev4', 'gabc')`. */
export function versionTuple(version: string): string {
  const [public_, local] = version.split('+', 2) as [string, string | undefined];
  const parts: Array<number | string> = [];
  for (const part of public_.split('.')) parts.push(/^\d+$/.test(part) ? Number(part) : part);
  if (local !== undefined) parts.push(local);
  return `(${parts.map((part) => (typeof part === 'number' ? String(part) : `'${part}'`)).join(', ')}${parts.length === 1 ? ',' : ''})`;
}

/**
 * A tag's version as setuptools-scm's default tag pattern reads it (`v1.2.0`, `proj-1.2.0`,
 * `1.2.0+local`); envgen's snapshots of Debian sources are tagged `debian/<upstream>-<revision>`,
 * which gives the upstream version.
 */
function tagVersion(tag: string): string | null {
  const upstream = /^debian\/(?:\d+:)?(.+)-[^-]+$/.exec(tag)?.[1]?.replace(/~/g, '') ?? tag;
  return /^(?:[\w-]+-)?[vV]?(\d+(?:\.\d+){0,2}[^+]*)(?:\+.*)?$/.exec(upstream)?.[1] ?? null;
}

/**
 * The checkout's version the way setuptools-scm (and hatch-vcs, which uses it) computes it by
 * default from `git describe`: the tag's version on a tagged commit, else the next patch
 * release's dev version with the distance (`1.2.4.dev5+gabcdef0`; no local part under
 * `local_scheme = "no-local-version"`), and `0.1.devN+g<sha>` without any tag.
 */
export async function gitVersion(root: string, localVersion = true): Promise<string | null> {
  const local = (sha: string) => (localVersion ? `+g${sha}` : '');
  const described = await runGit(['describe', '--tags', '--long', '--match', '*[0-9]*'], { cwd: root }).catch(() => null);
  const match = described === null ? null : /^(.*)-(\d+)-g([0-9a-f]+)$/.exec(described.trim());
  if (match === null) {
    const count = await runGit(['rev-list', '--count', 'HEAD'], { cwd: root }).catch(() => null);
    const sha = await runGit(['rev-parse', '--short=7', 'HEAD'], { cwd: root }).catch(() => null);
    return count === null || sha === null ? null : `0.1.dev${count.trim()}${local(sha.trim())}`;
  }
  const [, tag = '', distance = '0', sha = ''] = match;
  const version = tagVersion(tag);
  if (version === null) return null;
  if (distance === '0') return version;
  const release = /^(\d+(?:\.\d+)*)/.exec(version)?.[1] ?? version;
  const numbers = release.split('.').map(Number);
  // A pre-release tag (1.2.0rc1) is followed by dev versions of that release; a final one by the next patch's.
  const next = release === version ? [...numbers.slice(0, -1), (numbers.at(-1) ?? 0) + 1].join('.') : release;
  return `${next}.dev${distance}${local(sha)}`;
}

/** The string literal assigned to `name` at the top level of a Python file (`__version__ = "1.2"`), as setuptools' and hatch's static readers find it. */
function assignedLiteral(source: string, name: string): string | null {
  const pattern = new RegExp(`^${name.replace(/[$]/g, '\\$&')}\\s*(?::\\s*[\\w.\\[\\]]+\\s*)?=\\s*(['"])([^'"\\n]+)\\1\\s*(?:#.*)?$`, 'm');
  return pattern.exec(source)?.[2] ?? null;
}

/** A regular file of the tree, or null (absent, a link, unreadable). */
/**
 * Whether the project is built with pbr (OpenStack's setuptools plugin: `setup(pbr=True)`, or
 * `pbr.build` as the build backend), which takes entry points and extras from setup.cfg's own
 * `[entry_points]` and `[extras]` sections and the version from git tags.
 */
export function usesPbr(setupPy: string | null, pyproject: Table): boolean {
  return /\bpbr\s*=\s*True\b/.test(setupPy ?? '') || dig(pyproject, 'build-system', 'build-backend') === 'pbr.build';
}

export async function readText(root: string, path: string): Promise<string | null> {
  const info = await lstat(join(root, path)).catch(() => null);
  if (!info?.isFile()) return null;
  return readFile(join(root, path), 'utf8').catch(() => null);
}

/** The file of a dotted module, at the root or under `src/`. */
async function moduleSource(root: string, module: string): Promise<{ path: string; source: string } | null> {
  const base = module.split('.').join('/');
  for (const path of [`${base}.py`, `${base}/__init__.py`, `src/${base}.py`, `src/${base}/__init__.py`]) {
    const source = await readText(root, path);
    if (source !== null) return { path, source };
  }
  return null;
}

async function attrVersion(root: string, attr: string): Promise<{ version: string; from: string } | null> {
  const dot = attr.lastIndexOf('.');
  if (dot <= 0) return null;
  const found = await moduleSource(root, attr.slice(0, dot));
  const version = found === null ? null : assignedLiteral(found.source, attr.slice(dot + 1));
  return version === null || found === null ? null : { version, from: `${attr} in ${found.path}` };
}

/**
 * Reads the packaging of the checkout at `root` (pyproject.toml, setup.cfg, setup.py's
 * literal arguments, an sdist's PKG-INFO, git tags) and says whether its tests need it installed. Null when the project
 * declares no distribution name or nothing in it needs installed metadata.
 *
 * @param pythonFiles repo-relative Python files of the project (source and tests), scanned for code that reads installed metadata
 * @param testFiles those of them that are the tests' (the profile's test files), scanned for the console scripts they run
 */
export async function readPackaging(root: string, files: readonly string[], pythonFiles: readonly string[], testFiles: readonly string[]): Promise<Packaging | null> {
  const pyproject = parsePyproject(await readText(root, 'pyproject.toml'));
  const setupCfgText = await readText(root, 'setup.cfg');
  const setupCfg = setupCfgText === null ? null : parseIni(setupCfgText);
  const project = table(pyproject['project']) ?? {};
  // A setup.py's own keyword arguments, where they are string literals (`setup(name="x", version="1.0")`).
  const setupPy = (await readText(root, 'setup.py')) ?? '';
  const setupArgument = (keyword: string) => new RegExp(`\\b${keyword}\\s*=\\s*(['"])([^'"\\n]+)\\1`).exec(setupPy)?.[2] ?? null;
  const name = text(project['name']) ?? text(setupCfg?.get('metadata')?.get('name')) ?? text(dig(pyproject, 'tool', 'poetry', 'name')) ?? setupArgument('name');
  if (name === null) return null;

  const needs: string[] = [];
  const entryPoints: Record<string, Record<string, string>> = {};
  const addGroup = (group: string, entries: Record<string, string>) => {
    if (Object.keys(entries).length > 0) entryPoints[group] = { ...entryPoints[group], ...entries };
  };
  const strings = (value: unknown): Record<string, string> =>
    Object.fromEntries(Object.entries(table(value) ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  addGroup('console_scripts', strings(project['scripts']));
  addGroup('gui_scripts', strings(project['gui-scripts']));
  for (const [group, entries] of Object.entries(table(project['entry-points']) ?? {})) addGroup(group, strings(entries));
  for (const [group, entries] of Object.entries(table(dig(pyproject, 'tool', 'poetry', 'plugins')) ?? {})) addGroup(group, strings(entries));
  addGroup('console_scripts', strings(dig(pyproject, 'tool', 'poetry', 'scripts')));
  const pbr = usesPbr(setupPy, pyproject);
  const entryPointSections = pbr ? ['options.entry_points', 'entry_points'] : ['options.entry_points'];
  for (const [group, lines] of entryPointSections.flatMap((section) => [...(setupCfg?.get(section) ?? [])])) {
    addGroup(
      group,
      Object.fromEntries(
        lines
          .split('\n')
          .map((line) => /^([^=\s][^=]*?)\s*=\s*(\S.*)$/.exec(line.trim()))
          .filter((match): match is RegExpExecArray => match !== null)
          .map((match) => [match[1] ?? '', match[2] ?? '']),
      ),
    );
  }
  const pluginGroups = Object.keys(entryPoints).filter((group) => group !== 'console_scripts' && group !== 'gui_scripts');
  if (pluginGroups.length > 0) needs.push(`it declares entry points (${pluginGroups.join(', ')})`);

  const hatchVersion = table(dig(pyproject, 'tool', 'hatch', 'version')) ?? {};
  const scm = table(dig(pyproject, 'tool', 'setuptools_scm'));
  const hatchHook = table(dig(pyproject, 'tool', 'hatch', 'build', 'hooks', 'vcs'));
  const requires = (dig(pyproject, 'build-system', 'requires') as unknown[] | undefined) ?? [];
  const fromVcs =
    scm !== null ||
    hatchVersion['source'] === 'vcs' ||
    requires.some((requirement) => typeof requirement === 'string' && /^(setuptools[-_]scm|hatch-vcs|flit[-_]scm)\b/i.test(requirement));
  const versionFilePath = text(hatchHook?.['version-file']) ?? text(scm?.['version_file']) ?? text(scm?.['write_to']);
  const versionFile =
    versionFilePath !== null && !files.includes(versionFilePath)
      ? { path: versionFilePath, template: text(hatchHook?.['template']) ?? text(scm?.['version_file_template']) ?? text(scm?.['write_to_template']) }
      : null;
  if (versionFile !== null) needs.push(`its build writes ${versionFile.path}`);

  const scripts = Object.keys({ ...entryPoints['console_scripts'], ...entryPoints['gui_scripts'] });
  const scriptsRun = new Set<string>();
  let readsMetadata: string | null = null;
  const testSet = new Set(testFiles);
  for (const file of pythonFiles) {
    const tests = testSet.has(file);
    if (readsMetadata !== null && (!tests || scriptsRun.size === scripts.length)) continue;
    const source = await readText(root, file);
    if (source === null) continue;
    if (readsMetadata === null && METADATA_READS.test(source)) readsMetadata = file;
    if (tests) for (const script of scripts) if (namesCommand(source, script)) scriptsRun.add(script);
  }
  if (readsMetadata !== null) needs.push(`${readsMetadata} reads installed metadata`);
  if (scriptsRun.size > 0) needs.push(`its tests run its console scripts (${[...scriptsRun].sort().join(', ')})`);
  if (needs.length === 0) return null;

  const flitModule = `${name.replace(/-/g, '_')}.__version__`;
  const localVersion = dig(hatchVersion, 'raw-options', 'local_scheme') !== 'no-local-version' && scm?.['local_scheme'] !== 'no-local-version';
  const version = await resolveVersion();
  return { name, ...version, entryPoints, scriptsRun: [...scriptsRun].sort(), versionFile, needs };

  async function resolveVersion(): Promise<{ version: string; versionFrom: string }> {
    const literal = text(project['version']) ?? text(dig(pyproject, 'tool', 'poetry', 'version'));
    if (literal !== null) return { version: literal, versionFrom: 'pyproject.toml' };
    const cfgVersion = text(setupCfg?.get('metadata')?.get('version'));
    if (cfgVersion !== null && !cfgVersion.includes(':')) return { version: cfgVersion, versionFrom: 'setup.cfg' };
    const setupVersion = setupArgument('version');
    if (setupVersion !== null) return { version: setupVersion, versionFrom: 'setup.py' };
    const pkgInfo = /^Version:\s*(\S+)\s*$/m.exec((await readText(root, 'PKG-INFO')) ?? '')?.[1];
    if (pkgInfo !== undefined) return { version: pkgInfo, versionFrom: "the sdist's PKG-INFO" };
    if (fromVcs || pbr) {
      const described = await gitVersion(root, localVersion);
      if (described !== null) return { version: described, versionFrom: `git tags, as ${pbr ? 'pbr' : 'setuptools-scm'} computes it` };
    }
    const attr =
      (/\bversion\s*=\s*([\w.]+\.__version__)\b/.exec(setupPy)?.[1] ?? null) ??
      text(dig(pyproject, 'tool', 'setuptools', 'dynamic', 'version', 'attr')) ??
      (cfgVersion?.startsWith('attr:') ? cfgVersion.slice('attr:'.length).trim() : null) ??
      (dig(pyproject, 'build-system', 'build-backend') === 'flit_core.buildapi' ? flitModule : null);
    const fromAttr = attr === null ? null : await attrVersion(root, attr);
    if (fromAttr !== null) return { version: fromAttr.version, versionFrom: fromAttr.from };
    const hatchPath = text(hatchVersion['path']);
    if (hatchPath !== null) {
      const fromPath = assignedLiteral((await readText(root, hatchPath)) ?? '', '__version__');
      if (fromPath !== null) return { version: fromPath, versionFrom: hatchPath };
    }
    const described = await gitVersion(root, localVersion);
    if (described !== null) return { version: described, versionFrom: 'git tags (the version is computed by the build)' };
    return { version: '0+unknown', versionFrom: 'unknown (computed by the build, and no git tags)' };
  }
}

/** The `<name>-<version>.dist-info` directory {@link installedMetadataStep} writes under `dir` (`src/`, or `` for the root). */
function distInfoDir(packaging: Packaging, dir: string): string {
  return `${dir}${packaging.name.replace(/[-_.]+/g, '_').toLowerCase()}-${packaging.version.replace(/-/g, '_')}.dist-info`;
}

/**
 * Where {@link installedMetadataStep} makes the project's console scripts (repo-relative), or
 * null when the tests run none. envgen's runs and test_script.sh put it first on PATH, as an
 * activated environment has its `bin/` (the profile's `ENVGEN_SCRIPTS`).
 */
export function scriptsDir(packaging: Packaging, dir: string): string | null {
  return packaging.scriptsRun.length === 0 ? null : `${distInfoDir(packaging, dir)}/bin`;
}

/**
 * A console script as pip makes it for `name = module:attr` (extras ignored), run by
 * `python`, with the project's import directories (`importPaths`, repo-relative; `` for the
 * root) first on its path, found from the script's own place at `path`: an editable install
 * makes the project importable from any working directory, and tests run scripts from theirs.
 */
function consoleScript(python: string, path: string, name: string, target: string, importPaths: readonly string[]): string {
  const [module = '', attr = ''] = target.replace(/\[[^\]]*\]\s*$/, '').trim().split(':', 2).map((part) => part.trim());
  const up = path.split('/').length - 1;
  const call = attr === '' ? `import runpy\nrunpy.run_module(${JSON.stringify(module)}, run_name="__main__")` : `import importlib\n\n_entry = importlib.import_module(${JSON.stringify(module)})\nfor _name in ${JSON.stringify(attr)}.split("."):\n    _entry = getattr(_entry, _name)\nsys.exit(_entry())`;
  return [
    python.startsWith('/') ? `#!${python}` : `#!/usr/bin/env ${python}`,
    `# envgen: the console script \`pip install -e .\` makes: ${name} = ${target}`,
    'import os',
    'import sys',
    '',
    `_root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ${JSON.stringify(Array(up).fill('..').join('/'))}))`,
    `sys.path[:0] = [os.path.join(_root, path) for path in ${JSON.stringify(importPaths)}]`,
    call,
  ].join('\n');
}

/**
 * The install step that leaves `packaging` where the tests import the project from (`dir`:
 * `src/` for a src layout, else the root, which is on the path of `python -m pytest`): a
 * `<name>-<version>.dist-info` beside the package, as `setup.py develop` left its egg-info
 * (importlib.metadata finds it on `sys.path`), the version file, with setuptools-scm's
 * template unless the project configures its own, and, when the tests run them, the console
 * scripts in the dist-info's `bin/` ({@link scriptsDir}), run by `scripts.python` with
 * `scripts.importPaths` (repo-relative) on their path.
 */
export function installedMetadataStep(packaging: Packaging, dir: string, scripts: { python: string; importPaths: readonly string[] }): string {
  const distInfo = distInfoDir(packaging, dir);
  const write = (path: string, content: string) => [`cat > ${quoteShellWord(path)} <<'ENVGEN_EOF'`, content.trimEnd(), 'ENVGEN_EOF'];
  const lines = [`# envgen: ${packaging.name} ${packaging.version} as \`pip install -e .\` leaves it for the tests (${packaging.needs.join('; ')})`, `mkdir -p ${quoteShellWord(distInfo)}`];
  lines.push(...write(`${distInfo}/METADATA`, `Metadata-Version: 2.1\nName: ${packaging.name}\nVersion: ${packaging.version}`));
  const groups = Object.entries(packaging.entryPoints);
  if (groups.length > 0) {
    lines.push(...write(`${distInfo}/entry_points.txt`, groups.map(([group, entries]) => [`[${group}]`, ...Object.entries(entries).map(([key, value]) => `${key} = ${value}`)].join('\n')).join('\n\n')));
  }
  const bin = scriptsDir(packaging, dir);
  if (bin !== null) {
    lines.push(`mkdir -p ${quoteShellWord(bin)}`);
    for (const [name, target] of Object.entries({ ...packaging.entryPoints['console_scripts'], ...packaging.entryPoints['gui_scripts'] })) {
      // A script name is a file name of bin/, never a path.
      if (!/^[\w.+-]+$/.test(name)) continue;
      const path = `${bin}/${name}`;
      lines.push(...write(path, consoleScript(scripts.python, path, name, target, scripts.importPaths)), `chmod +x ${quoteShellWord(path)}`);
    }
  }
  if (packaging.versionFile !== null) {
    const { path, template } = packaging.versionFile;
    const tuple = versionTuple(packaging.version);
    const content =
      template === null
        ? `# file generated by setuptools-scm\n# don't change, don't track in version control\n__version__ = version = '${packaging.version}'\n__version_tuple__ = version_tuple = ${tuple}`
        : template
            .replace(/\{version!r\}/g, `'${packaging.version}'`)
            .replace(/\{version\}/g, packaging.version)
            .replace(/\{version_tuple(?:!r)?\}/g, tuple);
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : null;
    if (parent !== null) lines.push(`mkdir -p ${quoteShellWord(parent)}`);
    lines.push(...write(path, content));
  }
  return lines.join('\n');
}

/**
 * The directories a project's packaging config puts its packages in, besides the root:
 * setuptools' `package_dir`/`package-dir` and `packages.find` `where` (pyproject.toml,
 * setup.cfg, or the `package_dir={...}` literal of a `setup.py` call), hatch's wheel
 * `packages`, Poetry's `packages` `from`, PDM's `package-dir`. What `pip install -e .`
 * makes importable, whatever the directory is called.
 */
export function packageRoots(configFiles: readonly { path: string; text: string }[], setupScript?: string | null): string[] {
  const roots: string[] = [];
  const add = (dir: unknown) => {
    if (typeof dir !== 'string') return;
    const clean = dir.trim().replace(/^\.\/+/, '').replace(/\/+$/, '');
    if (clean !== '' && clean !== '.' && !clean.startsWith('..') && !roots.includes(clean)) roots.push(clean);
  };
  for (const [name, dir] of packageDirEntries(configFiles, setupScript)) add(packageDirRoot(name, dir));
  const pyproject = parsePyproject(configFiles.find((file) => file.path === 'pyproject.toml')?.text);
  const where = dig(pyproject, 'tool', 'setuptools', 'packages', 'find', 'where');
  for (const dir of Array.isArray(where) ? where : []) add(dir);
  const hatchPackages = dig(pyproject, 'tool', 'hatch', 'build', 'targets', 'wheel', 'packages');
  for (const path of Array.isArray(hatchPackages) ? hatchPackages : []) {
    if (typeof path === 'string' && path.includes('/')) add(path.slice(0, path.lastIndexOf('/')));
  }
  const poetryPackages = dig(pyproject, 'tool', 'poetry', 'packages');
  for (const entry of Array.isArray(poetryPackages) ? poetryPackages : []) add(table(entry)?.['from']);
  add(dig(pyproject, 'tool', 'pdm', 'build', 'package-dir'));

  const setupCfgText = configFiles.find((file) => file.path === 'setup.cfg')?.text;
  if (setupCfgText !== undefined) add(parseIni(setupCfgText).get('options.packages.find')?.get('where'));
  return roots;
}

/**
 * The `package_dir` entries of setuptools' config, name → directory (`''` for the root
 * package's): pyproject.toml's `package-dir`, setup.cfg's `package_dir`, the literal of a
 * `setup.py` call.
 */
function packageDirEntries(configFiles: readonly { path: string; text: string }[], setupScript?: string | null): [string, unknown][] {
  const pyproject = parsePyproject(configFiles.find((file) => file.path === 'pyproject.toml')?.text);
  const entries: [string, unknown][] = Object.entries(table(dig(pyproject, 'tool', 'setuptools', 'package-dir')) ?? {});
  const setupCfgText = configFiles.find((file) => file.path === 'setup.cfg')?.text;
  if (setupCfgText !== undefined) {
    for (const line of (parseIni(setupCfgText).get('options')?.get('package_dir') ?? '').split('\n')) {
      const match = /^\s*([\w.]*)\s*=\s*(\S+)\s*$/.exec(line);
      if (match) entries.push([match[1] ?? '', match[2] ?? '']);
    }
  }
  if (setupScript != null) entries.push(...setupPackageDir(setupScript));
  return entries;
}

/** A Python package's dotted name (`pkg`, `jaraco.text`). */
const DOTTED_NAME = /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/;

/** A package imported under a name its directory does not have (see {@link renamedPackages}). */
export interface RenamedPackage {
  /** The name the code imports (`pkg`, `jaraco.text`). */
  name: string;
  /** Its directory, relative to the project (`lib`; `` for the root). */
  dir: string;
  /** What maps the one to the other, for the profile's provenance. */
  from: string;
}

/**
 * The packages an install imports under a name their directory does not have, which no
 * directory on the path gives: setuptools' `package_dir` entries that rename (`pkg = lib`),
 * and coherent.build's essential layout, whose root is the package itself, named as the
 * repository is (`jaraco/tempora`: `tempora`). Only directories holding an `__init__.py`.
 */
export function renamedPackages(files: readonly string[], configFiles: readonly { path: string; text: string }[], setupScript?: string | null, repoName?: string): RenamedPackage[] {
  const found: RenamedPackage[] = [];
  const isPackage = (dir: string) => files.includes(dir === '' ? '__init__.py' : `${dir}/__init__.py`);
  for (const [name, dir] of packageDirEntries(configFiles, setupScript)) {
    if (typeof dir !== 'string' || !DOTTED_NAME.test(name)) continue;
    const clean = dir.trim().replace(/^\.\/+/, '').replace(/\/+$/, '').replace(/^\.$/, '');
    // Found on the path already: a directory named as the package at the root, or one whose parent packageRoots puts there (`src/pkg`).
    if (clean.startsWith('..') || clean === name.replace(/\./g, '/') || packageDirRoot(name, clean) !== null || !isPackage(clean)) continue;
    found.push({ name, dir: clean, from: `setuptools package_dir ${name} = ${dir}` });
  }
  const pyproject = parsePyproject(configFiles.find((file) => file.path === 'pyproject.toml')?.text);
  const backend = dig(pyproject, 'build-system', 'build-backend');
  if (backend === 'coherent.build' && repoName !== undefined && DOTTED_NAME.test(repoName) && isPackage('')) {
    found.push({ name: repoName, dir: '', from: "coherent.build's essential layout (the repository root is the package, named as the repository)" });
  }
  return found;
}

/**
 * The directory of envgen's stand-ins for {@link renamedPackages} (repo-relative under
 * `dir`, `` for the root), put on the tests' path: each a package of the name the code imports
 * that runs the real directory's `__init__.py` and finds its submodules there.
 */
export const RENAMED_PACKAGES_DIR = '.envgen-packages';

/**
 * The install step that makes each renamed package importable as an editable install does
 * (setuptools' editable finder maps the name to the directory): a stand-in package under
 * {@link RENAMED_PACKAGES_DIR} whose `__path__`, `__file__` and loader are the real
 * directory's, so every module and code object has the file it has in the tree, and
 * `importlib.resources` reads the tree's files. `prefix` is the project's directory in the repo
 * (`` or `libs/core/`).
 */
export function renamedPackagesStep(packages: readonly RenamedPackage[], prefix: string): string {
  const lines = [`# envgen: ${packages.map((renamed) => `${renamed.name} from ${renamed.dir === '' ? 'the repository root' : `${renamed.dir}/`}`).join(', ')}, as \`pip install -e .\` imports ${packages.length === 1 ? 'it' : 'them'}`];
  for (const renamed of packages) {
    const inProject = `${RENAMED_PACKAGES_DIR}/${renamed.name.replace(/\./g, '/')}`;
    const standIn = `${prefix}${inProject}`;
    // From the stand-in's directory up to the project's, then down to the package's own.
    const target = [...inProject.split('/').map(() => '..'), ...(renamed.dir === '' ? [] : [renamed.dir])].join('/');
    const source = [
      `# envgen: the package ${renamed.name} of ${renamed.dir === '' ? 'the repository root' : renamed.dir} (${renamed.from})`,
      'import importlib.machinery as _machinery',
      'import os as _os',
      '',
      `_dir = _os.path.normpath(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), ${JSON.stringify(target)}))`,
      '__file__ = _os.path.join(_dir, "__init__.py")',
      '__path__[:] = [_dir]',
      '__loader__ = __spec__.loader = _machinery.SourceFileLoader(__name__, __file__)',
      '__spec__.origin = __file__',
      '__cached__ = __spec__.cached = None',
      'with open(__file__, "rb") as _source:',
      '    _envgen_code = compile(_source.read(), __file__, "exec")',
      'del _machinery, _os, _dir, _source',
      'exec(_envgen_code)',
      'del _envgen_code',
    ].join('\n');
    lines.push(`mkdir -p ${quoteShellWord(standIn)}`, `cat > ${quoteShellWord(`${standIn}/__init__.py`)} <<'ENVGEN_EOF'`, source, 'ENVGEN_EOF');
  }
  return lines.join('\n');
}

/**
 * The directory a `package_dir` entry makes importable: the root package's (`'': 'lib'`), or
 * the parent of a top-level package's own directory (`'pkg': 'src/pkg'`); null for a package
 * that setuptools renames (`'pkg': 'lib'`), which no directory on the path gives.
 */
function packageDirRoot(name: string, dir: unknown): string | null {
  if (typeof dir !== 'string') return null;
  if (name === '') return dir;
  const clean = dir.trim().replace(/\/+$/, '');
  if (name.includes('.') || !clean.endsWith(`/${name}`)) return null;
  return clean.slice(0, clean.length - name.length - 1);
}

/**
 * The string-literal entries of a `setup.py`'s `package_dir={...}` keyword (`{'': 'lib'}`,
 * `{"pkg": "src/pkg"}`); an entry computed when setup.py runs (`{'': {2: 'lib', 3:
 * 'lib3'}[sys.version_info[0]]}`) is not read.
 */
function setupPackageDir(script: string): [string, string][] {
  const literal = /\bpackage_dir\s*=\s*\{((?:[^{}]|\{[^{}]*\})*)\}/.exec(script)?.[1];
  if (literal === undefined) return [];
  const entry = /(['"])([\w.]*)\1\s*:\s*(['"])([^'"]*)\3\s*(?=,|$)/g;
  return [...literal.matchAll(entry)].map((match): [string, string] => [match[2] ?? '', match[4] ?? '']);
}

