import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { describeError, isEnvgenError } from '@envgen/core';
import { createContext } from './context.js';
import type { GlobalOptions } from './context.js';
import { formatCheckReport, runCheck } from './check-command.js';
import { runEnv } from './env-command.js';
import { formatInjectReport, runInject } from './inject-command.js';
import { formatEnvReport, verdict } from './format-env.js';
import { formatPoolList, runPoolList } from './pool-command.js';
import { createProgress } from './progress.js';

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

function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(value);
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
    program
      .command('inject')
      .description('Inject bugs into a repo and keep the ones its tests prove: candidates from every strategy on covered code, validated, weakened, checked, stored in the pool.')
      .requiredOption('--repo <repo>', 'owner/name[@ref], a git URL, a local directory, or debian:SOURCE[=VERSION]')
      .option('-n, --count <n>', 'candidates to try', parseCount, 100)
      .option('--seed <n>', 'seed of every random choice (same seed, same instance ids)', parseCount, 0)
      .option('--strategies <names>', 'comma-separated strategy names (default: all)')
      .option('--combine <n>', "combinations of this run's bugs to try (default: a tenth of -n)", parseCount)
      .option('--concurrency <n>', 'parallel sandboxes (default: the cores)', parseCount),
  )
    .addHelpText(
      'after',
      '\nExamples:\n  $ envgen inject --repo debian:toolz -n 100 --seed 7\n  $ envgen inject --repo ./my-project -n 20 --strategies change_operator,remove_function_body --json',
    )
    .action(async (options: GlobalOptions & { repo: string; count: number; seed: number; strategies?: string; combine?: number; concurrency?: number }) => {
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
          },
          settings,
          logger,
          progress,
        );
        progress.stop();
        io.stdout(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatInjectReport(report)}\n`);
      } finally {
        progress.stop();
      }
    });

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
