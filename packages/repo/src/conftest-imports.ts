import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Profile } from './types.js';

/** A module-level import statement (at column 0, so neither guarded by `try` nor under `if`): the dotted module it names. */
const IMPORT_STATEMENT = /^(?:import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)|from[ \t]+([\w.]+)[ \t]+import\b)/gm;

/** A conftest.py below the suite's root that only part of the test modules sit under, and the modules it imports when pytest loads it. */
export interface NestedConftest {
  /** Repo-relative path of the conftest.py. */
  file: string;
  /** Its directory, repo-relative: what `--ignore` leaves out. */
  dir: string;
  /** Top-level names of the modules it imports at module level that are not the tree's own. */
  imports: string[];
}

/** The top-level module names a Python text imports at module level (`__future__` and relative imports left out). */
export function moduleLevelImports(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(IMPORT_STATEMENT)) {
    const modules = match[1] !== undefined ? match[1].split(',').map((part) => part.trim().split(/\s+/)[0] ?? '') : [match[2] ?? ''];
    for (const module of modules) {
      const top = module.split('.')[0] ?? '';
      if (top !== '' && top !== '__future__') names.add(top);
    }
  }
  return [...names].sort();
}

/**
 * The conftest.py files of the profile's test files that pytest loads while it collects (their
 * directory holds some of the test modules, not all), each with the modules it imports at
 * module level that no file or directory of the tree is named like (the project's own, the
 * suite's helpers beside it). pytest 7 turns such a conftest's failed import into an error of
 * the whole collection: no test runs, wherever it is.
 */
export async function findNestedConftests(worktree: string, profile: Pick<Profile, 'testFiles' | 'sourceFiles'>): Promise<NestedConftest[]> {
  const basename = (file: string): string => file.slice(file.lastIndexOf('/') + 1);
  const modules = profile.testFiles.filter((file) => !['conftest.py', '__init__.py'].includes(basename(file)));
  const ownNames = new Set([...profile.sourceFiles, ...profile.testFiles].flatMap((file) => file.split('/').map((part) => part.replace(/\.py$/, ''))));
  const nested: NestedConftest[] = [];
  for (const file of profile.testFiles.filter((path) => basename(path) === 'conftest.py' && path.includes('/')).sort()) {
    const dir = file.slice(0, -'/conftest.py'.length);
    const under = modules.filter((module) => module.startsWith(`${dir}/`));
    if (under.length === 0 || under.length === modules.length) continue;
    const text = await readFile(join(worktree, file), 'utf8').catch(() => '');
    const imports = moduleLevelImports(text).filter((name) => !ownNames.has(name));
    if (imports.length > 0) nested.push({ file, dir, imports });
  }
  return nested;
}

/**
 * The profile with each directory whose conftest.py imports a module the tests' python cannot
 * find (`missing`: top-level module names) left out by `--ignore`, as a user whose machine lacks
 * it would run the rest; the provenance says which and why. Directories the test arguments
 * leave out already are left as they are.
 */
export function ignoreConftestDirs(profile: Profile, conftests: readonly NestedConftest[], missing: ReadonlySet<string>): Profile {
  const ignored = conftests
    .map((conftest) => ({ ...conftest, lacking: conftest.imports.filter((name) => missing.has(name)) }))
    .filter((conftest) => conftest.lacking.length > 0 && !profile.testArgs.some((arg) => arg === `--ignore=${conftest.dir}` || arg === `--ignore=${conftest.dir}/`));
  if (ignored.length === 0) return profile;
  const testArgs = [...profile.testArgs, ...ignored.map((conftest) => `--ignore=${conftest.dir}`)];
  const why = ignored.map((conftest) => `${conftest.dir} (its conftest.py imports ${conftest.lacking.join(', ')}, which the tests' python cannot import: install it to run the tests there)`).join('; ');
  const before = profile.provenance['testArgs'];
  return { ...profile, testArgs, provenance: { ...profile.provenance, testArgs: `${before === undefined ? '' : `${before}; `}--ignore ${why}; pytest would otherwise stop the whole collection at that conftest` } };
}
