import cliProgress from 'cli-progress';

/** Reports the phases of a long command: a live bar on a terminal, plain lines elsewhere. */
export interface Progress {
  /** Starts phase `label`; `total` steps when known (e.g. candidates). */
  phase(label: string, total?: number): void;
  /** Advances the current phase by `steps`. */
  tick(steps?: number): void;
  stop(): void;
}

export interface ProgressOptions {
  /** Where lines go (stderr, so stdout stays clean for --json). */
  stream?: NodeJS.WriteStream;
  /** Nothing at all (e.g. tests). */
  quiet?: boolean;
}

/** A progress reporter: a cli-progress bar on a TTY, one line per phase otherwise. */
export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.quiet) return { phase: () => undefined, tick: () => undefined, stop: () => undefined };
  if (!stream.isTTY) {
    const started = Date.now();
    return {
      phase: (label) => stream.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${label}\n`),
      tick: () => undefined,
      stop: () => undefined,
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream, format: ' {bar} {value}/{total} {phase} ({duration}s)', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    phase: (label, total = 1) => {
      if (!started) {
        bar.start(total, 0, { phase: label });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(0, { phase: label });
      }
    },
    tick: (steps = 1) => bar.increment(steps),
    stop: () => {
      if (started) bar.stop();
    },
  };
}

/** A round's progress: one live bar per stage (inject, tasks, rollouts, write) on a terminal, a line per finished job elsewhere. */
export interface StageProgress {
  start(totals: Readonly<Record<string, number>>): void;
  update(event: { stage: string; repo: string; state: 'active' | 'completed' | 'failed'; detail?: string }): void;
  stop(): void;
}

/** Stage bars for `envgen grow` (stderr; nothing when quiet). */
export function createStageProgress(options: ProgressOptions = {}): StageProgress {
  const stream = options.stream ?? process.stderr;
  if (options.quiet) return { start: () => undefined, update: () => undefined, stop: () => undefined };
  if (!stream.isTTY) {
    const started = Date.now();
    return {
      start: (totals) => stream.write(`[0.0s] round: ${Object.entries(totals).map(([stage, total]) => `${total} ${stage} job(s)`).join(', ')}\n`),
      update: (event) => {
        if (event.state === 'active') return;
        stream.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${event.stage} ${event.repo} ${event.state}${event.detail === undefined ? '' : `: ${event.detail}`}\n`);
      },
      stop: () => undefined,
    };
  }
  const multi = new cliProgress.MultiBar(
    { stream, format: ' {bar} {value}/{total} {stage} {current}', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  return {
    start: (totals) => {
      for (const [stage, total] of Object.entries(totals)) bars.set(stage, multi.create(total, 0, { stage: stage.padEnd(8), current: '' }));
    },
    update: (event) => {
      const bar = bars.get(event.stage);
      if (event.state === 'active') bar?.update({ current: event.repo });
      else bar?.increment(1, { current: event.state === 'failed' ? `${event.repo} failed` : '' });
    },
    stop: () => multi.stop(),
  };
}
