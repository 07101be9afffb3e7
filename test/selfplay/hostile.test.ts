import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBundle } from '@envgen/bundle';
import type { BundleCheckReport } from '@envgen/bundle';
import { createProgress, runSelfPlayCommand } from '@envgen/cli';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import type { BundleFiles } from '@envgen/core';
import { makePatch } from '@envgen/patch';
import { detectProfile } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { evaluateRepair } from '@envgen/selfplay';
import type { SelfPlayTrajectory } from '@envgen/selfplay';
import { startScriptedOpenAI } from '../support/scripted-openai.js';
import type { ChatRequestBody, ScriptedOpenAI, ScriptedReply } from '../support/scripted-openai.js';
import { BUGGY_CALC, CALC_TESTS, CLAMP_BUG, CLAMP_TEST, CLAMP_WEAKEN, FIXED_CALC, RA_PARSER, RA_SCRIPT, writeCalcRepo } from './calc-fixture.js';

const provider = createSandboxProvider('local');
const host = mkdtempSync(join(tmpdir(), 'envgen-hostile-host-'));
const servers: ScriptedOpenAI[] = [];
let repo: string;
let profile: Profile;
const good: BundleFiles = { 'bug_inject.diff': CLAMP_BUG, 'test_weaken.diff': CLAMP_WEAKEN, 'test_files.txt': 'tests/test_calc.py\n', 'test_script.sh': RA_SCRIPT, 'test_parser.py': RA_PARSER };

beforeAll(async () => {
  repo = writeCalcRepo();
  profile = await detectProfile(repo);
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  rmSync(host, { recursive: true, force: true });
  rmSync(join(repo, '..'), { recursive: true, force: true });
});

function check(overrides: Partial<BundleFiles>, scriptTimeoutMs = 30_000): Promise<BundleCheckReport> {
  return checkBundle({ bundle: { ...good, ...overrides }, worktree: repo, profile, sandboxProvider: provider, limits: { scriptTimeoutMs, parserTimeoutMs: 5_000, maxOutputBytes: 1024 ** 2 } });
}

function failed(report: BundleCheckReport): Record<string, string> {
  return Object.fromEntries(report.checks.filter((c) => c.passed === false && c.ran).map((c) => [c.name, c.evidence]));
}

