import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestParser, makeTestScript, makeTestWeaken, writeBundle } from '@envgen/bundle';
import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { makePatch } from '@envgen/patch';
import { acquireRepo, createWorktree, parseRepoSpec } from '@envgen/repo';
import type { Profile, Worktree } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { openPytestSandbox, runPytest } from '@envgen/testrun';
import { formatCheckReport, runCheck } from './check-command.js';
import { resolveProfile } from './env-command.js';
import { main } from './main.js';
import { createProgress } from './progress.js';

const HOME = fileURLToPath(new URL('../../../.cache/envgen-test-home', import.meta.url));
const FILE = 'toolz/itertoolz.py';

let settings: Settings;
let worktree: Worktree;
let profile: Profile;
let scratch: string;

async function passingTests(tree: string): Promise<Set<string>> {
  const target = await openPytestSandbox(createSandboxProvider('local'), { worktree: tree });
  try {
    const run = await runPytest(target, profile);
    return new Set(Object.entries(run.results).filter(([, result]) => result.outcome === 'passed').map(([id]) => id));
  } finally {
    await target.close();
  }
}

beforeAll(async () => {
  settings = resolveConfig({ env: {}, flags: { home: HOME, sandbox: 'local', logLevel: 'silent' } });
  const repo = await acquireRepo(parseRepoSpec('debian:toolz'), { home: HOME, logger: silentLogger });
  worktree = await createWorktree(repo, { home: HOME });
  profile = await resolveProfile(worktree.path, repo, settings, createSandboxProvider('local'));
  scratch = await mkdtemp(join(tmpdir(), 'envgen-check-toolz-'));
});

afterAll(async () => {
  await worktree.remove();
  await rm(scratch, { recursive: true, force: true });
});

describe('envgen check on Debian toolz', () => {
  it('checks a real bug bundle built by envgen: all seven checks pass, and a broken one fails', async () => {
    // The bug: frequencies counts every item twice.
    const clean = await readFile(join(worktree.path, FILE), 'utf8');
    const buggy = clean.replace('        d[item] += 1\n', '        d[item] += 2\n');
    expect(buggy).not.toBe(clean);
    const bugged = join(scratch, 'bugged');
    await cp(worktree.path, bugged, { recursive: true });
    await writeFile(join(bugged, FILE), buggy);
    const before = await passingTests(worktree.path);
    const after = await passingTests(bugged);
    const failToPass = [...before].filter((id) => !after.has(id)).sort();
    expect(failToPass).toContain('toolz/tests/test_itertoolz.py::test_frequencies');

    const weaken = await makeTestWeaken({ readFile: async (path) => readFile(join(worktree.path, path), 'utf8').catch(() => null), failToPass, testFiles: profile.testFiles });
    expect(weaken.unresolved).toEqual([]);
    const bundleDir = join(scratch, 'bundle');
    await writeBundle(bundleDir, {
      'bug_inject.diff': makePatch([{ path: FILE, before: clean, after: buggy }]),
      'test_weaken.diff': weaken.diff,
      'test_files.txt': `${weaken.testFiles.join('\n')}\n`,
      'test_script.sh': makeTestScript(profile),
      'test_parser.py': makeTestParser(),
    });

    const report = await runCheck({ bundle: bundleDir, repo: 'debian:toolz' }, settings, silentLogger, createProgress({ quiet: true }));
    expect(report.checks.filter((check) => !check.passed)).toEqual([]);
    expect(report.injectorConsistency).toBe(0);
    expect(report.brokenTests).toEqual(failToPass);
    const text = formatCheckReport(report);
    expect(text).toMatch(/^✓ files-and-paths — /);
    expect(text).toContain('injector consistency reward: 0');

    // The same bundle with a bug that breaks nothing: exit code 1, check 5 named in the JSON.
    const harmless = makePatch([{ path: FILE, before: clean, after: `${clean}\n# harmless\n` }]);
    await writeFile(join(bundleDir, 'bug_inject.diff'), harmless);
    const out: string[] = [];
    const code = await main(['check', bundleDir, '--repo', 'debian:toolz', '--home', HOME, '--sandbox', 'local', '--json', '--log-level', 'silent'], {
      stdout: (text) => out.push(text),
      stderr: () => undefined,
      env: {},
    });
    expect(code).toBe(1);
    const json = JSON.parse(out.join('')) as { checks: Array<{ name: string; passed: boolean }>; injectorConsistency: number };
    expect(json.checks.find((check) => check.name === 'bug-breaks-tests')?.passed).toBe(false);
    expect(json.injectorConsistency).toBe(-1);
  });

  it('exits 2 on bad thresholds', async () => {
    const code = await main(['check', scratch, '--repo', 'debian:toolz', '--min-broken', 'lots'], { stdout: () => undefined, stderr: () => undefined, env: {} });
    expect(code).toBe(2);
  });
});
