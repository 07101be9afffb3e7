import { ERROR_CODES, EnvgenError } from '@envgen/core';

/** What the self-play injector reward is computed from. */
export interface InjectorOutcome {
  /** Whether the injected bug passed every consistency check. */
  checksPassed: boolean;
  /** Fraction of solver rollouts that solved the instance; null when none ran (checks failed). */
  solveRate: number | null;
}

/** Options for {@link injectorReward}. */
export interface InjectorRewardOptions {
  /** Penalty for a bug every solver or no solver solves; ≥ 0, default {@link DEFAULT_INJECTOR_ALPHA}. */
  alpha?: number;
}

/** The default α of the injector reward. */
export const DEFAULT_INJECTOR_ALPHA = 0.8;

/**
 * The self-play injector reward: `-1` if a consistency check fails, `-α` if the solve
 * rate s is 0 or 1 (too hard or trivial), `1 - (1+α)·s` otherwise — highest for bugs
 * solvers rarely but sometimes solve. Throws when α < 0, or when the checks passed and
 * s is missing or outside [0, 1].
 */
export function injectorReward(outcome: InjectorOutcome, options: InjectorRewardOptions = {}): number {
  const alpha = options.alpha ?? DEFAULT_INJECTOR_ALPHA;
  if (!Number.isFinite(alpha) || alpha < 0) {
    throw new EnvgenError(
      ERROR_CODES.internal,
      `injector reward alpha must be a finite number ≥ 0, got ${alpha}; fix the alpha setting`,
    );
  }
  if (!outcome.checksPassed) return -1;
  const s = outcome.solveRate;
  if (s === null || !Number.isFinite(s) || s < 0 || s > 1) {
    throw new EnvgenError(
      ERROR_CODES.internal,
      `injector reward needs a solve rate in [0, 1] when the checks passed, got ${s}; run the solver rollouts first`,
    );
  }
  if (s === 0 || s === 1) return -alpha;
  return 1 - (1 + alpha) * s;
}

/** What the repair reward is computed from. */
export interface RepairOutcome {
  /** Whether FAIL_TO_PASS and PASS_TO_PASS all pass after the agent's fix. */
  allTestsPass: boolean;
}

/** The repair reward: +1 when every test passes after the agent's fix, −1 otherwise. */
export function repairReward(outcome: RepairOutcome): number {
  return outcome.allTestsPass ? 1 : -1;
}
