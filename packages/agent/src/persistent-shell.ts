import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { constants, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ERROR_CODES, EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { ExecResult, Sandbox, SandboxLimits, SandboxProvider } from '@envgen/sandbox';
import { OutputCapture } from './output-capture.js';
import type { CommandCompletion } from './output-capture.js';

const run = promisify(execFile);

/** Default wall-clock limit of one command. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
/** Default cap on the characters of one command's output (CodeScout's 30,000). */
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;

/** The shell's boot script (see the comments in it), shipped beside `src/` and `dist/`. */
const BOOT_SCRIPT = readFileSync(fileURLToPath(new URL('../shell/persistent-shell.sh', import.meta.url)), 'utf8');

/** Options of {@link openPersistentShell}. */
export interface OpenPersistentShellOptions {
  provider: SandboxProvider;
  /** Host directory of the checkout; the shell starts in it (as the sandbox shows it). */
  worktree: string;
  /** Limits of the whole shell session (memory, processes); `timeoutMs` is its lifetime (default 2 h). */
  limits?: Partial<SandboxLimits>;
  env?: Record<string, string>;
  /** docker: image to run. */
  image?: string;
  /** How long a timed-out command's shell may take to come back before it is replaced (default 2 s). */
  killGraceMs?: number;
  /** How long the shell may take to start (default 30 s: a docker container may be cold). */
  startTimeoutMs?: number;
  logger?: Logger;
}

/** Options of one {@link PersistentShell.run}. */
export interface ShellRunOptions {
  /** Wall-clock limit (default {@link DEFAULT_COMMAND_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Output beyond this is cut from the middle (default {@link DEFAULT_MAX_OUTPUT_CHARS}). */
  maxOutputChars?: number;
}

/**
 * How a command ended: `exited` on its own; `timeout` killed at its limit (the shell kept
 * its state, or was replaced when `restarted`); `shell-exited` the command ended the shell
 * itself (`exit`, `exec`, `set -e`), and a new one was started.
 */
export type ShellCommandStatus = 'exited' | 'timeout' | 'shell-exited';

/** What one command did. */
export interface ShellCommandResult {
  status: ShellCommandStatus;
  /** stdout and stderr interleaved as a terminal shows them, cut in the middle past the cap. */
  output: string;
  /** The command's exit status; null after a timeout, or when the shell did not say. */
  exitCode: number | null;
  /** Working directory after the command, as commands see it. */
  cwd: string;
  /** True when the shell was replaced: variables and functions are gone, `cwd` is kept. */
  restarted: boolean;
  /** Characters of output before the cut; `omittedChars` were dropped from the middle. */
  totalChars: number;
  omittedChars: number;
  durationMs: number;
}

/** A bash session in a sandbox whose state persists between commands. */
export interface PersistentShell {
  /** The checkout's path as commands see it (e.g. `/tmp/repo`). */
  readonly workdir: string;
  /** Current working directory as commands see it. */
  readonly cwd: string;
  /** Runs one command; calls are queued, never interleaved. */
  run(command: string, options?: ShellRunOptions): Promise<ShellCommandResult>;
  /** Ends the shell and its sandbox. Idempotent. */
  close(): Promise<void>;
}

/** How waiting for a command ended: its marker (with its output), the shell's exit, or the clock. */
type Finished =
  | { kind: 'done'; completion: CommandCompletion; output: Rendered }
  | { kind: 'exited' }
  | { kind: 'timeout' };

type Rendered = ReturnType<OutputCapture['render']>;

/** One shell process in one sandbox; replaced as a whole after `exit` or a stuck timeout. */
class ShellSession {
  private capture: OutputCapture;
  private maxOutputChars = DEFAULT_MAX_OUTPUT_CHARS;
  private waiter: ((finished: Finished) => void) | undefined;
  private alive = true;
  exitResult: ExecResult | undefined;

  private constructor(
    readonly sandbox: Sandbox,
    private readonly hostDir: string,
    private readonly nonce: string,
    private readonly input: Socket,
    private readonly output: Socket,
    private readonly control: Socket,
    private readonly exited: Promise<ExecResult | undefined>,
  ) {
    this.capture = this.newCapture();
  }

  static async start(options: OpenPersistentShellOptions, startCwd: string | undefined): Promise<ShellSession> {
    const hostDir = await mkdtemp(join(tmpdir(), 'envgen-shell-'));
    const nonce = randomBytes(8).toString('hex');
    // A target per session: the `none` backend makes mounts host symlinks, shared by name.
    const target = `/tmp/envgen-shell-${nonce}`;
    let sandbox: Sandbox | undefined;
    const sockets: Socket[] = [];
    try {
      // Containers may run as another user: everyone may use the FIFOs.
      await chmod(hostDir, 0o777);
      const fifos = ['in', 'out', 'ctl'].map((name) => join(hostDir, name));
      await run('mkfifo', ['-m', '666', ...fifos]);
      // Read-write opens never block and keep a reader and a writer on each FIFO, so the
      // shell's own opens never block and neither side ever sees end-of-file.
      // Each socket only writes or only reads: a reading host end would steal the shell's input.
      for (const fifo of fifos) {
        const reads = fifo.endsWith('out');
        sockets.push(new Socket({ fd: openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK), readable: reads, writable: !reads }));
      }
      sandbox = await options.provider.open({
        worktree: options.worktree,
        mounts: [{ source: hostDir, target, readonly: false }],
        limits: { timeoutMs: 2 * 3_600_000, maxOutputBytes: 64 * 1024, ...options.limits },
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.image === undefined ? {} : { image: options.image }),
      });
      const exited = sandbox
        .exec(['bash', '--noprofile', '--norc', '-c', BOOT_SCRIPT, 'bash', target, nonce, startCwd ?? sandbox.workdir])
        .catch(() => undefined);
      const [input, output, control] = sockets as [Socket, Socket, Socket];
      const session = new ShellSession(sandbox, hostDir, nonce, input, output, control, exited);
      await session.waitReady(options.startTimeoutMs ?? 30_000);
      return session;
    } catch (error) {
      for (const socket of sockets) socket.destroy();
      await sandbox?.dispose();
      await rm(hostDir, { recursive: true, force: true });
      throw error;
    }
  }

  get isAlive(): boolean {
    return this.alive;
  }

  private newCapture(): OutputCapture {
    // Head and tail halves, leaving room for the omission notice within the cap.
    const half = Math.max(0, Math.floor((this.maxOutputChars - 60) / 2));
    return new OutputCapture(`__ENVGEN_DONE_${this.nonce} `, half, half);
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const ready = `__ENVGEN_READY_${this.nonce}\n`;
    const decoder = new StringDecoder('utf8');
    let seen = '';
    let onData: ((chunk: Buffer) => void) | undefined;
    const outcome = await new Promise<'ready' | 'exited' | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), timeoutMs);
      onData = (chunk: Buffer): void => {
        seen += decoder.write(chunk);
        if (!seen.includes(ready)) return;
        clearTimeout(timer);
        resolve('ready');
      };
      this.output.on('data', onData);
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve('exited');
      });
    });
    if (onData) this.output.off('data', onData);
    if (outcome === 'ready') {
      this.output.on('data', (chunk: Buffer) => this.feed(decoder.write(chunk)));
      this.feed(seen.slice(seen.indexOf(ready) + ready.length));
      void this.exited.then((result) => {
        this.alive = false;
        this.exitResult = result;
        this.finish({ kind: 'exited' });
      });
      return;
    }
    const result = outcome === 'exited' ? await this.exited : undefined;
    const detail = ((result?.stderr ?? '') + seen).trim().slice(0, 500);
    throw new EnvgenError(
      ERROR_CODES.sandboxFailed,
      outcome === 'timeout'
        ? `the agent's shell did not start in the sandbox within ${timeoutMs} ms; check that bash runs there (envgen env --repo <repo>)`
        : `the agent's shell exited at start (${result?.status ?? 'unknown'}, code ${result?.exitCode ?? 'none'}): ${detail}`,
    );
  }

  private feed(text: string): void {
    if (text === '') return;
    const completion = this.capture.push(text);
    if (completion === undefined) return;
    const output = this.capture.render(true);
    this.capture = this.newCapture();
    // Output after the marker (a background job's) goes in front of the next command's.
    this.capture.push(completion.rest);
    this.finish({ kind: 'done', completion, output });
  }

  private finish(finished: Finished): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(finished);
  }

  /** Resolves at the next marker, at the shell's exit, or with `timeout` after `timeoutMs`. */
  private wait(timeoutMs: number, start: () => void): Promise<Finished> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.waiter === waiter) this.waiter = undefined;
        resolve({ kind: 'timeout' });
      }, timeoutMs);
      const waiter = (finished: Finished): void => {
        clearTimeout(timer);
        resolve(finished);
      };
      this.waiter = waiter;
      start();
    });
  }

  /** Sends one command (NUL-terminated; NULs inside cannot be sent and are dropped). */
  send(command: string, maxOutputChars: number, timeoutMs: number): Promise<Finished> {
    if (maxOutputChars !== this.maxOutputChars) {
      const idle = this.capture.render(false).text;
      this.maxOutputChars = maxOutputChars;
      this.capture = this.newCapture();
      this.capture.push(idle);
    }
    return this.wait(timeoutMs, () => this.input.write(`${command.replaceAll('\0', '')}\0`));
  }

  /**
   * After a timeout: the rest of the command is skipped and the watchdog kills what it
   * started, again every 100 ms (a process may have been forking), until the marker comes.
   */
  async interrupt(graceMs: number): Promise<Finished> {
    // The abort file makes the shell skip the rest of the command (see the boot script).
    writeFileSync(join(this.hostDir, 'abort'), '');
    const kill = (): void => {
      this.control.write('kill\n');
    };
    const again = setInterval(kill, 100);
    try {
      return await this.wait(graceMs, kill);
    } finally {
      clearInterval(again);
      rmSync(join(this.hostDir, 'abort'), { force: true });
    }
  }

  /** The output of a command that ended without its marker. */
  takePartialOutput(): Rendered {
    const output = this.capture.render(false);
    this.capture = this.newCapture();
    return output;
  }

  async close(): Promise<void> {
    this.waiter = undefined;
    await this.sandbox.dispose();
    await this.exited;
    for (const socket of [this.input, this.output, this.control]) socket.destroy();
    await rm(this.hostDir, { recursive: true, force: true });
  }
}