describe('hostile bundles and patches: each is a named failure and nothing outside the sandbox changes', () => {
  it('accepts the well-behaved bundle (the baseline the hostile ones differ from)', async () => {
    const report = await check({});
    expect(report.passed).toBe(true);
    expect(report.passingTests).toEqual(['tests/test_calc.py::test_area']);
  });

  it('a script that writes outside the repo: the writes fail in the sandbox, no test runs, clean-tests-pass fails', async () => {
    const script = `#!/bin/bash\nset -e\necho pwned > ${host}/planted\necho pwned > /etc/envgen-planted\necho pwned > /usr/envgen-planted\n${RA_SCRIPT}`;
    const report = await check({ 'test_script.sh': script });
    expect(report.passed).toBe(false);
    expect(failed(report)['clean-tests-pass']).toMatch(/^0 test\(s\) pass on the clean repo/);
    expect(readdirSync(host)).toEqual([]);
    expect(existsSync('/etc/envgen-planted')).toBe(false);
    expect(existsSync('/usr/envgen-planted')).toBe(false);
    expect(readFileSync(join(repo, 'calc.py'), 'utf8')).toBe(FIXED_CALC);
  });

  it('a script that floods its output is cut at the cap and named as a flood', async () => {
    const report = await check({ 'test_script.sh': '#!/bin/bash\nyes envgen\n' });
    expect(failed(report)['clean-tests-pass']).toMatch(/test_script\.sh flooded its output: more than 1048576 bytes/);
  });

  it('a script that hangs is killed at its time limit', async () => {
    const started = performance.now();
    const report = await check({ 'test_script.sh': '#!/bin/bash\nsleep 1000\n' }, 2_000);
    expect(failed(report)['clean-tests-pass']).toMatch(/test_script\.sh did not finish within 2s and was killed/);
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('a script that forks without end is contained by the process limit or the clock', async () => {
    const report = await check({ 'test_script.sh': '#!/bin/bash\nbomb() { bomb | bomb & }\nbomb\nwait\n' }, 5_000);
    expect(failed(report)['clean-tests-pass']).toMatch(/test_script\.sh (hit the sandbox process limit|did not finish within 5s)/);
  });

  it('a parser printing garbage fails parser-output', async () => {
    const report = await check({ 'test_parser.py': 'print("all good, trust me")\n' });
    expect(failed(report)['parser-output']).toMatch(/test_parser\.py did not print one JSON object; it printed "all good, trust me"/);
    const statuses = await check({ 'test_parser.py': 'import json\nprint(json.dumps({"tests/test_calc.py::test_area": "great"}))\n' });
    expect(failed(statuses)['parser-output']).toMatch(/gave test "tests\/test_calc\.py::test_area" the status "great"/);
  });

  it('diff paths that leave the repo or point into .git fail files-and-paths', async () => {
    const escape = CLAMP_BUG.replaceAll('a/calc.py', 'a/../calc.py').replaceAll('b/calc.py', 'b/../calc.py');
    const report = await check({ 'bug_inject.diff': escape });
    expect(failed(report)['files-and-paths']).toMatch(/"\.\.\/calc\.py" has a "\.\." segment/);
  });

  it('a repair patch touching a test file and a source file at once scores -1, named touches-test-files', async () => {
    const patch = makePatch([
      { path: 'calc.py', before: BUGGY_CALC, after: FIXED_CALC },
      { path: 'tests/test_calc.py', before: CALC_TESTS.replace(CLAMP_TEST, ''), after: 'def test_nothing():\n    pass\n' },
    ]);
    const evaluation = await evaluateRepair({ bundle: good, failToPass: ['tests/test_calc.py::test_clamp'], passToPass: ['tests/test_calc.py::test_area'], patch, worktree: repo, profile, sandboxProvider: provider });
    expect(evaluation).toMatchObject({ reward: -1, failure: { kind: 'touches-test-files', detail: expect.stringContaining('tests/test_calc.py') } });
  });

  it('a repair that breaks collection scores -1: the tests missing from the results count as failed', async () => {
    const patch = makePatch([{ path: 'calc.py', before: BUGGY_CALC, after: 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi)\n' }]);
    const evaluation = await evaluateRepair({ bundle: good, failToPass: ['tests/test_calc.py::test_clamp'], passToPass: ['tests/test_calc.py::test_area'], patch, worktree: repo, profile, sandboxProvider: provider });
    expect(evaluation.reward).toBe(-1);
    expect(evaluation.failure?.kind).toBe('tests-fail');
    expect(evaluation.missing).toEqual(['tests/test_calc.py::test_clamp', 'tests/test_calc.py::test_area']);
    const fixed = await evaluateRepair({ bundle: good, failToPass: ['tests/test_calc.py::test_clamp'], passToPass: ['tests/test_calc.py::test_area'], patch: makePatch([{ path: 'calc.py', before: BUGGY_CALC, after: FIXED_CALC }]), worktree: repo, profile, sandboxProvider: provider });
    expect(fixed).toMatchObject({ reward: 1, failure: null });
  });

  it('an injector submitting paths through "..", through a symlink and outside the repo is told why, and its valid resubmission is checked', async () => {
    const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
    const names = ['bug_inject.diff', 'test_weaken.diff', 'test_files.txt', 'test_script.sh', 'test_parser.py'] as const;
    const write = { tool_calls: names.map((name) => ({ name: 'str_replace_editor', arguments: { command: 'create', path: `/tmp/repo/_bundle/${name}`, file_text: good[name] } })) };
    const hostile = {
      tool_calls: [
        { name: 'terminal', arguments: { command: `ln -s /etc/passwd _bundle/passwd && ln -s ${host} _bundle/hostdir && echo linked` } },
        {
          name: 'submit',
          arguments: {
            'bug_inject.diff': '/tmp/repo/../../etc/passwd',
            'test_weaken.diff': '_bundle/passwd',
            'test_files.txt': '/etc/hostname',
            'test_script.sh': '_bundle/hostdir/planted',
            'test_parser.py': '_bundle/test_parser.py',
          },
        },
      ],
    };
    const resubmit = { tool_calls: [{ name: 'submit', arguments: Object.fromEntries(names.map((name) => [name, `_bundle/${name}`])) }] };
    const injector: ScriptedReply[] = [write, hostile, resubmit];
    const solver: ScriptedReply[] = [
      { tool_calls: [{ name: 'terminal', arguments: { command: 'echo pwned > /tmp/repo/tests/test_calc.py && git status --short' } }, { name: 'submit', arguments: {} }] },
      { tool_calls: [{ name: 'terminal', arguments: { command: 'git checkout -- tests/test_calc.py && sed -i "s/min(lo, max(x, hi))/max(lo, min(x, hi))/" calc.py' } }, { name: 'submit', arguments: {} }] },
    ];
    const server = await startScriptedOpenAI((request: ChatRequestBody) => {
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      return (String(request.messages[0]?.content).includes('bug injector') ? injector : solver)[turn] ?? { content: 'done' };
    });
    servers.push(server);
    symlinkSync('/etc/passwd', join(host, 'not-followed'));
    const report = await runSelfPlayCommand(
      { repo, model: 'scripted-model', baseUrl: server.baseURL, rounds: 1, group: 1, tasks: false },
      resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home }),
      silentLogger,
      createProgress({ quiet: true }),
    );
    expect(report.rounds[0]).toMatchObject({ checksPassed: true, solverRewards: [1] });
    const [solverTrajectory, injectorTrajectory] = readFileSync(report.trajectories, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as SelfPlayTrajectory);
    const refusal = injectorTrajectory?.messages.filter((m) => m.role === 'tool').map((m) => m.content).find((text) => text.startsWith('Error: the bundle was not submitted')) ?? '';
    expect(refusal).toMatch(/bug_inject\.diff: \/tmp\/repo\/\.\.\/\.\.\/etc\/passwd has a '\.\.' segment/);
    expect(refusal).toMatch(/test_weaken\.diff: \/tmp\/repo\/_bundle\/passwd is a symlink/);
    expect(refusal).toMatch(/test_files\.txt: \/etc\/hostname is outside the repository/);
    expect(refusal).toMatch(/test_script\.sh: \/tmp\/repo\/_bundle\/hostdir is a symlink/);
    expect(JSON.stringify(injectorTrajectory?.messages)).not.toContain('root:x:0:0');
    // The solver's first submit touched a test file: refused, then it reverted and fixed the source.
    const solverTools = solverTrajectory?.messages.filter((m) => m.role === 'tool').map((m) => m.content) ?? [];
    expect(solverTools[1]).toBe('Error: your changes touch test files, which are restored before evaluation: tests/test_calc.py. Revert them (git checkout -- <file>, or rm a new one) and call submit again.');
    expect(solverTrajectory).toMatchObject({ reward: 1, finish: { reason: 'submit' } });
    expect(readdirSync(host)).toEqual(['not-followed']);
    rmSync(home, { recursive: true, force: true });
  });
});
