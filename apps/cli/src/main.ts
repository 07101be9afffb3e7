import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { EnvgenError, describeError, isEnvgenError } from '@envgen/core';
import { createContext } from './context.js';
import type { GlobalOptions } from './context.js';
import { formatCheckReport, runCheck } from './check-command.js';
import { runEnv } from './env-command.js';
import { FAMILY_CHOICES, explainEmptyExport, formatExportReport, parseBands, parseFormats, runExport } from './export-command.js';
import type { Band } from '@envgen/pool';
import type { ExportFormat } from '@envgen/export';
import type { StrategyFamily } from '@envgen/core';
import { formatInjectReport, runInject } from './inject-command.js';
import { registerGrowCommands } from './grow-program.js';
import { formatEnvReport, verdict } from './format-env.js';
import { formatPoolList, runPoolList } from './pool-command.js';
import { formatRepairReport, runRepairRun } from './repair-command.js';
import { formatSelfPlayReport, readSelfPlayFlags, runSelfPlayCommand } from './selfplay-command.js';
import type { SelfPlayFlags } from './selfplay-command.js';
import { formatRunReport, runRun } from './run-command.js';
import type { RunOptions } from './run-command.js';
import { formatPoolStats, runPoolStats } from './pool-stats.js';
import { formatReportSummary, runReport } from './report-command.js';
import { DEFAULT_SERVE_PORT, SOLVE_LEVELS, createServiceLogger, readServeFlags, readSolveFlags, runServe } from './serve-command.js';
import type { ServeFlags } from './serve-command.js';
import { createProgress } from './progress.js';
import { STATEMENT_KINDS, formatShowReport, formatTasksReport, runMaterialize, runShow, runTasks } from './tasks-command.js';
import type { StatementOptions } from './tasks-command.js';

/** Exit codes of every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
}

const defaultIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

function addGlobalOptions(command: Command): Command {
  return command
    .option('--home <dir>', 'cache and data directory (env ENVGEN_HOME)')
    .option('--config <file>', 'config file (env ENVGEN_CONFIG; default ./envgen.config.json, ~/.config/envgen/config.json)')
    .addOption(new Option('--sandbox <kind>', 'where untrusted code runs (env ENVGEN_SANDBOX)').choices(['local', 'docker', 'none']))
    .addOption(new Option('--log-level <level>', 'log detail (env ENVGEN_LOG_LEVEL)').choices(['debug', 'info', 'warn', 'error', 'silent']))
    .option('--json', 'print one JSON object instead of text');
}

/** The flags of `serve` and `run` that decide when a rollout solved its instance. */
function addSolveOptions(command: Command): Command {
  return command
    .option('--solved-by <level>', `score that decides whether a rollout solved its instance: ${SOLVE_LEVELS.join(', ')} (default entity)`)
    .option('--solved-threshold <x>', 'minimum score that counts as solved (default the maximum: 1, or 3 for total)');
}

/** The problem-statement flags of `inject` and `tasks`. */
function addStatementOptions(command: Command): Command {
  return command
    .addOption(new Option('--statement <kind>', 'problem statements: failing tests and their output, the reversed test weakening, or an LLM-written issue').choices([...STATEMENT_KINDS]).default('tests'))
    .option('--model <name>', 'model writing issue statements (OpenAI-compatible endpoint)')
    .option('--base-url <url>', 'OpenAI-compatible endpoint, e.g. http://localhost:8000/v1')
    .option('--api-key <key>', 'API key of the endpoint (env OPENAI_API_KEY)')
    .option('--issue-examples <file>', 'Markdown file of real issues (separated by lines of ---) to imitate');
}

interface StatementFlags {
  statement: StatementOptions['statement'];
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  issueExamples?: string;
}

function statementOptions(flags: StatementFlags): StatementOptions {
  return {
    statement: flags.statement,
    ...(flags.model === undefined ? {} : { model: flags.model }),
    ...(flags.baseUrl === undefined ? {} : { baseUrl: flags.baseUrl }),
    ...(flags.apiKey === undefined ? {} : { apiKey: flags.apiKey }),
    ...(flags.issueExamples === undefined ? {} : { issueExamples: flags.issueExamples }),
  };
}

function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(value);
}

function parseFloatAtLeastZero(value: string): number {
  const x = Number(value);
  if (value.trim() === '' || !Number.isFinite(x) || x < 0) throw new InvalidArgumentError('expected a number >= 0');
  return x;
}

