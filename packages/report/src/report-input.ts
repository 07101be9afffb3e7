import type { GrowthRow, RejectionCount, SpreadRow } from '@envgen/pool';

/** The difficulty spread `envgen pool stats --json` prints (its `total`, `byRepo`, `byStrategy`). */
export interface SpreadFigures {
  total: SpreadRow;
  byRepo: SpreadRow[];
  byStrategy: SpreadRow[];
}

/** How many instances a strategy's candidates gave in one inject run. */
export interface StrategyYield {
  tried: number;
  kept: number;
  /** Already in the pool (same id): proven before, not added twice. */
  known: number;
  rejected: number;
}

/** What the report needs of one `envgen inject` run (its `--json` report fits). */
export interface InjectRunSummary {
  /** ISO time the run ended. */
  finishedAt: string;
  repo: string;
  seed: number;
  tried: number;
  kept: number;
  known: number;
  /** Rejected candidates by reason. */
  rejected: Record<string, number>;
  byStrategy: Record<string, StrategyYield>;
  /** Wall seconds of the injection. */
  seconds: number;
  secondsPerKept: number | null;
}

/** What the report needs of one `envgen run` (its `--json` report fits). */
export interface SolverRunSummary {
  finishedAt: string;
  runId: string;
  solver: string;
  model: string | null;
  /** Rollouts scored and recorded. */
  scored: number;
  meanReward: number | null;
  solveRate: number | null;
  /** Mean F1 per localization level over the scored rollouts. */
  levels: { file: number; module: number; entity: number } | null;
  seconds: number;
}

/** The candidates a growth round gave one (repo, strategy) arm, and why. */
export interface RoundArm {
  repo: string;
  strategy: string;
  candidates: number;
  reason: string;
}

/** One growth round (`envgen rounds --json`). */
export interface GrowthRound {
  id: string;
  /** ISO time the round started. */
  started: string;
  plan: RoundArm[];
  candidates: number;
  kept: number;
  secondsPerKept: number | null;
}

/** A frontier instance as the report lists it. */
export interface FrontierEntry {
  instanceId: string;
  repo: string;
  strategy: string;
  attempts: number;
  solveRate: number;
  meanReward: number;
  /** What `envgen show` prints for it. */
  show: string;
}

/** Granularity of the growth timeline. */
export type PeriodUnit = 'minute' | 'hour' | 'day' | 'month';

/** Everything one report shows; gathered from the pool by the CLI, rendered by {@link renderReport}. */
export interface ReportInput {
  /** ISO time the report was made. */
  generatedAt: string;
  /** The pool's directory. */
  pool: string;
  spread: SpreadFigures;
  growth: { unit: PeriodUnit; rows: GrowthRow[] };
  /** Tried instances per solve-rate bin (equal bins over [0, 1]). */
  solveRates: number[];
  rejections: RejectionCount[];
  injectRuns: InjectRunSummary[];
  solverRuns: SolverRunSummary[];
  /** The pool's growth rounds in start order (`envgen rounds`); empty before the first. */
  rounds: GrowthRound[];
  /** The hardest frontier instances, and how many the frontier holds in all. */
  frontier: { total: number; shown: FrontierEntry[] };
}
