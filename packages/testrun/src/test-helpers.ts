import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Profile } from '@envgen/repo';

/** Writes `files` (repo-relative path → content) into a fresh temp directory; returns its path. */
export async function writeFixtureRepo(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'envgen-testrun-fixture-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

/** A profile for fixture repos: Debian's Python, the given test args and source files. */
export function fixtureProfile(overrides: Partial<Profile> = {}): Profile {
  return {
    python: '/usr/bin/python3',
    env: {},
    aptPackages: [],
    install: [],
    testArgs: ['tests'],
    testGlobs: ['tests/**'],
    sourceFiles: [],
    testFiles: [],
    deselect: [],
    timeoutMs: 60_000,
    testTimeoutMs: 60_000,
    provenance: {},
    ...overrides,
  };
}