function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('envgen')
    .description('Turn real Python repositories into verified training environments for code agents.')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride();

  addGlobalOptions(
    program
      .command('env')
      .description("Check that envgen can run a repo's tests safely: acquire it, detect how to test it, run the clean suite twice in the sandbox with coverage.")
      .requiredOption('--repo <repo>', 'owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
      .option('--refresh', 'rebuild the baseline even when a cached one exists'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen env --repo debian:toolz\n  $ envgen env --repo pytoolz/toolz@0.12.1 --sandbox docker --json\n  $ envgen env --repo ./my-project --refresh',
    )
    .action(async (options: GlobalOptions & { repo: string; refresh?: boolean }) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const report = await runEnv({ repo: options.repo, refresh: options.refresh }, settings, logger, progress);
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatEnvReport(report)}\n`);
        if (report.tests.passed === 0) {
          if (options.json) io.stderr(`${verdict(report)}\n`);
          setExit(EXIT.failed);
        }
      } finally {
        progress.stop();
      }
    });

  addGlobalOptions(
    program
      .command('check')
      .description('Check a bug bundle made anywhere against a clean checkout: the seven consistency checks of DESIGN.md, each with its evidence.')
      .argument('<bundle>', 'bundle directory (bug_inject.diff, test_weaken.diff, test_files.txt, test_script.sh, test_parser.py)')
      .requiredOption('--repo <repo>', 'the repo the bundle was made for: owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
      .option('--min-clean-passing <n>', 'tests that must pass on the clean repo (default 1)', parseCount)
      .option('--min-source-files <n>', 'source files the bug must change (default 1)', parseCount)
      .option('--min-broken <n>', 'clean-passing tests the bug must break (default 1)', parseCount),
  )
    .addHelpText(
      'after',
      '\nThe test script runs with the repo root as its working directory, in the sandbox.\nExit code: 0 when every check passes, 1 when one fails, 2 on bad usage.\n\nExamples:\n  $ envgen check ./bundles/toolz-groupby --repo debian:toolz\n  $ envgen check ./bundle --repo ./my-project --min-broken 2 --json',
    )
    .action(async (bundle: string, options: GlobalOptions & { repo: string; minCleanPassing?: number; minSourceFiles?: number; minBroken?: number }) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const thresholds = {
          ...(options.minCleanPassing === undefined ? {} : { minCleanPassing: options.minCleanPassing }),
          ...(options.minSourceFiles === undefined ? {} : { minSourceFiles: options.minSourceFiles }),
          ...(options.minBroken === undefined ? {} : { minBroken: options.minBroken }),
        };
        const report = await runCheck({ bundle, repo: options.repo, thresholds }, settings, logger, progress);
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatCheckReport(report)}\n`);
        if (!report.passed) setExit(EXIT.failed);
      } finally {
        progress.stop();
      }
    });

  const pool = program.command('pool').description('Inspect the pool of instances envgen has made.');
  addGlobalOptions(
    pool
      .command('list')
      .description('List the instances in the pool with their test counts, and how many there are per repo and strategy.')
      .option('--repo <owner/name>', 'only instances of this repo')
      .option('--strategy <name>', 'only instances made by this strategy')
      .option('--limit <n>', 'instances to list; 0 lists all (the counts always cover every match)', parseCount, 50),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen pool list\n  $ envgen pool list --repo pytoolz/toolz --strategy change_operator --limit 0\n  $ envgen pool list --json | jq .byStrategy',
    )
    .action(async (options: GlobalOptions & { repo?: string; strategy?: string; limit: number }) => {
      const { settings, logger } = createContext(options, io.env);
      const report = await runPoolList({ repo: options.repo, strategy: options.strategy, limit: options.limit }, settings, logger);
      io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatPoolList(report)}\n`);
    });

  addGlobalOptions(
    pool
      .command('stats')
      .description('Show how the instances spread over difficulty, per repo and per strategy: untried, too hard (solve rate 0), frontier (between 0 and 1), too easy (1), attempts and mean reward.')
      .option('--repo <owner/name>', 'only instances of this repo')
      .option('--strategy <name>', 'only instances made by this strategy'),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen pool stats\n  $ envgen pool stats --repo pytoolz/toolz\n  $ envgen pool stats --json | jq .byStrategy')
    .action(async (options: GlobalOptions & { repo?: string; strategy?: string }) => {
      const { settings, logger } = createContext(options, io.env);
      const report = await runPoolStats({ repo: options.repo, strategy: options.strategy }, settings, logger);
      io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatPoolStats(report)}\n`);
    });

  addGlobalOptions(
    program
      .command('report')
      .description('Write the pool report: one self-contained HTML file (static SVG charts, no script, no network) with the difficulty spread, pool growth, yield, solvers, growth rounds, validation speed and the frontier. envgen serve serves it live at /report.')
      .option('--out <file>', 'HTML file to write', 'report.html'),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen report --out report.html\n  $ envgen report --home /data/envgen --out artifacts/pool.html --json')
    .action(async (options: GlobalOptions & { out: string }) => {
      const { settings, logger } = createContext(options, io.env);
      const report = await runReport({ out: options.out }, settings, logger);
      io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReportSummary(report)}\n`);
    });

  addGlobalOptions(
    addSolveOptions(
      program
        .command('serve')
        .description('Serve the reward API over HTTP for trainers: score localizations against the pool gold, injector rewards, outcomes, instance stats. Logs JSON lines on stderr; stops gracefully on SIGINT/SIGTERM.')
        .option('--host <addr>', 'interface to bind (default 127.0.0.1, this machine only)')
        .option('--port <n>', `port (default ${DEFAULT_SERVE_PORT}; 0 picks a free one)`)
        .option('--token <secret>', 'require Authorization: Bearer <secret> on every request (env ENVGEN_SERVE_TOKEN)'),
    ),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen serve\n  $ ENVGEN_SERVE_TOKEN=s3cret envgen serve --host 0.0.0.0 --port 8750\n  $ curl -s localhost:8750/v1/health',
    )
    .action(async (options: GlobalOptions & ServeFlags) => {
      const { settings } = createContext(options, io.env);
      const logger = createServiceLogger(io.stderr, settings.logLevel);
      const { host, port, token, solvedBy, solvedThreshold } = options;
      const server = await runServe(readServeFlags({ host, port, token, solvedBy, solvedThreshold }, io.env), settings, logger);
      io.stdout(options.json ? `${JSON.stringify({ url: server.url, home: settings.home })}\n` : `envgen reward server on ${server.url} (home ${settings.home}); Ctrl-C stops it\n`);
      await server.closed;
      logger.flush();
    });

  addGlobalOptions(
    addStatementOptions(
      program
        .command('inject')
      .description('Inject bugs into a repo and keep the ones its tests prove: candidates from every strategy on covered code, validated, weakened, checked, stored in the pool.')
      .requiredOption('--repo <repo>', 'owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
      .option('-n, --count <n>', 'candidates to try', parseCount, 100)
      .option('--seed <n>', 'seed of every random choice (same seed, same instance ids)', parseCount, 0)
      .option('--strategies <names>', 'comma-separated strategy names (default: all)')
      .option('--combine <n>', "combinations of this run's bugs to try (default: a tenth of -n)", parseCount)
      .option('--concurrency <n>', 'parallel sandboxes (default: the cores)', parseCount)
      .option('--no-tasks', 'do not build tasks (labels, statements, environments) for the new instances'),
    ),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen inject --repo debian:toolz -n 100 --seed 7\n  $ envgen inject --repo ./my-project -n 20 --strategies change_operator,remove_function_body --json\n  $ envgen inject --repo debian:toolz -n 50 --statement issue --model Qwen/Qwen3-8B --base-url http://localhost:8000/v1',
    )
    .action(async (options: GlobalOptions & StatementFlags & { repo: string; count: number; seed: number; strategies?: string; combine?: number; concurrency?: number; tasks: boolean }) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const report = await runInject(
          {
            repo: options.repo,
            count: options.count,
            seed: options.seed,
            ...(options.strategies === undefined ? {} : { strategies: options.strategies.split(',').map((name) => name.trim()).filter(Boolean) }),
            ...(options.combine === undefined ? {} : { combine: options.combine }),
            ...(options.concurrency === undefined ? {} : { concurrency: Math.max(1, options.concurrency) }),
            tasks: options.tasks ? statementOptions(options) : null,
          },
          settings,
          logger,
          progress,
          io.env,
        );
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatInjectReport(report)}\n`);
        if (report.tasks !== null && report.tasks.failed.length > 0) setExit(EXIT.failed);
      } finally {
        progress.stop();
      }
    });

  addGlobalOptions(
    addStatementOptions(
      program
        .command('tasks')
        .description("Build the tasks of a repo's instances: gold labels of the fix, a problem statement, and a leak-free environment ref.")
        .requiredOption('--repo <repo>', 'the repo the instances were injected into: owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
        .option('--rebuild', 'rebuild tasks that exist (e.g. to switch statement kind)')
        .option('--limit <n>', 'instances to build at most', parseCount),
    ),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen tasks --repo debian:toolz\n  $ envgen tasks --repo debian:toolz --rebuild --statement self-play\n  $ envgen tasks --repo debian:toolz --rebuild --statement issue --model gpt-4o-mini --base-url https://api.openai.com/v1',
    )
    .action(async (options: GlobalOptions & StatementFlags & { repo: string; rebuild?: boolean; limit?: number }) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const report = await runTasks(
          { repo: options.repo, ...statementOptions(options), ...(options.rebuild === undefined ? {} : { rebuild: true }), ...(options.limit === undefined ? {} : { limit: options.limit }) },
          settings,
          logger,
          progress,
          io.env,
        );
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatTasksReport(report)}\n`);
        if (report.failed.length > 0) setExit(EXIT.failed);
      } finally {
        progress.stop();
      }
    });

  addGlobalOptions(
    program
      .command('show')
      .description('Show an instance: its bug, tests, gold labels, problem statement and outcomes.')
      .argument('<instance>', 'instance id (see envgen pool list)'),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen show debian__toolz.1a2b3c4d.change_operator__5e6f7a8b\n  $ envgen show debian__toolz.1a2b3c4d.change_operator__5e6f7a8b --json | jq .task.file_changes')
    .action(async (id: string, options: GlobalOptions) => {
      const { settings, logger } = createContext(options, io.env);
      const report = await runShow(id, settings, logger);
      io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatShowReport(report)}\n`);
    });

  addGlobalOptions(
    program
      .command('materialize')
      .description("Check an instance's buggy tree out for an agent: one commit, no history, remote or object that holds the fix.")
      .argument('<instance>', 'instance id (see envgen pool list)')
      .argument('<dir>', 'new or empty directory'),
  )
    .addHelpText('after', '\nExamples:\n  $ envgen materialize debian__toolz.1a2b3c4d.change_operator__5e6f7a8b /tmp/work')
    .action(async (id: string, dir: string, options: GlobalOptions) => {
      const { settings, logger } = createContext(options, io.env);
      const report = await runMaterialize(id, dir, settings, logger);
      io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${report.instance_id} checked out at ${report.dir} (commit ${report.commit.slice(0, 12)})\n`);
    });

  addGlobalOptions(
    addSolveOptions(
      program
        .command('run')
        .description("Run a solver on the pool's tasks: each instance checked out leak-free, a CodeScout-style agent (an OpenAI-compatible model with terminal and localization_finish tools, bash in the sandbox) or the BM25 baseline localizes the bug, the answer is scored and recorded, trajectories go to JSONL.")
        .option('--repo <owner/name>', 'only instances of this repo')
        .option('--strategy <name>', 'only instances made by this strategy')
        .option('--limit <n>', 'instances to run at most (default: all with a task)', parseCount)
        .option('--attempts <n>', 'rollouts per instance', parseCount, 1)
        .addOption(new Option('--task <task>', 'localization: find the code to change (scored 0-3); repair: fix it (terminal, str_replace_editor, submit; scored ±1 by the tests in a fresh sandbox; needs --repo REPO as inject took it)').choices(['localization', 'repair']).default('localization'))
        .addOption(new Option('--solver <solver>', 'agent: a model through --base-url; baseline: BM25, no model').choices(['agent', 'baseline']).default('agent'))
        .option('--base-url <url>', 'OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default: the OpenAI API)')
        .option('--model <name>', 'model name the endpoint serves')
        .option('--api-key <key>', 'API key of the endpoint (env OPENAI_API_KEY)')
        .addOption(new Option('--tool-format <format>', 'native tools, Hermes <tool_call> text in the prompt, or auto (native, falling back to text)').choices(['auto', 'native', 'hermes']))
        .option('--temperature <x>', 'sampling temperature (default: the server\'s)', parseFloatAtLeastZero)
        .option('--max-turns <n>', 'model calls per episode (default 4 for localization, 30 for repair)', parseCount)
        .option('--concurrency <n>', 'rollouts at once (default: 8 for the agent, the cores for the baseline)', parseCount)
        .option('--out <dir>', 'directory of the <run-id>.jsonl trajectory file (default: <home>/rollouts)'),
    ),
  )
    .addHelpText(
      'after',
      '\nEach rollout is scored against the gold localization (file + module + entity F1, 0-3) and recorded in the pool (solved when entity F1 is 1, or as --solved-by says).\nRollouts whose model endpoint failed are written but not recorded.\n\nExamples:\n  $ envgen run --base-url http://localhost:8000/v1 --model OpenHands/CodeScout-1.7B\n  $ envgen run --solver baseline --repo debian/toolz --json\n  $ envgen run --base-url http://gpu:8000/v1 --model Qwen/Qwen3-8B --tool-format hermes --attempts 4 --concurrency 16 --out rollouts/\n  $ envgen run --task repair --repo debian:toolz --base-url http://localhost:8000/v1 --model Qwen/Qwen3-8B --attempts 8',
    )
    .action(
      async (
        options: GlobalOptions & {
          repo?: string;
          strategy?: string;
          limit?: number;
          attempts: number;
          solver: 'agent' | 'baseline';
          baseUrl?: string;
          model?: string;
          apiKey?: string;
          toolFormat?: RunOptions['toolFormat'];
          temperature?: number;
          maxTurns?: number;
          task: 'localization' | 'repair';
          concurrency?: number;
          out?: string;
          solvedBy?: string;
          solvedThreshold?: string;
        },
      ) => {
        const { settings, logger } = createContext(options, io.env);
        const progress = createProgress({ quiet: options.json === true });
        try {
          if (options.maxTurns !== undefined && options.maxTurns < 1) throw new EnvgenError('usage', '--max-turns must be at least 1');
          const { repo, strategy, limit, attempts, solver, baseUrl, model, apiKey, toolFormat, temperature, maxTurns, concurrency, out } = options;
          if (options.task === 'repair') {
            if (solver === 'baseline') throw new EnvgenError('usage', '--task repair has no baseline solver: pass --model and --base-url');
            const report = await runRepairRun({ repo, strategy, limit, attempts, baseUrl, model, apiKey, toolFormat, temperature, maxTurns, out, ...(concurrency === undefined ? {} : { concurrency: Math.max(1, concurrency) }) }, settings, logger, progress, io.env);
            progress.stop();
            io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatRepairReport(report)}\n`);
            if (report.scored === 0) setExit(EXIT.failed);
            return;
          }
          const solvedBy = readSolveFlags(options);
          const run: RunOptions = { repo, strategy, limit, attempts, solver, baseUrl, model, apiKey, toolFormat, temperature, maxTurns, out, solvedBy };
          if (concurrency !== undefined) run.concurrency = Math.max(1, concurrency);
          const report = await runRun(run, settings, logger, progress, io.env);
          progress.stop();
          io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatRunReport(report)}\n`);
          if (report.scored === 0) setExit(EXIT.failed);
        } finally {
          progress.stop();
        }
      },
    );

  addGlobalOptions(
    program
      .command('selfplay')
      .description("Self-play on a repo: an LLM injector writes bug bundles (checked with the seven checks; -1 when one fails), a group of repair rollouts runs on each accepted one (+1/-1 by the tests), the solve rate gives the injector reward, failed repairs become order-2 instances; trajectories of both roles go to JSONL.")
      .requiredOption('--repo <repo>', 'owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
      .option('--base-url <url>', 'OpenAI-compatible endpoint of the model playing both roles, e.g. http://localhost:8000/v1')
      .option('--model <name>', 'model name the endpoint serves')
      .option('--api-key <key>', 'API key of the endpoint (env OPENAI_API_KEY)')
      .addOption(new Option('--tool-format <format>', 'native tools, Hermes <tool_call> text in the prompt, or auto').choices(['auto', 'native', 'hermes']))
      .option('--rounds <n>', 'injector episodes', parseCount, 1)
      .option('--group <n>', 'repair rollouts per accepted bundle', parseCount, 8)
      .option('--seed <n>', 'seed of the strategy mix', parseCount, 0)
      .option('--alpha <x>', 'the injector reward\'s α (default 0.8)', parseFloatAtLeastZero)
      .option('--strategies <names>', 'injector strategies to mix: removal, history, direct (default all)')
      .option('--bundles <dir>', 'bundles made by another injector (a bundle dir, or a dir of them such as export --format ssr): no LLM injects, the solver side runs on them')
      .option('--injector-max-turns <n>', 'model calls per injector episode (default 40)', parseCount)
      .option('--solver-max-turns <n>', 'model calls per repair episode (default 30)', parseCount)
      .option('--max-tokens <n>', 'tokens per episode, either role', parseCount)
      .option('--wall-time <s>', 'seconds per episode, either role', parseCount)
      .option('--concurrency <n>', 'repair rollouts at once (default 4)', parseCount)
      .option('--out <dir>', 'directory of the <run-id>.jsonl trajectory file (default: <home>/rollouts)')
      .option('--no-tasks', 'do not build tasks for the new instances'),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen selfplay --repo debian:toolz --base-url http://host:8000/v1 --model M --rounds 4 --group 8\n  $ envgen selfplay --repo debian:toolz --bundles data/ssr --base-url http://host:8000/v1 --model M --group 4 --json',
    )
    .action(async (options: GlobalOptions & SelfPlayFlags) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const report = await runSelfPlayCommand(readSelfPlayFlags(options), settings, logger, progress, io.env);
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatSelfPlayReport(report)}\n`);
        if (report.rounds.every((round) => !round.checksPassed) || (report.tasks !== null && report.tasks.failed.length > 0)) setExit(EXIT.failed);
      } finally {
        progress.stop();
      }
    });

  addGlobalOptions(
    program
      .command('export')
      .description('Write the instances that have a task as a dataset: SWE-smith JSONL, CodeScout rows, SSR bundle directories, or Hugging Face Parquet shards with a dataset card.')
      .requiredOption('--format <formats>', 'comma-separated: swesmith, codescout, ssr, hf, or all', parseFormats)
      .requiredOption('--out <dir>', 'output directory (created if needed); formats can share one')
      .option('--repo <owner/name>', 'only instances of this repo')
      .option('--strategy <name>', 'only instances made by this strategy')
      .addOption(new Option('--family <family>', 'only instances of this strategy family').choices([...FAMILY_CHOICES]))
      .option('--band <bands>', 'only instances in these difficulty bands: untried, too-hard, frontier, too-easy (comma-separated)', parseBands)
      .option('--min-attempts <n>', 'attempts before an instance leaves untried for a band (default 1)', parseCount)
      .option('--shard-rows <n>', 'hf: rows per Parquet file', parseCount, 10_000),
  )
    .addHelpText(
      'after',
      '\nOnly instances with a task (envgen tasks) are exported, in instance_id order, and no patch twice.\nFiles are written under --out and renamed into place: an interrupted export leaves no half file.\nExit code: 0 when instances were exported, 1 when none was, 2 on bad usage.\n\nExamples:\n  $ envgen export --format swesmith --out data/\n  $ envgen export --format hf --out data/frontier --band frontier,too-hard --min-attempts 4\n  $ envgen export --format hf --out datasets/envgen --repo pytoolz/toolz\n  $ envgen export --format swesmith,codescout,ssr --out data/ --strategy change_operator --json',
    )
    .action(async (options: GlobalOptions & { format: ExportFormat[]; out: string; repo?: string; strategy?: string; family?: StrategyFamily; band?: Band[]; minAttempts?: number; shardRows: number }) => {
      const { settings, logger } = createContext(options, io.env);
      const progress = createProgress({ quiet: options.json === true });
      try {
        const { format: formats, out, repo, strategy, family, band: bands, minAttempts, shardRows } = options;
        const report = await runExport({ formats, out, repo, strategy, family, bands, minAttempts, shardRows }, settings, logger, progress);
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatExportReport(report)}\n`);
        if (report.exported === 0) {
          if (options.json) io.stderr(`${explainEmptyExport(report)}\n`);
          setExit(EXIT.failed);
        }
      } finally {
        progress.stop();
      }
    });

  registerGrowCommands(program, { io, setExit, addGlobalOptions, parseCount });
  return program;
}

/** Runs the CLI on `argv` (without node and script) and returns the exit code; never exits. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (isEnvgenError(error)) {
      io.stderr(`envgen: ${error.message}\n`);
      return error.code === 'usage' || error.code === 'config-invalid' || error.code === 'repo-spec-invalid' ? EXIT.usage : EXIT.failed;
    }
    io.stderr(`envgen: internal error: ${describeError(error)}\n${error instanceof Error ? (error.stack ?? '') : ''}\n`);
    return EXIT.failed;
  }
}
