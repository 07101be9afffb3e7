import type { Candidate, Logger, Verdict } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import type { SandboxProvider } from '@envgen/sandbox';
import type { Baseline, TestResult } from '@envgen/testrun';
import type { CandidateLimits } from './verdict.js';

/** One file of a candidate as the bug leaves it: repo-relative path and whole new content. */
export interface MutatedFile {
  path: string;
  after: string;
}

/**
 * What validation takes: the candidate (its patch is what gets stored) and the mutated
 * contents of the files it changes, so the hot path never parses or applies a diff. The
 * files must be exactly the patch applied to the clean tree.
 */
export interface ValidationInput {
  candidate: Candidate;
  files: MutatedFile[];
}

/** What both validation paths share. */
export interface ValidationContext {
  /** Host path of the clean checkout the baseline was built from; never modified. */
  worktree: string;
  profile: Profile;
  baseline: Baseline;
  sandboxProvider: SandboxProvider;
  /** Time limits of one candidate's run (default: `candidateLimits(profile, baseline)`). */
  limits?: CandidateLimits;
  logger?: Logger;
}

/** Options of `createValidator`. */
export interface ValidatorOptions extends ValidationContext {
  /** Sandboxes (each with its own worktree copy and warm interpreter) run in parallel; default: the cores. */
  concurrency?: number;
  /**
   * Host directory where warm interpreters keep pytest's assertion rewrites of the clean test
   * files, content-addressed, for later ones (of this validator or later runs) to read
   * instead of rewriting: most of a small suite's start-up (e.g. `<home>/code-cache`). The
   * first worker then preloads alone and the others read what it wrote. Without it, every
   * warm interpreter rewrites the test files itself.
   */
  codeCache?: string;
}

/** How the fast path proved a verdict, for benchmarks and logs. */
export type ValidationMode =
  /**
   * The changed function bodies run only inside tests: the run went on from a checkpoint of
   * the clean suite at or before the first test that runs them, with their code swapped in,
   * through every later test; the tests before it passed as in the clean run.
   */
  | 'resumed'
  /**
   * The whole suite ran in the warm interpreter (class-, module- or import-time code changed),
   * from the checkpoint before collection or from scratch.
   */
  | 'suite'
  /** Fresh sandbox and full suite, as the reference does (the warm run could not be trusted). */
  | 'reference';

/**
 * Seconds per phase of one candidate on the fast path: `resolve` (read the clean files),
 * `plan`, then per warm run `write` (files into the tree), `request` (socket round trip and
 * reading the results, `child` of it inside the forked pytest), `restore` and `check` (the
 * tree is clean again); a second run (the whole suite after a resumed run near the limit)
 * adds to the same phases.
 */
export type PhaseSeconds = Record<string, number>;

/** A verdict with how it was reached. */
export interface ValidationOutcome {
  verdict: Verdict;
  mode: ValidationMode;
  /** Why that mode ("toolz/itertoolz.py:groupby body", "class-level change in ..."). */
  why: string;
  /** Tests run for this verdict. */
  testsRun: number;
  /** The checkpoint the warm run went on from: `collection`, or a test's node id. */
  resumedFrom?: string;
  /**
   * Why no checkpoint (or not the one planned) could serve this candidate, when that
   * happened: what the checkpoint could not prove safe, e.g. "a thread is running".
   */
  declined?: string[];
  seconds: number;
  phases: PhaseSeconds;
}

/** The fast validator: same verdicts and FAIL_TO_PASS/PASS_TO_PASS sets as the reference. */
export interface Validator {
  validate(input: ValidationInput): Promise<Verdict>;
  /** Like {@link Validator.validate}, with how the verdict was reached. */
  validateWithDetails(input: ValidationInput): Promise<ValidationOutcome>;
  /**
   * Collects only the `select`ed test paths with `files` written into the tree, in a warm
   * interpreter (from the checkpoint before collection, or from scratch), and runs those of
   * the `only` tests that are collected: for checks of envgen's own bundles that need no
   * more of the suite. A test of `only` missing from the results is gone. Changed test files
   * are collected with plain asserts unless a test of `only` runs (then it runs again with
   * pytest's assertion rewriting). Not ok for a file pytest itself imports when it starts
   * (a candidate {@link Validator.validateWithDetails} validates the reference way): run such
   * checks cold.
   */
  runSelected(files: readonly MutatedFile[], select: readonly string[], only: readonly string[]): Promise<SelectedRun>;
  /**
   * pytest's output with short tracebacks (`--tb=short`) of running the tests `nodeIds` with
   * `files` written into the tree, in a warm interpreter from the checkpoint before
   * collection: what `pytest --tb=short <nodeIds>` prints from collection on, for the `tests`
   * problem statements of the bugs this validator proved. Null when no warm interpreter ran
   * it to the end, when one of the tests did not fail there, or when tests behave otherwise
   * warm (then run it cold).
   */
  failureOutput(files: readonly MutatedFile[], nodeIds: readonly string[]): Promise<string | null>;
  /**
   * Counts `nodeIds` flaky from now on: tests another run saw otherwise than the runs this
   * validator trusts (a cold clean run of the suite that named them otherwise or did not see
   * them pass; two runs of one bug's tree that differed on them). They are in no later
   * FAIL_TO_PASS or PASS_TO_PASS, and a warm clean run that differed on them no longer sends
   * candidates the reference way.
   */
  noteFlaky(nodeIds: readonly string[]): void;
  /**
   * Stable tests of the baseline that passed in one of this validator's warm clean runs (one
   * per sandbox, and the traced one) and not in another: flaky from its start, in no
   * FAIL_TO_PASS or PASS_TO_PASS.
   */
  readonly warmFlaky: readonly string[];
  /** Stops the warm interpreters, disposes the sandboxes and removes the worktree copies. */
  close(): Promise<void>;
}

/** What {@link Validator.runSelected} saw: how the run ended, each test's outcome, and the selected files that did not collect. */
export type SelectedRun = { ok: true; results: Record<string, TestResult>; uncollected: string[] } | { ok: false; reason: string };
