import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { EnvgenError } from '@envgen/core';
import { readQueueStatus } from '@envgen/grow';
import type { QueueConnection, SolverSpec } from '@envgen/grow';
import { createContext } from './context.js';
import type { GlobalOptions } from './context.js';
import { formatRound, listenForStop, runGrow } from './grow-command.js';
import type { GrowOptions } from './grow-command.js';
import { createProgress, createStageProgress } from './progress.js';
import { formatQueueStatus } from './queue-command.js';
import { formatReposList, runReposAdd, runReposList, runReposRemove } from './repos-command.js';
import { formatRounds, runRounds } from './rounds-command.js';
import { runWorker } from './worker-command.js';

/** What the growth commands need from the program: its io, exit code and shared option helpers. */
export interface GrowProgramDeps {
  io: { stdout: (text: string) => void; stderr: (text: string) => void; env: Record<string, string | undefined> };
  setExit: (code: number) => void;
  addGlobalOptions: (command: Command) => Command;
  parseCount: (value: string) => number;
}

function parseNumber(value: string): number {
  const x = Number(value);
  if (value.trim() === '' || !Number.isFinite(x) || x < 0) throw new InvalidArgumentError('expected a number >= 0');
  return x;
}

/** `--redis` or ENVGEN_REDIS_URL, with `--queue-prefix` (tests and separate deployments). */
function redisOf(options: { redis?: string; queuePrefix?: string }, env: Record<string, string | undefined>): QueueConnection | undefined {
  const url = options.redis ?? env['ENVGEN_REDIS_URL'];
  if (url === undefined || url === '') return undefined;
  if (!/^rediss?:\/\//.test(url)) throw new EnvgenError('usage', `--redis must be a redis:// URL, got ${JSON.stringify(url)}`);
  return { url, ...(options.queuePrefix === undefined ? {} : { prefix: options.queuePrefix }) };
}

function addRedisOptions(command: Command): Command {
  return command
    .option('--redis <url>', 'BullMQ on this Redis, e.g. redis://127.0.0.1:6379 (env ENVGEN_REDIS_URL)')
    .option('--queue-prefix <prefix>', 'key prefix of the queues (default envgen)');
}

interface GrowFlags
  extends GlobalOptions,
    Pick<GrowOptions, 'every' | 'budget' | 'rollouts' | 'minAttempts' | 'seed' | 'revisit' | 'explore' | 'shardCandidates' | 'localWorkers' | 'lockSeconds'> {
  once?: boolean;
  strategies?: string;
  solver: 'baseline' | 'agent';
  model?: string;
  baseUrl?: string;
  toolFormat?: 'auto' | 'native' | 'hermes';
  maxTurns?: number;
  retries?: number;
  redis?: string;
  queuePrefix?: string;
}

function solverOf(flags: GrowFlags): SolverSpec {
  if (flags.solver === 'baseline') return { kind: 'baseline' };
  if (flags.model === undefined) throw new EnvgenError('usage', '--solver agent needs --model (and --base-url of an OpenAI-compatible server)');
  return {
    kind: 'agent',
    model: flags.model,
    ...(flags.baseUrl === undefined ? {} : { baseUrl: flags.baseUrl }),
    ...(flags.toolFormat === undefined ? {} : { toolFormat: flags.toolFormat }),
    ...(flags.maxTurns === undefined ? {} : { maxTurns: flags.maxTurns }),
  };
}

/** Registers `repos`, `grow`, `worker`, `rounds` and `queue` on the program. */
export function registerGrowCommands(program: Command, deps: GrowProgramDeps): void {
  const { io, setExit, addGlobalOptions, parseCount } = deps;
  const json = (options: GlobalOptions, value: unknown, text: string) => io.stdout(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);

  const repos = program.command('repos').description('The repos growth rounds grow: register, list, unregister.');
  addGlobalOptions(
    repos
      .command('add')
      .description('Register a repo for growth rounds (acquired once now, so a bad spec fails here).')
      .argument('<repo>', 'owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
      .option('--weight <w>', "multiplies the repo's share of a round's sampled budget (default 1)", parseNumber),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen repos add debian:toolz\n  $ envgen repos add pytoolz/toolz@0.12.1 --weight 2')
    .action(async (spec: string, options: GlobalOptions & { weight?: number }) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const report = await runReposAdd({ spec, ...(options.weight === undefined ? {} : { weight: options.weight }) }, settings, logger, progress);
        progress.stop();
        json(options, report, `${report.added ? 'registered' : 'updated'} ${report.repo} (${report.spec} @ ${report.commit.slice(0, 8)}, weight ${report.weight})`);
      } finally {
        progress.stop();
      }
    });
  addGlobalOptions(repos.command('list').description('List the registered repos with their weight and instance count.'))
    .addHelpText('after', '\nExamples:\n  $ envgen repos list\n  $ envgen repos list --json')
    .action((options: GlobalOptions) => {
      const { settings, logger } = createContext(options, io.env);
      const listed = runReposList(settings, logger);
      json(options, listed, formatReposList(listed));
    });
  addGlobalOptions(
    repos
      .command('remove')
      .description('Unregister a repo; its instances stay in the pool.')
      .argument('<repo>', 'owner/name, or the spec it was added with'),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen repos remove debian/toolz')
    .action((repo: string, options: GlobalOptions) => {
      const { settings, logger } = createContext(options, io.env);
      const report = runReposRemove(repo, settings, logger);
      json(options, report, `unregistered ${repo}`);
    });

  addGlobalOptions(
    addRedisOptions(
      program
        .command('grow')
        .description(
          "Grow the pool: a round splits a candidate budget over (repo, strategy) arms by the pool's solve rates (Thompson sampling with an exploration floor), injects, builds tasks, runs the solver on new and frontier instances, and stores the round. In this process, or as BullMQ jobs with --redis.",
        )
        .option('--once', 'run one round now')
        .option('--every <cron>', 'run rounds on this cron schedule until stopped, e.g. "0 2 * * *"')
        .option('--budget <n>', 'candidates per round', parseCount, 100)
        .option('--rollouts <k>', 'solver rollouts per instance', parseCount, 4)
        .option('--min-attempts <n>', 'attempts before an instance has a band (default --rollouts)', parseCount)
        .option('--seed <n>', 'seed of the plan and the bugs (default: the number of rounds so far)', parseCount)
        .option('--revisit <n>', 'earlier unbanded or frontier instances to run the solver on again (default 20)', parseCount)
        .option('--strategies <names>', 'comma-separated strategies whose arms share the budget (default: all procedural and removal)')
        .addOption(new Option('--solver <solver>', 'baseline: BM25, offline; agent: a model through --base-url').choices(['baseline', 'agent']).default('baseline'))
        .option('--model <name>', 'the agent\'s model')
        .option('--base-url <url>', 'OpenAI-compatible endpoint of the agent (key from OPENAI_API_KEY where the rollouts run)')
        .addOption(new Option('--tool-format <format>', 'how tools reach the model').choices(['auto', 'native', 'hermes']))
        .option('--max-turns <n>', 'model calls per episode', parseCount)
        .option('--explore <x>', 'share of the budget spread evenly over every arm (default 0.2)', parseNumber)
        .option('--shard-candidates <n>', 'candidates per inject job at most (default 25)', parseCount)
        .option('--retries <n>', 'tries per job before it fails with its reason (default 3)', parseCount)
        .option('--local-workers <n>', 'with --redis: jobs this process also works on (default 1; 0 leaves them to envgen worker)', parseCount)
        .option('--lock-seconds <s>', 'with --redis: a killed worker\'s job runs again after about this long (default 30)', parseCount),
    ),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen repos add debian:toolz && envgen grow --once --budget 60\n  $ envgen grow --every "0 2 * * *"\n  $ envgen grow --every "0 2 * * *" --redis redis://queue:6379 --local-workers 0   # the pool host; start envgen worker elsewhere\n  $ envgen grow --once --solver agent --model OpenHands/CodeScout-1.7B --base-url http://gpu:8000/v1',
    )
    .action(async (flags: GrowFlags) => {
      if ((flags.once === true) === (flags.every !== undefined)) throw new EnvgenError('usage', 'pass either --once or --every CRON');
      const { settings, logger } = createContext(flags, io.env);
      const redis = redisOf(flags, io.env);
      const options: GrowOptions = {
        budget: flags.budget,
        rollouts: flags.rollouts,
        solver: solverOf(flags),
        ...(flags.every === undefined ? {} : { every: flags.every }),
        ...(flags.minAttempts === undefined ? {} : { minAttempts: flags.minAttempts }),
        ...(flags.seed === undefined ? {} : { seed: flags.seed }),
        ...(flags.revisit === undefined ? {} : { revisit: flags.revisit }),
        ...(flags.strategies === undefined ? {} : { strategies: flags.strategies.split(',').map((name) => name.trim()).filter(Boolean) }),
        ...(flags.explore === undefined ? {} : { explore: flags.explore }),
        ...(flags.shardCandidates === undefined ? {} : { shardCandidates: flags.shardCandidates }),
        ...(flags.retries === undefined ? {} : { attempts: Math.max(1, flags.retries) }),
        ...(redis === undefined ? {} : { redis }),
        ...(flags.localWorkers === undefined ? {} : { localWorkers: flags.localWorkers }),
        ...(flags.lockSeconds === undefined ? {} : { lockSeconds: Math.max(1, flags.lockSeconds) }),
      };
      const signals = listenForStop();
      try {
        const rounds = await runGrow(options, settings, logger, createStageProgress({ quiet: flags.json === true }), io.env, signals.stop, (round) => {
          if (flags.json && flags.every !== undefined) io.stdout(`${JSON.stringify(round)}\n`);
          else if (!flags.json) io.stdout(`${formatRound(round)}\n\n`);
        });
        if (flags.json && flags.every === undefined) io.stdout(`${JSON.stringify(rounds[0] ?? null, null, 2)}\n`);
        if (flags.every === undefined && rounds[0]?.status !== 'done') setExit(1);
      } finally {
        signals.dispose();
      }
    });

  addGlobalOptions(
    addRedisOptions(
      program
        .command('worker')
        .description("Work on growth jobs from BullMQ (inject shards, tasks, rollouts) with this machine's home and sandboxes, until stopped: SIGTERM or Ctrl-C finishes the active jobs, a second one hands them back.")
        .option('--concurrency <n>', 'jobs at once (default 1)', parseCount)
        .option('--lock-seconds <s>', 'a killed worker\'s job runs again after about this long (default 30)', parseCount),
    ),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen worker --redis redis://queue:6379\n  $ ENVGEN_REDIS_URL=redis://queue:6379 envgen worker --concurrency 2 --sandbox docker')
    .action(async (flags: GlobalOptions & { redis?: string; queuePrefix?: string; concurrency?: number; lockSeconds?: number }) => {
      const { settings, logger } = createContext(flags, io.env);
      const redis = redisOf(flags, io.env);
      if (redis === undefined) throw new EnvgenError('usage', 'envgen worker needs --redis URL (or ENVGEN_REDIS_URL)');
      const signals = listenForStop();
      try {
        await runWorker(
          { redis, ...(flags.concurrency === undefined ? {} : { concurrency: Math.max(1, flags.concurrency) }), ...(flags.lockSeconds === undefined ? {} : { lockSeconds: Math.max(1, flags.lockSeconds) }) },
          settings,
          logger,
          io.env,
          signals.stop,
          signals.force,
        );
      } finally {
        signals.dispose();
      }
    });

  addGlobalOptions(
    program
      .command('rounds')
      .description('List the growth rounds stored in the pool, or show one: its plan per arm and why, what it produced, bands, time per new instance.')
      .argument('[round]', 'a round id (see envgen rounds)'),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen rounds\n  $ envgen rounds 20261124-020000-s3\n  $ envgen rounds --json | jq ".[-1].plan"')
    .action((id: string | undefined, options: GlobalOptions) => {
      const { settings, logger } = createContext(options, io.env);
      const rounds = runRounds(id, settings, logger);
      json(options, id === undefined ? rounds : rounds[0], formatRounds(rounds, id !== undefined));
    });

  const queue = program.command('queue').description('Inspect the BullMQ queues of growth rounds.');
  addGlobalOptions(addRedisOptions(queue.command('status').description('The round in progress, the schedule, waiting / active / failed jobs with their reasons, connected workers.')))
    .addHelpText('after', '\nExamples:\n  $ envgen queue status --redis redis://127.0.0.1:6379\n  $ envgen queue status --json')
    .action(async (flags: GlobalOptions & { redis?: string; queuePrefix?: string }) => {
      const redis = redisOf(flags, io.env);
      if (redis === undefined) throw new EnvgenError('usage', 'envgen queue status needs --redis URL (or ENVGEN_REDIS_URL)');
      const status = await readQueueStatus(redis);
      json(flags, status, formatQueueStatus(status));
    });
}
