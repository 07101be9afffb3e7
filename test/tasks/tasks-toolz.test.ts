import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import type { Settings } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { WARM_TASKS_MIN, createProgress, readRuns, runInject, runMaterialize, runShow, runTasks } from '@envgen/cli';
import type { InjectCommandReport } from '@envgen/cli';
import { applyPatch } from '@envgen/patch';
import { openPool } from '@envgen/pool';
import type { PoolEntry } from '@envgen/pool';
import { SELF_PLAY_INSTRUCTION } from '@envgen/tasks';
import { freshHomeFromCorpus } from '../support/corpus.js';
import { startScriptedOpenAI } from '../support/scripted-openai.js';

const quiet = createProgress({ quiet: true });
let home: string;
let settings: Settings;
let report: InjectCommandReport;

function entries(): PoolEntry[] {
  const pool = openPool(home);
  try {
    return [...pool.listInstances()];
  } finally {
    pool.close();
  }
}

/** Each instance's statement; object addresses (`at 0x7f…`, or cut short in an assertion's repr) differ from one run to the next. */
function statements(): Map<string, string> {
  return new Map(entries().map((entry) => [entry.instance.instance_id, (entry.task?.problem_statement.text ?? '').replace(/(0x|\.\.\.x?)[0-9a-f]{4,}/g, '<address>')]));
}

