import type { PhaseSeconds } from './types.js';

/** Times one candidate's phases (see {@link PhaseSeconds}). */
export interface Clock {
  phases: PhaseSeconds;
  /** Ends the phase running since the last lap. */
  lap(phase: string): void;
  /** Adds phases timed elsewhere (a warm run's), which end now. */
  add(phases: PhaseSeconds): void;
  total(): number;
}

/** Starts timing phases now. */
export function startClock(): Clock {
  const started = performance.now();
  let mark = started;
  const phases: PhaseSeconds = {};
  return {
    phases,
    lap(phase) {
      const now = performance.now();
      phases[phase] = (phases[phase] ?? 0) + (now - mark) / 1000;
      mark = now;
    },
    add(more) {
      for (const [phase, seconds] of Object.entries(more)) phases[phase] = (phases[phase] ?? 0) + seconds;
      mark = performance.now();
    },
    total: () => (performance.now() - started) / 1000,
  };
}
