/** Which backend runs the commands. `none` runs on the host and exists only with a loud warning. */
export type SandboxKind = 'local' | 'docker' | 'none';

/** Resource limits of one command. Every field has a default in {@link DEFAULT_LIMITS}. */
export interface SandboxLimits {
  /** Wall-clock limit; at expiry the whole process tree is killed. */
  timeoutMs: number;
  /** Memory limit of the whole process tree, in bytes. */
  memoryBytes: number;
  /** Limit on processes/threads alive at once (contains fork bombs). */
  maxProcesses: number;
  /** stdout and stderr are each cut after this many bytes (the rest is drained and dropped). */
  maxOutputBytes: number;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  timeoutMs: 15 * 60_000,
  memoryBytes: 4 * 1024 ** 3,
  maxProcesses: 512,
  maxOutputBytes: 4 * 1024 ** 2,
};

/** An extra host directory made visible inside the sandbox (target must be under /tmp). */
/**
 * A host directory seen at `target` inside the sandbox. The `none` backend makes the target
 * a symlink on the host itself, so a directory that differs per sandbox needs a target of its
 * own ({@link uniqueTarget}); a target several sandboxes mount from one source is shared.
 */
export interface SandboxMount {
  source: string;
  target: string;
  readonly: boolean;
}

export interface SandboxOptions {
  /** Host directory of the worktree; the only writable host path (besides rw mounts). */
  worktree: string;
  /** Extra mounts, e.g. envgen's pytest plugin (ro) or a results directory (rw). */
  mounts?: SandboxMount[];
  /** Defaults for every command of this sandbox. */
  limits?: Partial<SandboxLimits>;
  /** Environment of every command (PATH, HOME, LANG are provided). */
  env?: Record<string, string>;
  /** docker: image to run (default `envgen/python:bookworm`). */
  image?: string;
}

export interface ExecOptions {
  /** Working directory relative to the worktree root (default: the root). */
  cwd?: string;
  env?: Record<string, string>;
  limits?: Partial<SandboxLimits>;
  /** Bytes written to the command's stdin, then closed. */
  stdin?: string;
}

/**
 * How a command ended. `exited`: on its own (any exit code). The others are the sandbox
 * stopping it: `timeout` (wall clock), `memory` (memory limit hit), `processes` (process
 * limit hit), `killed` (a signal from elsewhere).
 */
export type ExecStatus = 'exited' | 'timeout' | 'memory' | 'processes' | 'killed';

export interface ExecResult {
  status: ExecStatus;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** True when stdout or stderr was cut at maxOutputBytes. */
  truncated: boolean;
  durationMs: number;
}

/**
 * Where the backend counts its limits' hits, each command's environment names the counter
 * files as the command sees them, `:`-separated: a memory controller's (`memory.events` or
 * `memory.oom_control`, whose `oom_kill` line counts the processes the memory limit killed)
 * and a pids controller's (`pids.events`, whose `max` line counts the forks the process
 * limit refused). A command that runs several things in turn (envgen's warm server) reads
 * them before and after each to tell which one a limit stopped.
 */
export const LIMIT_COUNTERS_ENV = 'ENVGEN_LIMIT_COUNTERS';

/** A place where untrusted commands run against one worktree. */
export interface Sandbox {
  readonly kind: SandboxKind;
  /** Absolute path of the worktree as commands inside see it (e.g. `/tmp/repo`). */
  readonly workdir: string;
  /** Runs argv (no shell unless argv asks for one) inside the sandbox. */
  exec(argv: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Releases the sandbox (container, cgroups). Idempotent. */
  dispose(): Promise<void>;
}

/** Creates sandboxes of one kind; checks once whether the backend can run here. */
export interface SandboxProvider {
  readonly kind: SandboxKind;
  /** Throws EnvgenError `sandbox-unavailable` saying what to install or start. */
  ensureAvailable(): Promise<void>;
  open(options: SandboxOptions): Promise<Sandbox>;
}
