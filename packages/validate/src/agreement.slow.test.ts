import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verdict } from '@envgen/core';
import { validateReference } from './reference.js';
import { prepareCorpusProject, sampleCandidates } from './test-helpers.js';
import type { CorpusProject } from './test-helpers.js';
import type { ValidationInput, ValidationOutcome } from './types.js';
import { createValidator } from './validator.js';

const CANDIDATES = 60;
const SEED = 11;

describe('fast validation on Debian toolz', () => {
  let project: CorpusProject;
  let inputs: ValidationInput[];
  let fast: ValidationOutcome[];

  beforeAll(async () => {
    project = await prepareCorpusProject('debian:toolz');
    inputs = await sampleCandidates(project, CANDIDATES, SEED);
    const validator = await createValidator({
      worktree: project.worktree.path,
      profile: project.profile,
      baseline: project.baseline,
      sandboxProvider: project.provider,
      concurrency: 2,
    });
    try {
      fast = await Promise.all(inputs.map((input) => validator.validateWithDetails(input)));
    } finally {
      await validator.close();
    }
  }, 900_000);

  afterAll(async () => {
    await project.worktree.remove();
  });

  it(`gives the reference's verdict and F2P/P2P sets for each of ${CANDIDATES} seeded candidates`, async () => {
    expect(inputs).toHaveLength(CANDIDATES);
    const comparable = (verdict: Verdict): unknown =>
      verdict.kind === 'instance' ? verdict : { kind: verdict.kind, reason: verdict.reason };
    for (const [index, input] of inputs.entries()) {
      const reference = await validateReference({
        worktree: project.worktree.path,
        profile: project.profile,
        baseline: project.baseline,
        sandboxProvider: project.provider,
        ...input,
      });
      const outcome = fast[index] as ValidationOutcome;
      expect({ candidate: input.candidate.description, verdict: comparable(outcome.verdict) }).toEqual({
        candidate: input.candidate.description,
        verdict: comparable(reference),
      });
    }
    // The sample must exercise both paths and both kinds of verdict to prove anything.
    expect(fast.some((outcome) => outcome.mode === 'resumed' && outcome.verdict.kind === 'instance')).toBe(true);
    expect(fast.some((outcome) => outcome.mode === 'suite')).toBe(true);
    expect(fast.some((outcome) => outcome.verdict.kind === 'rejected')).toBe(true);
  }, 1_800_000);
});
