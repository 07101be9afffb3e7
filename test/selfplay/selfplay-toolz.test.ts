import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgress, runExport, runInject, runSelfPlayCommand } from '@envgen/cli';
import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { BUNDLE_FILE_NAMES, silentLogger } from '@envgen/core';
import type { BundleFiles, Instance } from '@envgen/core';
import { makePatch } from '@envgen/patch';
import { openPool } from '@envgen/pool';
import type { SelfPlayTrajectory } from '@envgen/selfplay';
import { freshHomeFromCorpus } from '../support/corpus.js';
import { startScriptedOpenAI } from '../support/scripted-openai.js';
import type { ChatRequestBody, ScriptedOpenAI, ScriptedReply } from '../support/scripted-openai.js';

const quiet = createProgress({ quiet: true });
const homes: string[] = [];
const servers: ScriptedOpenAI[] = [];
/** A removal bug of toolz proven by envgen's own injector: what the scripted LLM will write. */
let removal: { instance: Instance; bundle: BundleFiles };
let exported: string;

function newSettings(home: string): Settings {
  homes.push(home);
  return resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
}

beforeAll(async () => {
  const settings = newSettings(freshHomeFromCorpus());
  await runInject({ repo: 'debian:toolz', count: 4, seed: 5, combine: 0, strategies: ['remove_function_body'], tasks: { statement: 'tests' } }, settings, silentLogger, quiet);
  const pool = openPool(settings.home);
  const [entry] = [...pool.listInstances({ strategy: 'remove_function_body' })];
  if (entry === undefined) throw new Error('no remove_function_body instance of toolz');
  removal = { instance: entry.instance, bundle: pool.readBundle(entry.instance.instance_id) };
  pool.close();
  exported = mkdtempSync(join(tmpdir(), 'envgen-ssr-'));
  await runExport({ formats: ['ssr'], out: exported, strategy: 'remove_function_body' }, settings, silentLogger, quiet);
}, 600_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  for (const home of [...homes, exported]) rmSync(home, { recursive: true, force: true });
});

/** Which episode a request belongs to: its role and how many assistant turns it already holds. */
function episodeOf(request: ChatRequestBody): { role: 'injector' | 'solver'; turn: number } {
  const system = String(request.messages[0]?.content ?? '');
  return { role: system.includes('bug injector') ? 'injector' : 'solver', turn: request.messages.filter((message) => message.role === 'assistant').length };
}

/** The injector's two turns: write the five files with the editor, then submit their paths. */
function writeBundle(bundle: BundleFiles, turn: number): ScriptedReply {
  if (turn === 0) {
    return { tool_calls: BUNDLE_FILE_NAMES.map((name) => ({ name: 'str_replace_editor', arguments: { command: 'create', path: `/tmp/repo/_bundle/${name}`, file_text: bundle[name] } })) };
  }
  return { tool_calls: [{ name: 'submit', arguments: Object.fromEntries(BUNDLE_FILE_NAMES.map((name) => [name, `_bundle/${name}`])) }] };
}

const SUBMIT = { name: 'submit', arguments: {} };

/** Solver episode n: even ones revert the bug (a real fix), odd ones make a harmless edit (no fix). */
function repair(patch: string, file: string, episode: number, turn: number): ScriptedReply {
  if (turn > 0) return { tool_calls: [SUBMIT] };
  if (episode % 2 === 0) return { tool_calls: [{ name: 'terminal', arguments: { command: `git apply -R <<'ENVGEN_EOF'\n${patch}ENVGEN_EOF` } }] };
  return { tool_calls: [{ name: 'str_replace_editor', arguments: { command: 'insert', path: file, insert_line: 0, new_str: '# checked' } }] };
}

function readTrajectories(file: string): SelfPlayTrajectory[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as SelfPlayTrajectory);
}

function bugFile(patch: string): string {
  return /^\+\+\+ b\/(\S+)$/m.exec(patch)?.[1] ?? '';
}

