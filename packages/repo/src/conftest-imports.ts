import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { moduleLevelImports } from './python-imports.js';
import type { Profile } from './types.js';

/** A conftest.py below the suite's root that only part of the test modules sit under, and the modules it imports when pytest loads it. */
export interface NestedConftest {
  /** Repo-relative path of the conftest.py. */
  file: string;
  /** Its directory, repo-relative: what `--ignore` leaves out. */
  dir: string;
  /** Top-level names of the modules it imports at module level that are not the tree's own. */
  imports: string[];
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
