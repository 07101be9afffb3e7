import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { openPool } from '@envgen/pool';
import type { GrowthRound } from '@envgen/pool';
import { formatRound } from './grow-command.js';
import { formatTable } from './pool-command.js';

/** `envgen rounds [ID]`: the stored growth rounds, oldest first, or one of them. */
export function runRounds(id: string | undefined, settings: Settings, logger: Logger): GrowthRound[] {
  const pool = openPool(settings.home, { logger });
  try {
    if (id === undefined) return pool.listRounds();
    const round = pool.getRound(id);
    if (round === undefined) throw new EnvgenError('usage', `no round ${id} in the pool at ${settings.home}; list them with: envgen rounds`);
    return [round];
  } finally {
    pool.close();
  }
}

/** The human form: one line per round, or the whole round when one was asked for. */
export function formatRounds(rounds: readonly GrowthRound[], one: boolean): string {
  if (one && rounds[0] !== undefined) return formatRound(rounds[0]);
  if (rounds.length === 0) return 'no growth round yet; run one with: envgen grow --once';
  const rows = rounds.map((round) => [
    round.roundId,
    round.status,
    String(round.seed),
    String(round.budget),
    String(round.arms.reduce((sum, arm) => sum + arm.candidates, 0)),
    String(round.newInstances),
    String(round.bands.frontier),
    String(round.bands['too-hard']),
    String(round.bands['too-easy']),
    String(round.revisited),
    round.solver,
    round.secondsPerKept === null ? '–' : round.secondsPerKept.toFixed(2),
    round.repos.some((repo) => repo.failed !== null) ? 'yes' : '',
  ]);
  return formatTable(
    ['round', 'status', 'seed', 'budget', 'tried', 'new', 'frontier', 'too hard', 'too easy', 'revisited', 'solver', 's/new', 'failures'],
    rows,
    new Set([2, 3, 4, 5, 6, 7, 8, 9, 11]),
  );
}
