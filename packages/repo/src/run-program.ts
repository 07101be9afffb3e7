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
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { cwd: options.cwd, env: { ...process.env, ...options.env }, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
          reject(new EnvgenError('dependency-missing', `${command} is not installed or not on PATH; install it (apt-get install ${command}).`, { cause: error }));
          return;
        }
        resolve({ ok: !error, stdout, stderr });
      },
    );
    child.stdin?.end(options.input);
  });
}
