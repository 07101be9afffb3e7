import { spawn } from 'node:child_process';
import { ERROR_CODES, EnvgenError, describeError } from '@envgen/core';
import { createExecCgroup } from './cgroup.js';
import type { CgroupEvents, CgroupLayout, ExecCgroup } from './cgroup.js';
import { createOutputCollector } from './output.js';
import { LIMIT_COUNTERS_ENV } from './types.js';
import type { ExecResult, ExecStatus, SandboxLimits } from './types.js';

/** One command to run as a host process tree (bubblewrap's or the bare command's). */
export interface HostCommand {
  argv: string[];
  env: Record<string, string>;
  /** Host working directory of the spawned process. */
  cwd: string;
  stdin?: string;
  limits: SandboxLimits;
  cgroups: CgroupLayout;
  /**
   * Processes the limit has to leave room for besides the command's own (bubblewrap's
   * outer process and its pid-namespace init).
   */
  extraProcesses: number;
}

/** A started command: its result, and a way to stop it early (status `killed`). */
export interface RunningCommand {
  result: Promise<ExecResult>;
  kill(): void;
}

const NO_EVENTS: CgroupEvents = { memoryLimitHit: false, processLimitHit: false };

/**
 * The process enters its cgroups before it execs the command, so nothing it starts can be
 * outside them: `sh -c 'echo $$ > procs1 && echo $$ > procs2 && shift 2 && exec "$@"'`.
 */
function joinCgroupArgv(cgroup: ExecCgroup, argv: string[]): string[] {
  const files = cgroup.procsFiles;
  const joins = files.map((_, index) => `echo $$ > "$${index + 1}"`).join(' && ');
  return ['/bin/sh', '-c', `${joins} && shift ${files.length} && exec "$@"`, 'envgen-cgroup', ...files, ...argv];
}

/** Without cgroups, rlimits are the fallback: address space, and processes (not enforced for root). */
function prlimitArgv(limits: SandboxLimits, extraProcesses: number, argv: string[]): string[] {
  return ['prlimit', `--as=${limits.memoryBytes}`, `--nproc=${limits.maxProcesses + extraProcesses}`, '--', ...argv];
}

function classify(
  timedOut: boolean,
  killed: boolean,
  events: CgroupEvents,
  signal: NodeJS.Signals | null,
  memoryErrorSeen: boolean,
): ExecStatus {
  if (killed) return 'killed';
  // A hit limit explains a timeout better than the clock does (a contained fork bomb spins).
  if (events.memoryLimitHit || memoryErrorSeen) return 'memory';
  if (events.processLimitHit) return 'processes';
  if (timedOut) return 'timeout';
  return signal ? 'killed' : 'exited';
}

/**
 * Runs a command in its own process group (and its own cgroups when the layout allows),
 * with the wall-clock, memory, process and output limits of `command.limits`. When the
 * command ends, times out or is killed, every process it started is killed too.
 */
export async function startHostCommand(command: HostCommand): Promise<RunningCommand> {
  const { limits } = command;
  const cgroup =
    command.cgroups.kind === 'unavailable'
      ? undefined
      : await createExecCgroup(command.cgroups, {
          memoryBytes: limits.memoryBytes,
          pidsMax: limits.maxProcesses + command.extraProcesses,
        }).catch((error: unknown) => {
          throw new EnvgenError(ERROR_CODES.sandboxFailed, `Cannot create a cgroup for the command: ${describeError(error)}`, {
            cause: error,
          });
        });
  const argv = cgroup ? joinCgroupArgv(cgroup, command.argv) : prlimitArgv(limits, command.extraProcesses, command.argv);
  const started = performance.now();
  const child = spawn(argv[0] ?? '', argv.slice(1), {
    cwd: command.cwd,
    // bubblewrap shows /sys read-only inside its jail: the host's paths are the command's.
    env: cgroup ? { ...command.env, [LIMIT_COUNTERS_ENV]: cgroup.counterFiles.join(':') } : command.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stdout = createOutputCollector(limits.maxOutputBytes);
  const stderr = createOutputCollector(limits.maxOutputBytes);
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on('error', () => {}); // the command may exit without reading its input
  child.stdin.end(command.stdin ?? '');

  let timedOut = false;
  let killed = false;
  const killTree = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
    void cgroup?.killAll();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killTree();
  }, limits.timeoutMs);

  const result = new Promise<ExecResult>((resolve, reject) => {
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let closeTimer: NodeJS.Timeout | undefined;
    const finish = async (): Promise<void> => {
      clearTimeout(timer);
      clearTimeout(closeTimer);
      const events = cgroup ? await cgroup.readEvents() : NO_EVENTS;
      await cgroup?.killAll();
      await cgroup?.remove();
      const stderrText = stderr.head().toString('utf8');
      const memoryErrorSeen = !cgroup && exit?.code !== 0 && /\bMemoryError\b/.test(stderrText);
      resolve({
        status: classify(timedOut, killed, events, exit?.signal ?? null, memoryErrorSeen),
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: stdout.head().toString('utf8'),
        stderr: stderrText,
        truncated: stdout.truncated || stderr.truncated,
        durationMs: Math.round(performance.now() - started),
      });
    };
    child.on('error', (error) => {
      clearTimeout(timer);
      void cgroup?.remove().catch(() => {});
      reject(new EnvgenError(ERROR_CODES.sandboxFailed, `Cannot start ${argv[0] ?? ''}: ${error.message}`, { cause: error }));
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Whatever the command left running goes with it; then the pipes close.
      killTree();
      // Without cgroups a process that left the group could hold the pipes open forever.
      closeTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 2000);
    });
    child.on('close', () => {
      finish().catch(reject);
    });
  });

  return {
    result,
    kill() {
      killed = true;
      killTree();
    },
  };
}
