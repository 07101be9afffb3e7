/**
 * Fast validation against the reference (SWE-smith's way: fresh copy, fresh sandbox, full
 * suite per candidate) on the same seeded candidates, with the same parallelism. Prints
 * seconds per kept instance both ways and their ratio, agreement (identical verdicts and
 * F2P/P2P sets, candidate by candidate), yield per strategy, how the fast path ran, and the
 * machine's load.
 *
 *   node --conditions=@envgen/source --import tsx bench/validate.ts [count] [runs] [repo...]
 *
 * A GitHub `owner/name@sha` repo comes from ENVGEN_GITHUB_URL (e.g. file:///srv/git).
 *
 * Bars (issue 3): ≥ 5× faster per kept instance than the reference, 100% agreement.
 */
import { resolveConfig } from '@envgen/config';
import { availableParallelism, loadavg } from 'node:os';
import type { Verdict } from '@envgen/core';
import { createValidator, sameVerdict, validateReference } from '@envgen/validate';
import type { ValidationInput, ValidationOutcome } from '@envgen/validate';
import { TEST_CODE_CACHE, prepareCorpusProject, sampleCandidates } from '../packages/validate/src/test-helpers.js';
import type { CorpusProject } from '../packages/validate/src/test-helpers.js';
import { formatTable, mapPool, median } from './stats.js';

const count = Number(process.argv[2] ?? 60);
const runs = Number(process.argv[3] ?? 1);
const repos = process.argv.length > 4 ? process.argv.slice(4) : ['debian:toolz', 'debian:python-json-patch'];
const seed = 7;
const concurrency = availableParallelism();

/** How two verdicts differ: their kinds or reasons, or the FAIL_TO_PASS and PASS_TO_PASS tests only one of them has. */
function verdictDifference(fast: Verdict, reference: Verdict): string {
  if (fast.kind !== 'instance' || reference.kind !== 'instance') {
    const show = (verdict: Verdict) => (verdict.kind === 'instance' ? `instance of ${verdict.failToPass.length} failing` : `${verdict.reason}: ${verdict.detail.slice(0, 200)}`);
    return `fast ${show(fast)} vs reference ${show(reference)}`;
  }
  const only = (a: readonly string[], b: readonly string[]) => a.filter((id) => !b.includes(id)).join(', ') || 'none';
  return (
    `FAIL_TO_PASS only fast: ${only(fast.failToPass, reference.failToPass)}; only reference: ${only(reference.failToPass, fast.failToPass)}; ` +
    `PASS_TO_PASS only fast: ${only(fast.passToPass, reference.passToPass)}; only reference: ${only(reference.passToPass, fast.passToPass)}`
  );
}

async function runFast(project: CorpusProject, inputs: readonly ValidationInput[]): Promise<{ seconds: number; outcomes: ValidationOutcome[] }> {
  const started = performance.now();
  const validator = await createValidator({
    worktree: project.worktree.path,
    profile: project.profile,
    baseline: project.baseline,
    sandboxProvider: project.provider,
    concurrency,
    codeCache: TEST_CODE_CACHE,
  });
  try {
    // As many candidates in flight as `envgen inject` has (one per sandbox): the validator runs
    // the reference way's candidates as they come, so handing it all at once ran every one of
    // them at the same time (attrs: 18 fresh pytest runs on 2 cores, each 2.8× slower).
    const outcomes = await mapPool(inputs, concurrency, (input) => validator.validateWithDetails(input));
    return { seconds: (performance.now() - started) / 1000, outcomes };
  } finally {
    await validator.close();
  }
}

async function runReference(project: CorpusProject, inputs: readonly ValidationInput[]): Promise<{ seconds: number; verdicts: Verdict[] }> {
  const started = performance.now();
  const verdicts = await mapPool(inputs, concurrency, (input) =>
    validateReference({ worktree: project.worktree.path, profile: project.profile, baseline: project.baseline, sandboxProvider: project.provider, ...input }),
  );
  return { seconds: (performance.now() - started) / 1000, verdicts };
}

