import { EnvgenError, describeError } from '@envgen/core';
import { GitError, simpleGit } from 'simple-git';
import type { SimpleGit } from 'simple-git';
import { runProgram, runProgramBytes } from './run-program.js';
import type { ProgramResult, RunProgramOptions } from './run-program.js';

// Never prompt for credentials: a job must not hang on a password prompt.
const NO_PROMPT_ENV = { GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never' };

/**
 * Variables simple-git refuses to pass on (they make git run another program: pager, editor,
 * askpass, ssh command, …) unless the matching `unsafe` option is set. envgen's git work is
 * non-interactive and needs none of them, so they are dropped from the inherited environment
 * instead of opting out of simple-git's checks.
 */
const PROGRAM_VARIABLES = new Set([
  'editor',
  'git_askpass',
  'git_config',
  'git_config_count',
  'git_config_global',
  'git_config_system',
  'git_editor',
  'git_exec_path',
  'git_external_diff',
  'git_pager',
  'git_proxy_command',
  'git_sequence_editor',
  'git_ssh',
  'git_ssh_command',
  'git_template_dir',
  'pager',
  'prefix',
  'ssh_askpass',
]);

function gitEnvironment(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !PROGRAM_VARIABLES.has(key.toLowerCase())) env[key] = value;
  }
  return { ...env, ...NO_PROMPT_ENV, ...extra };
}

/** Where {@link openGit} runs git. */
export interface OpenGitOptions {
  /** Working directory (a checkout); default the process's. */
  cwd?: string;
  /** A git directory (bare mirror or `.git`), set as `GIT_DIR` so git never searches upward for another repo. */
  gitDir?: string;
  /** Extra environment (e.g. `GIT_INDEX_FILE`, a commit identity). */
  env?: Record<string, string>;
}

/** A simple-git client that never prompts; commands run in `cwd` or against `gitDir`. */
export function openGit(options: OpenGitOptions = {}): SimpleGit {
  const git = options.cwd === undefined ? simpleGit() : simpleGit(options.cwd);
  return git.env(gitEnvironment({ ...options.env, ...(options.gitDir === undefined ? {} : { GIT_DIR: options.gitDir }) }));
}

/**
 * Awaits a simple-git task; a git failure becomes `repo-unavailable` with git's message and `hint`,
 * a missing git binary `dependency-missing`.
 */
export async function runGitTask<T>(what: string, task: Promise<T>, hint?: string): Promise<T> {
  try {
    return await task;
  } catch (error) {
    if (/\bENOENT\b/.test(describeError(error)) && /spawn/.test(describeError(error))) {
      throw new EnvgenError('dependency-missing', 'git is not installed or not on PATH; install it (apt-get install git).', { cause: error });
    }
    const detail = error instanceof GitError ? error.message.trim() : describeError(error);
    throw new EnvgenError('repo-unavailable', `git ${what} failed: ${detail}${hint ? `\n${hint}` : ''}`, { cause: error });
  }
}

/** The 40-hex commit a ref names in the git directory `gitDir`, or null when the ref (or the repo) is not there. */
export async function resolveCommit(gitDir: string, ref: string): Promise<string | null> {
  try {
    const sha = (await openGit({ gitDir }).revparse(['--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])).trim();
    return /^[0-9a-f]{40}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}

/**
 * Runs git through envgen's own runner: for plumbing fed on stdin (`hash-object --stdin-paths`,
 * `update-index --index-info`), which simple-git cannot write to, and for quiet commands on
 * hot paths (simple-git waits 50 ms after every command that prints nothing, so a quiet
 * clone and checkout cost 150 ms more than git takes). A failure throws `repo-unavailable`
 * with git's stderr.
 */
export async function runGit(args: string[], options: RunProgramOptions = {}): Promise<string> {
  const result: ProgramResult = await runProgram('git', args, { ...options, env: { ...NO_PROMPT_ENV, ...options.env } });
  if (!result.ok) {
    throw new EnvgenError('repo-unavailable', `git ${args.join(' ')} failed: ${(result.stderr.trim() || result.stdout.trim())}`);
  }
  return result.stdout;
}

/** As {@link runGit}, with stdout as bytes (`cat-file --batch`, whose objects may be binary). */
export async function runGitBytes(args: string[], options: RunProgramOptions = {}): Promise<Buffer> {
  const result = await runProgramBytes('git', args, { ...options, env: { ...NO_PROMPT_ENV, ...options.env } });
  if (!result.ok) throw new EnvgenError('repo-unavailable', `git ${args.join(' ')} failed: ${result.stderr.trim()}`);
  return result.stdout;
}