/**
 * Opens a persistent bash in a sandbox over `worktree`: commands run one after another in
 * the same shell, so `cd`, exported variables and functions carry over, as in a terminal.
 * A command past its timeout is killed with everything it started and the shell lives
 * on; a shell that cannot be brought back (a builtin loop) or that the command ended is
 * replaced by a new one in the same working directory.
 */
export async function openPersistentShell(options: OpenPersistentShellOptions): Promise<PersistentShell> {
  const logger = options.logger ?? silentLogger;
  let session = await ShellSession.start(options, undefined);
  const workdir = session.sandbox.workdir;
  let cwd = workdir;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  // The new shell starts while the old one is torn down (a container each on docker).
  const replace = async (): Promise<void> => {
    const [ended, next] = await Promise.allSettled([session.close(), ShellSession.start(options, cwd)]);
    if (ended.status === 'rejected') logger.warn('the replaced agent shell did not close cleanly', { error: describeError(ended.reason) });
    if (next.status === 'rejected') throw next.reason;
    session = next.value;
  };

  const runOne = async (command: string, runOptions: ShellRunOptions): Promise<ShellCommandResult> => {
    if (closed) throw new EnvgenError(ERROR_CODES.usage, 'This shell was closed: open a new one to run more commands.');
    const started = performance.now();
    if (!session.isAlive) await replace();
    const current = session;
    let finished = await current.send(
      command,
      runOptions.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
      runOptions.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    );
    const timedOut = finished.kind === 'timeout';
    if (timedOut) finished = await current.interrupt(options.killGraceMs ?? 2_000);
    const status: ShellCommandStatus = timedOut ? 'timeout' : finished.kind === 'exited' ? 'shell-exited' : 'exited';
    if (finished.kind === 'done') {
      if (finished.completion.cwd !== '') cwd = finished.completion.cwd;
      // A timed-out command's status is that of whatever was skipped or killed last: meaningless.
      return result(status, finished.output, timedOut ? null : finished.completion.exitCode, false, started);
    }
    const output = current.takePartialOutput();
    const exitCode = finished.kind === 'exited' ? (current.exitResult?.exitCode ?? null) : null;
    logger.debug('replacing the agent shell', { reason: finished.kind, cwd });
    try {
      await replace();
    } catch (error) {
      throw new EnvgenError(ERROR_CODES.sandboxFailed, `the agent's shell could not be restarted: ${describeError(error)}`, { cause: error });
    }
    return result(status, output, exitCode, true, started);
  };

  const result = (
    status: ShellCommandStatus,
    output: Rendered,
    exitCode: number | null,
    restarted: boolean,
    started: number,
  ): ShellCommandResult => ({
    status,
    output: output.text,
    exitCode,
    cwd,
    restarted,
    totalChars: output.totalChars,
    omittedChars: output.omittedChars,
    durationMs: performance.now() - started,
  });

  return {
    workdir,
    get cwd() {
      return cwd;
    },
    run(command, runOptions = {}) {
      const result = queue.then(() => runOne(command, runOptions));
      queue = result.catch(() => undefined);
      return result;
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue;
      await session.close();
    },
  };
}
