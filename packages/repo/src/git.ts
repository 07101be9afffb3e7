import { EnvgenError } from '@envgen/core';
import { runProgram } from './run-program.js';
import type { ProgramResult, RunProgramOptions } from './run-program.js';

// Never prompt for credentials: a job must not hang on a password prompt.
const BASE_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo', GCM_INTERACTIVE: 'never' };

/** Runs git and reports success as data; only a missing git binary throws. */
export function tryGit(args: string[], options: RunProgramOptions = {}): Promise<ProgramResult> {
  return runProgram('git', args, { ...options, env: { ...BASE_ENV, ...options.env } });
}

/** Runs git and returns stdout; a failure throws `repo-unavailable` with git's stderr and `hint`. */
export async function runGit(args: string[], options: RunProgramOptions & { hint?: string } = {}): Promise<string> {
  const result = await tryGit(args, options);
  if (!result.ok) {
    const detail = result.stderr.trim() || result.stdout.trim();
    throw new EnvgenError('repo-unavailable', `git ${args.join(' ')} failed: ${detail}${options.hint ? `\n${options.hint}` : ''}`);
  }
  return result.stdout;
}

/** The 40-hex commit a ref names in `gitDir`, or null when the ref is not there. */
export async function resolveCommit(gitDir: string, ref: string): Promise<string | null> {
  const result = await tryGit(['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  const sha = result.stdout.trim();
  return result.ok && /^[0-9a-f]{40}$/.test(sha) ? sha : null;
}