function git(args: string[], cwd?: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

beforeAll(async () => {
  home = freshHomeFromCorpus();
  settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
  report = await runInject({ repo: 'debian:toolz', count: 10, seed: 3, combine: 0, tasks: { statement: 'tests' } }, settings, silentLogger, quiet);
}, 600_000);

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('tasks of real toolz bugs', () => {
  it('gives every kept instance gold labels on the files its patch changes and a tests statement', () => {
    expect(report.kept).toBeGreaterThanOrEqual(3);
    // The run's summary is kept for envgen report.
    expect(readRuns(home, 'inject')).toEqual([expect.objectContaining({ repo: 'debian/toolz', seed: 3, tried: report.tried, kept: report.kept, byStrategy: report.byStrategy, secondsPerKept: report.secondsPerKept })]);
    expect(report.tasks).toMatchObject({ built: report.kept, failed: [] });
    for (const { instance, task } of entries()) {
      expect(task, instance.instance_id).not.toBeNull();
      if (task === null) continue;
      const patched = [...instance.patch.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((match) => match[1]);
      expect(task.file_changes.map((file) => file.file)).toEqual(patched.sort());
      expect(task.problem_statement.kind).toBe('tests');
      expect(task.problem_statement.text).toContain(instance.FAIL_TO_PASS[0]);
      expect(task.problem_statement.text.trim().length).toBeGreaterThan(50);
      // Frames of the buggy module point at the answer; the statement hides them.
      for (const file of patched) expect(task.problem_statement.text).not.toMatch(new RegExp(`^${file}:\\d+: in `, 'm'));
      expect(task.image_name).toBe(settings.dockerImage);
    }
  });

  it("states the failure output inject ran in the validator's warm interpreters as a cold run of the same tests does", async () => {
    const warm = statements();
    expect(report.tasks).toMatchObject({ warmOutputs: report.kept });
    expect([...warm.values()].every((text) => text.includes('Failure output (pytest):'))).toBe(true);
    const cold = await runTasks({ repo: 'debian:toolz', statement: 'tests', rebuild: true, warmFrom: Number.POSITIVE_INFINITY }, settings, silentLogger, quiet);
    expect(cold).toMatchObject({ built: report.kept, failed: [], warmOutputs: 0 });
    expect(statements()).toEqual(warm);
  });

  it('runs the failing tests of `envgen tasks` in warm interpreters too, with the same statements', async () => {
    const cold = statements();
    const warm = await runTasks({ repo: 'debian:toolz', statement: 'tests', rebuild: true, warmFrom: 1 }, settings, silentLogger, quiet);
    expect(warm).toMatchObject({ built: report.kept, failed: [], warmOutputs: report.kept });
    expect(statements()).toEqual(cold);
  });

  it('runs them warm by default for as many instances as a quick suite has, cold where the suite is slow', async () => {
    expect(report.kept).toBeGreaterThanOrEqual(WARM_TASKS_MIN);
    // The cached baseline's clean seconds decide, as measured on this machine; set here so a loaded machine's slower clean run does not.
    const [file] = readdirSync(join(home, 'baselines')).filter((name) => name.endsWith('.json'));
    const path = join(home, 'baselines', file ?? '');
    const cached = readFileSync(path, 'utf8');
    const withSuiteSeconds = (seconds: number): void => writeFileSync(path, JSON.stringify({ ...JSON.parse(cached), suiteSeconds: [seconds, seconds] }));
    try {
      // A quick suite: fewer seconds than instances.
      withSuiteSeconds(report.kept - 1);
      expect(await runTasks({ repo: 'debian:toolz', statement: 'tests', rebuild: true }, settings, silentLogger, quiet)).toMatchObject({ warmOutputs: report.kept });
      // A suite whose clean run takes longer than as many seconds as there are instances: a warm start would cost more.
      withSuiteSeconds(report.kept + 1);
      expect(await runTasks({ repo: 'debian:toolz', statement: 'tests', rebuild: true }, settings, silentLogger, quiet)).toMatchObject({ built: report.kept, warmOutputs: 0 });
    } finally {
      writeFileSync(path, cached);
    }
  });

  it('shows an instance with its bug, labels and statement', async () => {
    const [first] = entries();
    const shown = await runShow(first?.instance.instance_id ?? '', settings, silentLogger);
    expect(shown.instance.patch).toBe(first?.instance.patch);
    expect(shown.task?.file_changes).toEqual(first?.task?.file_changes);
    await expect(runShow('debian__toolz.00000000.nothing__00000000', settings, silentLogger)).rejects.toThrow(/envgen pool list/);
  });

  it('materializes a checkout in which no git object or command reveals the fix', async () => {
    const [entry] = entries();
    if (entry?.task == null) throw new Error('no task');
    const dir = join(mkdtempSync(join(tmpdir(), 'envgen-mat-')), 'work');
    const made = await runMaterialize(entry.instance.instance_id, dir, settings, silentLogger);
    expect(made.commit).toBe(entry.task.environment.commit);
    const paths = [...entry.instance.patch.matchAll(/^--- a\/(.+)$/gm)].map((match) => match[1] ?? '');
    const gitDirs = execFileSync('find', [join(home, 'mirrors'), '-maxdepth', '3', '-name', 'HEAD', '-printf', '%h\\n'], { encoding: 'utf8' }).trim().split('\n');
    const source = gitDirs.find((gitDir) => {
      try {
        git(['--git-dir', gitDir, 'cat-file', '-e', `${entry.instance.base_commit}^{commit}`]);
        return true;
      } catch {
        return false;
      }
    });
    if (source === undefined) throw new Error('no mirror holds the base commit');
    const cleanBlobs = paths.map((path) => git(['--git-dir', source, 'rev-parse', `${entry.instance.base_commit}:${path}`]).trim());
    const objects = git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], dir);
    for (const blob of cleanBlobs) expect(objects).not.toContain(blob);
    const applied = applyPatch((path) => git(['--git-dir', source, 'cat-file', 'blob', `${entry.instance.base_commit}:${path}`]), entry.instance.patch);
    if (!applied.ok) throw new Error(applied.problem.message);
    for (const file of applied.files) expect(readFileSync(join(dir, file.path), 'utf8')).toBe(file.after);
    expect(git(['rev-list', '--all'], dir).trim()).toBe(made.commit);
    expect(git(['log', '--all', '--format=%s'], dir).trim()).toBe('Initial commit');
    expect(git(['reflog'], dir).trim()).toBe('');
    expect(git(['remote'], dir).trim()).toBe('');
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  it('rebuilds statements as self-play and as LLM-written issues, re-asking when an issue names the fix location', async () => {
    const selfPlay = await runTasks({ repo: 'debian:toolz', statement: 'self-play', rebuild: true, limit: 2 }, settings, silentLogger, quiet);
    expect(selfPlay).toMatchObject({ built: 2, failed: [] });
    const rebuilt = entries().filter((entry) => entry.task?.problem_statement.kind === 'self-play');
    expect(rebuilt).toHaveLength(2);
    for (const entry of rebuilt) {
      expect(entry.task?.problem_statement.text.startsWith(SELF_PLAY_INSTRUCTION)).toBe(true);
      expect(entry.task?.problem_statement.text).toContain('+def test_');
    }

    const [target] = entries();
    const changed = /^--- a\/(.+)$/m.exec(target?.instance.patch ?? '')?.[1] ?? '';
    const server = await startScriptedOpenAI([
      { content: `# Wrong result\n\nThe bug is in ${changed}.`, usage: { prompt_tokens: 900, completion_tokens: 20 } },
      { content: '# Calling the function gives a wrong result\n\nI expected the documented output.', usage: { prompt_tokens: 950, completion_tokens: 25 } },
    ]);
    try {
      const issue = await runTasks(
        { repo: 'debian:toolz', statement: 'issue', rebuild: true, limit: 1, model: 'scripted-model', baseUrl: server.baseURL },
        settings,
        silentLogger,
        quiet,
        {},
      );
      expect(issue).toMatchObject({ built: 1, failed: [], usage: { prompt_tokens: 1850, completion_tokens: 45, total_tokens: 1895 } });
      const written = entries()[0]?.task?.problem_statement;
      expect(written).toMatchObject({ kind: 'issue', text: '# Calling the function gives a wrong result\n\nI expected the documented output.', model: 'scripted-model' });
      expect(server.requests).toHaveLength(2);
      const firstAsk = JSON.stringify(server.requests[0]);
      expect(firstAsk).toContain('Never name source files');
      expect(firstAsk).toContain(target?.instance.FAIL_TO_PASS[0]);
      expect(JSON.stringify(server.requests[1])).toContain(`reveals where the fix goes`);
    } finally {
      await server.close();
    }
  });

  it('refuses issue statements without a model, before touching anything', async () => {
    await expect(runTasks({ repo: 'debian:toolz', statement: 'issue', rebuild: true }, settings, silentLogger, quiet, {})).rejects.toThrow(/needs --model/);
  });
});
