/**
 * One repair evaluation (DESIGN.md's repair reward: a fresh copy of the clean tree, so the
 * listed test files are restored; the bug and the solver's patch applied; the bundle's own
 * test_script.sh | test_parser.py in a fresh sandbox) against the suite's own time (a plain
 * `python3 -m pytest` of the same tests in the same checkout, on the host).
 *
 *   node --conditions=@envgen/source --import tsx bench/repair.ts [runs] [repo...]
 *
 * Per repo (default debian:toolz): injects a few procedural bugs into a scratch pool, takes the
 * first kept one, and times `runs` (default 5) of each, interleaved: plain pytest, and
 * evaluateRepair of the correct fix (the bug reversed; every evaluation must score +1).
 * Prints medians: the whole evaluation, its script part, and evaluation / plain pytest.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '@envgen/config';
import { runInjection } from '@envgen/inject';
import { selectStrategies } from '@envgen/mutate';
import { formatPatch, isPatchProblem, parsePatch, reversePatch } from '@envgen/patch';
import { openPool } from '@envgen/pool';
import { evaluateRepair } from '@envgen/selfplay';
import { injectionTarget, prepareCorpusProject } from '../packages/validate/src/test-helpers.js';
import { formatTable, median } from './stats.js';

const runs = Number(process.argv[2] ?? 5);
const repos = process.argv.slice(3).length > 0 ? process.argv.slice(3) : ['debian:toolz'];
const rows: string[][] = [];

for (const spec of repos) {
  const project = await prepareCorpusProject(spec, undefined, resolveConfig({ env: process.env, cwd: process.cwd() }).githubUrl);
  const home = mkdtempSync(join(tmpdir(), 'envgen-bench-repair-'));
  const pool = openPool(home);
  try {
    const injection = await runInjection({
      ...injectionTarget(project),
      pool,
      count: 6,
      seed: 11,
      combine: 0,
      strategies: selectStrategies(['change_operator', 'remove_assignment']),
    });
    const id = injection.instanceIds[0];
    if (id === undefined) throw new Error(`${spec}: no instance kept to repair`);
    const instance = pool.getInstance(id);
    if (instance === undefined) throw new Error(`${spec}: ${id} is not in the pool`);
    const bug = parsePatch(instance.patch);
    if (isPatchProblem(bug)) throw new Error(bug.message);
    const fix = formatPatch(reversePatch(bug));
    const bundle = pool.readBundle(id);
    const { profile } = project;
    const argv = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...profile.testArgs, ...profile.deselect.flatMap((nodeId) => ['--deselect', nodeId])];
    const plain: number[] = [];
    const whole: number[] = [];
    const script: number[] = [];
    const loadBefore = loadavg()[0] ?? 0;
    for (let run = 0; run < runs; run += 1) {
      const started = performance.now();
      spawnSync(profile.python, argv, { cwd: project.worktree.path, env: { ...process.env, ...profile.env }, stdio: 'pipe' });
      plain.push((performance.now() - started) / 1000);
      const evaluation = await evaluateRepair({
        bundle,
        failToPass: instance.FAIL_TO_PASS,
        passToPass: instance.PASS_TO_PASS,
        patch: fix,
        worktree: project.worktree.path,
        profile,
        sandboxProvider: project.provider,
      });
      if (evaluation.reward !== 1) throw new Error(`${spec}: the correct fix scored ${evaluation.reward}: ${evaluation.failure?.detail ?? ''}`);
      whole.push(evaluation.seconds);
      script.push(evaluation.scriptSeconds ?? 0);
    }
    const [p, w, s] = [median(plain), median(whole), median(script)];
    const tests = instance.FAIL_TO_PASS.length + instance.PASS_TO_PASS.length;
    console.log(`${spec}: ${id} (${tests} tests); plain ${p.toFixed(2)} s, evaluation ${w.toFixed(2)} s (script ${s.toFixed(2)} s)`);
    rows.push([spec, String(tests), `${p.toFixed(2)} s`, `${w.toFixed(2)} s`, `${s.toFixed(2)} s`, `${(w / p).toFixed(2)}×`, `${loadBefore.toFixed(1)}→${(loadavg()[0] ?? 0).toFixed(1)}`]);
  } finally {
    pool.close();
    rmSync(home, { recursive: true, force: true });
    await project.worktree.remove();
  }
}

console.log(`\nOne repair evaluation vs the suite's own time, medians of ${runs} runs\n`);
console.log(formatTable(['repo', 'tests', 'plain pytest', 'evaluation', 'of which script', 'evaluation / plain', 'load'], rows));
