import type { Pool, GrowthRound as StoredRound } from '@envgen/pool';
import type { GrowthRound } from '@envgen/report';

/** A stored growth round as the report charts it: its plan, the candidates its arms tried, the instances it gained. */
export function reportRound(round: StoredRound): GrowthRound {
  return {
    id: round.roundId,
    started: round.startedAt,
    plan: round.plan.map(({ repo, strategy, candidates, reason }) => ({ repo, strategy, candidates, reason })),
    candidates: round.arms.reduce((sum, arm) => sum + arm.candidates, 0),
    kept: round.newInstances,
    secondsPerKept: round.secondsPerKept,
  };
}

/** The pool's growth rounds (`envgen rounds`), in start order, as the report charts them. */
export function readGrowthRounds(pool: Pool): GrowthRound[] {
  return pool.listRounds().map(reportRound);
}
