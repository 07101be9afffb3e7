import { spawn } from 'node:child_process';
import { ERROR_CODES, EnvgenError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { memoizeCgroupLayout } from './cgroup.js';
import { SANDBOX_WORKDIR, checkSandboxOptions, resolveExecSettings } from './exec-settings.js';
import { startHostCommand } from './host-exec.js';
import { createSandboxHandle } from './sandbox-handle.js';
import type { SandboxMount, SandboxProvider } from './types.js';

/** bubblewrap's outer process and the init of its pid namespace count against pids.max. */
const BWRAP_PROCESSES = 2;

/**
 * The jail: the host's root read-only, fresh /dev, /proc and /tmp, the worktree read-write
 * at /tmp/repo, every namespace unshared (the network is a private loopback), no
 * capabilities, its own session, and it dies with envgen.
 */
export function buildBwrapArgs(worktree: string, mounts: readonly SandboxMount[], cwd: string): string[] {
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--tmpfs', '/dev/shm',
    '--proc', '/proc',
    // bubblewrap leaves /proc/sys writable, and uid 0 inside maps to root outside.
    '--ro-bind', '/proc/sys', '/proc/sys',
    '--tmpfs', '/tmp',
    '--bind', worktree, SANDBOX_WORKDIR,
    ...mounts.flatMap((mount) => [mount.readonly ? '--ro-bind' : '--bind', mount.source, mount.target]),
    '--unshare-all',
    '--cap-drop', 'ALL',
    '--die-with-parent',
    '--new-session',
    '--chdir', cwd,
    '--',
  ];
}

async function runQuiet(argv: string[]): Promise<{ code: number | null; output: string; error?: Error }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0] ?? '', argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, output, error }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * The `local` backend: each command runs in a bubblewrap jail inside its own cgroup.
 *
 * Security model: the command sees the host's filesystem read-only except the worktree
 * (/tmp/repo) and rw mounts; /tmp is a private tmpfs; there is no network but a private
 * loopback; it has no capabilities, its own pid/ipc/uts/cgroup/user namespaces and its own
 * session. It runs as uid 0 mapped to the host's root, so the read-only binds (including
 * /proc/sys and /sys) are what protects the host; files it writes in the worktree belong
 * to the user running envgen.
 *
 * Limits: the wall clock kills the pid namespace (nothing survives); memory (RAM, tmpfs
 * included) and the process count are enforced by a per-command cgroup (v1 memory+pids,
 * or v2), with prlimit as a weaker fallback when no cgroup is writable.
 */
export function createLocalProvider(options: { logger?: Logger } = {}): SandboxProvider {
  const logger = options.logger ?? silentLogger;
  const cgroups = memoizeCgroupLayout(logger);

  return {
    kind: 'local',
    async ensureAvailable() {
      const probe = await runQuiet(['bwrap', ...buildBwrapArgs('/tmp', [], SANDBOX_WORKDIR), 'true']);
      if (probe.error) {
        throw new EnvgenError(
          ERROR_CODES.sandboxUnavailable,
          'bubblewrap (bwrap) is not installed: run `apt-get install -y bubblewrap`, or choose the docker sandbox.',
          { cause: probe.error },
        );
      }
      if (probe.code !== 0) {
        throw new EnvgenError(
          ERROR_CODES.sandboxUnavailable,
          `bubblewrap cannot create its jail here (${probe.output.trim()}): run envgen as root or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or choose the docker sandbox.`,
        );
      }
      await cgroups();
    },
    async open(sandboxOptions) {
      const mounts = await checkSandboxOptions(sandboxOptions);
      const layoutFound = await cgroups();
      return createSandboxHandle({
        kind: 'local',
        workdir: SANDBOX_WORKDIR,
        logger,
        start(argv, execOptions) {
          const settings = resolveExecSettings(sandboxOptions, execOptions, SANDBOX_WORKDIR);
          return startHostCommand({
            argv: ['bwrap', ...buildBwrapArgs(sandboxOptions.worktree, mounts, settings.cwd), ...argv],
            env: settings.env,
            cwd: sandboxOptions.worktree,
            stdin: execOptions.stdin,
            limits: settings.limits,
            cgroups: layoutFound,
            extraProcesses: BWRAP_PROCESSES,
          });
        },
        release: async () => {},
      });
    },
  };
}