const summary: string[][] = [];
for (const spec of repos) {
  const project = await prepareCorpusProject(spec, undefined, resolveConfig({ env: process.env, cwd: process.cwd() }).githubUrl);
  try {
    const inputs = await sampleCandidates(project, count, seed);
    const fastSeconds: number[] = [];
    const referenceSeconds: number[] = [];
    let agreeing = 0;
    let compared = 0;
    let last: { outcomes: ValidationOutcome[]; verdicts: Verdict[] } | null = null;
    const loadBefore = loadavg()[0] ?? 0;
    for (let run = 0; run < runs; run++) {
      const fast = await runFast(project, inputs);
      const reference = await runReference(project, inputs);
      fastSeconds.push(fast.seconds);
      referenceSeconds.push(reference.seconds);
      inputs.forEach((_, index) => {
        compared++;
        if (sameVerdict((fast.outcomes[index] as ValidationOutcome).verdict, reference.verdicts[index] as Verdict)) agreeing++;
      });
      last = { outcomes: fast.outcomes, verdicts: reference.verdicts };
    }
    if (last === null) throw new Error('runs must be at least 1');
    const loadAfter = loadavg()[0] ?? 0;
    const kept = last.verdicts.filter((verdict) => verdict.kind === 'instance').length;
    const perKept = (seconds: number): number => seconds / Math.max(1, kept);
    const fastPerKept = perKept(median(fastSeconds));
    const referencePerKept = perKept(median(referenceSeconds));

    console.log(`\n${project.name}: ${inputs.length} candidates, ${kept} kept, ${Object.keys(project.baseline.results).length} tests, ${concurrency} sandboxes each way, ${runs} run(s)`);
    const byStrategy = new Map<string, { tried: number; kept: number }>();
    const byMode = new Map<string, { count: number; seconds: number; phases: Record<string, number> }>();
    inputs.forEach((input, index) => {
      const entry = byStrategy.get(input.candidate.strategy) ?? { tried: 0, kept: 0 };
      entry.tried++;
      if (last.verdicts[index]?.kind === 'instance') entry.kept++;
      byStrategy.set(input.candidate.strategy, entry);
      const outcome = last.outcomes[index] as ValidationOutcome;
      const modeName = outcome.resumedFrom === 'collection' ? `${outcome.mode} (from collection)` : outcome.mode;
      const mode = byMode.get(modeName) ?? { count: 0, seconds: 0, phases: {} };
      mode.count++;
      mode.seconds += outcome.seconds;
      for (const [phase, seconds] of Object.entries(outcome.phases)) mode.phases[phase] = (mode.phases[phase] ?? 0) + seconds;
      byMode.set(modeName, mode);
      if (!sameVerdict(outcome.verdict, last.verdicts[index] as Verdict)) {
        console.log(`  DISAGREE ${input.candidate.description} (${outcome.why}): ${verdictDifference(outcome.verdict, last.verdicts[index] as Verdict)}`);
      }
    });
    console.log(formatTable(
      ['strategy', 'tried', 'kept', 'yield'],
      [...byStrategy].sort(([a], [b]) => a.localeCompare(b)).map(([name, entry]) => [name, String(entry.tried), String(entry.kept), `${Math.round((100 * entry.kept) / entry.tried)}%`]),
    ));
    console.log(formatTable(
      ['fast mode', 'candidates', 'mean s (per candidate, in its sandbox)', 'mean s per phase'],
      [...byMode].map(([mode, entry]) => [
        mode,
        String(entry.count),
        (entry.seconds / entry.count).toFixed(2),
        Object.entries(entry.phases).map(([phase, seconds]) => `${phase} ${(seconds / entry.count).toFixed(3)}`).join(', '),
      ]),
    ));
    summary.push([
      project.name,
      String(inputs.length),
      String(kept),
      fastPerKept.toFixed(2),
      referencePerKept.toFixed(2),
      `${(referencePerKept / fastPerKept).toFixed(1)}×`,
      `${((100 * agreeing) / compared).toFixed(1)}%`,
      `${loadBefore.toFixed(1)}→${loadAfter.toFixed(1)}`,
    ]);
  } finally {
    await project.worktree.remove();
  }
}
console.log(`\nseconds per kept instance (median of ${runs} run(s); fast includes its start-up):`);
console.log(formatTable(['repo', 'candidates', 'kept', 'envgen s/kept', 'reference s/kept', 'speed-up', 'agreement', 'load 1m'], summary));
