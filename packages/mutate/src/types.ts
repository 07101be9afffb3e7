import type { Rng, StrategyFamily as CandidateFamily } from '@envgen/core';
import type { Entity, EntityKind } from '@envgen/python';

/** What a strategy works on: one entity of one Python source, and a seeded random source. */
export interface StrategyInput {
  source: string;
  /** An entity extracted from this same `source` (its byte span must match). */
  entity: Entity;
  /** Repo-relative path of the file, for descriptions and candidate records. */
  path: string;
  rng: Rng;
  /**
   * The lines of `source` (1-based) that ran when the clean suite did: a strategy picks its
   * site among code that ran (a change to code no test runs cannot be proven). Unknown when
   * absent: every site is a candidate.
   */
  executedLines?: ReadonlySet<number>;
}

/** One proposed bug in one file: the whole new source and what was changed. */
export interface MutationEdit {
  newSource: string;
  /** Human-readable account of the change, e.g. "inverted if/else at line 12". */
  description: string;
}

/** Which kind of bug a strategy makes: SWE-smith-style AST operators, deleting code, or reverting to a past version. */
export type StrategyFamily = Extract<CandidateFamily, 'procedural' | 'removal' | 'history'>;

/**
 * A pure bug-injection strategy: picks one site inside the entity at random (seeded) and
 * returns the edited source, or null when the entity has no site for it.
 */
export interface Strategy {
  name: string;
  family: StrategyFamily;
  appliesTo: readonly EntityKind[];
  apply(input: StrategyInput): MutationEdit | null;
}

/** Why a strategy's output was dropped before any test ran. */
export type DropReason = 'no-site' | 'syntax-error' | 'unchanged-tree';

/** The outcome of running one strategy once: a kept edit, or the reason it was dropped. */
export type StrategyOutcome =
  | { status: 'kept'; edit: MutationEdit }
  | { status: 'dropped'; reason: DropReason };
