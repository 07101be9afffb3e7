import { execFile } from 'node:child_process';
import { EnvgenError } from '@envgen/core';

/** Options of one program run. */
export interface RunProgramOptions {
  cwd?: string;
  /** Extra environment on top of the process environment. */
  env?: Record<string, string>;
  /** Bytes or text fed to stdin. */
  input?: string | Buffer;
}

/** The outcome of a program run; a non-zero exit is data, not an error. */
export interface ProgramResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs `command` with `args` (no shell). Only a missing program throws (`dependency-missing`). */
export function runProgram(command: string, args: string[], options: RunProgramOptions = {}): Promise<ProgramResult> {
  return run(command, args, options, 'utf8');
}

/** As {@link runProgram}, with stdout as bytes: for binary output (`git cat-file --batch`). */
export function runProgramBytes(command: string, args: string[], options: RunProgramOptions = {}): Promise<{ ok: boolean; stdout: Buffer; stderr: string }> {
  return run(command, args, options, 'buffer').then((result) => ({ ...result, stderr: result.stderr.toString('utf8') }));
}

function run<E extends 'utf8' | 'buffer'>(command: string, args: string[], options: RunProgramOptions, encoding: E): Promise<{ ok: boolean; stdout: E extends 'utf8' ? string : Buffer; stderr: E extends 'utf8' ? string : Buffer }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { cwd: options.cwd, env: { ...process.env, ...options.env }, maxBuffer: 256 * 1024 * 1024, encoding },
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new EnvgenError('dependency-missing', `${command} is not installed or not on PATH; install it (apt-get install ${command}).`, { cause: error }));
          return;
        }
        resolve({ ok: !error, stdout: stdout as never, stderr: stderr as never });
      },
    );
    child.stdin?.end(options.input);
  });
}