describe('envgen selfplay on toolz against a scripted model playing both roles', () => {
  it('accepts a removal bundle, scores a +1 and a -1 repair, rewards the injector from the group, keeps the failed repair as an order-2 instance, and scores a dead-weight bundle -1 naming check 7', async () => {
    // The second bundle adds a new source file nothing uses: checks 1-6 pass, the inverse mutation fails.
    const deadWeight: BundleFiles = { ...removal.bundle, 'bug_inject.diff': `${removal.bundle['bug_inject.diff']}${makePatch([{ path: 'toolz/_unused.py', before: null, after: 'UNUSED = 1\n' }])}` };
    let injectorEpisodes = 0;
    let solverEpisodes = 0;
    const server = await startScriptedOpenAI((request) => {
      const { role, turn } = episodeOf(request);
      if (role === 'injector') {
        if (turn === 0) injectorEpisodes += 1;
        return writeBundle(injectorEpisodes === 1 ? removal.bundle : deadWeight, turn);
      }
      if (turn === 0) solverEpisodes += 1;
      return repair(removal.instance.patch, bugFile(removal.instance.patch), solverEpisodes - 1, turn);
    });
    servers.push(server);
    const settings = newSettings(freshHomeFromCorpus());
    const report = await runSelfPlayCommand(
      { repo: 'debian:toolz', model: 'scripted-model', baseUrl: server.baseURL, rounds: 2, group: 2, concurrency: 1, strategies: ['removal'], seed: 1, runId: 'selfplay-e2e' },
      settings,
      silentLogger,
      quiet,
    );
    const [accepted, rejected] = report.rounds;
    expect(accepted).toMatchObject({ strategy: 'llm_removal', submitted: true, checksPassed: true, failed: [], solverRewards: [1, -1], solveRate: 0.5 });
    expect(accepted?.injectorReward).toBeCloseTo(1 - 1.8 * 0.5);
    expect(accepted?.instanceId).toMatch(/^debian__toolz\.[0-9a-f]{8}\.llm_removal__[0-9a-f]{8}$/);
    expect(accepted?.higherOrder).toMatchObject({ tried: 1, kept: [expect.stringMatching(/\.higher_order__/)] });
    expect(rejected).toMatchObject({ checksPassed: false, injectorReward: -1, instanceId: null, solverRewards: [] });
    expect(rejected?.failed.map((check) => check.name)).toEqual(['inverse-mutation']);
    expect(rejected?.failed[0]?.evidence).toMatch(/reverting toolz\/_unused\.py makes 0 of \d+ failing test\(s\) pass — dead weight/);

    const pool = openPool(settings.home);
    try {
      const parent = pool.getInstance(accepted?.instanceId ?? '');
      expect(parent).toMatchObject({ family: 'llm', FAIL_TO_PASS: removal.instance.FAIL_TO_PASS });
      expect(parent?.order).toBeUndefined();
      expect(pool.stats(parent?.instance_id ?? '')).toMatchObject({ attempts: 2, solved: 1 });
      const child = pool.getInstance(accepted?.higherOrder.kept[0] ?? '');
      expect(child).toMatchObject({ order: 2, parent: parent?.instance_id, strategy: 'higher_order', family: 'llm' });
      expect(child?.patch).toContain('+# checked');
      expect(child?.FAIL_TO_PASS.length).toBeGreaterThan(0);
      expect(pool.readBundle(child?.instance_id ?? '')['test_weaken.diff']).not.toBe('');
    } finally {
      pool.close();
    }

    const trajectories = readTrajectories(report.trajectories);
    expect(trajectories.map((t) => `${t.role}:${t.reward}`)).toEqual(['solver:1', 'solver:-1', 'injector:0.09999999999999998', 'injector:-1']);
    const [, failedRepair, injector, deadWeightInjector] = trajectories;
    expect(injector).toMatchObject({ instance_id: accepted?.instanceId, strategy: 'llm_removal', solve_rate: 0.5, finish: { reason: 'submit' }, order: 1, parent: null });
    expect(injector?.checks?.every((check) => check.passed)).toBe(true);
    expect(injector?.tools.map((tool) => tool.function.name)).toEqual(['terminal', 'str_replace_editor', 'submit']);
    expect(failedRepair?.evaluation?.failure?.kind).toBe('tests-fail');
    expect(deadWeightInjector?.checks?.find((check) => check.name === 'inverse-mutation')).toMatchObject({ passed: false });
    expect(deadWeightInjector?.solve_rate).toBeNull();
    // The new instances got tasks with self-play statements, so they export like any other.
    expect(report.tasks).toMatchObject({ built: 2, failed: [] });
  });

  it('runs the solver side on bundles another injector exported (--bundles), keeping their strategy', async () => {
    const bundleDirs = readdirSync(exported);
    expect(bundleDirs.length).toBeGreaterThan(0);
    let episodes = 0;
    const server = await startScriptedOpenAI((request) => {
      const { turn } = episodeOf(request);
      if (turn === 0) episodes += 1;
      return repair(removal.instance.patch, bugFile(removal.instance.patch), 0, turn);
    });
    servers.push(server);
    const settings = newSettings(freshHomeFromCorpus());
    const report = await runSelfPlayCommand(
      { repo: 'debian:toolz', model: 'scripted-model', baseUrl: server.baseURL, bundles: join(exported, removal.instance.instance_id), group: 1, tasks: false },
      settings,
      silentLogger,
      quiet,
    );
    expect(report.rounds).toHaveLength(1);
    expect(report.rounds[0]).toMatchObject({ strategy: 'remove_function_body', checksPassed: true, solverRewards: [1], solveRate: 1, injectorReward: -0.8 });
    expect(report.rounds[0]?.instanceId).toBe(removal.instance.instance_id);
    expect(readTrajectories(report.trajectories).map((t) => t.role)).toEqual(['solver']);
    expect(episodes).toBe(1);
  });
});
