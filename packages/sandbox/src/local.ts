import { spawn } from 'node:child_process';
import { lstat, readlink } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { ERROR_CODES, EnvgenError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { memoizeCgroupLayout } from './cgroup.js';
import { ROOT_FILE_CAPABILITIES, SANDBOX_WORKDIR, checkSandboxOptions, resolveExecSettings } from './exec-settings.js';
import { startHostCommand } from './host-exec.js';
import { createSandboxHandle } from './sandbox-handle.js';
import type { SandboxMount, SandboxProvider } from './types.js';

/** bubblewrap's outer process and the init of its pid namespace count against pids.max. */
const BWRAP_PROCESSES = 2;

/** Host directories the jail shows read-only (when present): programs, libraries, config. */
const SYSTEM_DIRS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32', 'etc', 'opt', 'sys'];
/** Secrets inside those directories that stay hidden. */
const HIDDEN_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/ssh'];

/**
 * bubblewrap arguments showing the host's system directories read-only: symlinks (a
 * merged /usr) are recreated, directories bound. Everything else on the host (/run and
 * /var with daemon sockets such as Docker's, /root, /home, /work, /srv) is not there at all:
 * a read-only bind would still let uid 0 connect to a Unix socket in it. The user's home is
 * there, empty (see {@link userHome}).
 */
export async function resolveSystemBinds(): Promise<string[]> {
  const args: string[] = [];
  for (const name of SYSTEM_DIRS) {
    const entry = `/${name}`;
    const info = await lstat(entry).catch(() => undefined);
    if (info?.isSymbolicLink()) args.push('--symlink', await readlink(entry), entry);
    else if (info?.isDirectory()) args.push('--ro-bind', entry, entry);
  }
  for (const hidden of HIDDEN_FILES) {
    const info = await lstat(hidden).catch(() => undefined);
    if (info?.isDirectory()) args.push('--tmpfs', hidden);
    else if (info) args.push('--ro-bind', '/dev/null', hidden);
  }
  const home = await userHome();
  if (home !== null) args.push('--tmpfs', home);
  return args;
}

/**
 * The home directory the password database gives the user the tests run as, where the host
 * has it and the jail would not show it: shown empty and writable, none of the host's files in
 * it. A suite that expands `~user` or asks `pwd` for the user's home then finds a directory, as
 * in a plain run (before, python-cmd2/cmd2's `test_path_completion_complete_user` saw no home
 * for root and completed no `~root`, and failed in envgen only). `HOME` stays the sandbox's own.
 */
async function userHome(): Promise<string | null> {
  let home: string;
  try {
    home = userInfo().homedir;
  } catch {
    return null;
  }
  const top = home.split('/')[1] ?? '';
  if (!home.startsWith('/') || top === '' || SYSTEM_DIRS.includes(top) || ['tmp', 'dev', 'proc'].includes(top)) return null;
  return (await lstat(home).catch(() => undefined))?.isDirectory() === true ? home : null;
}

/**
 * The jail: the host's system directories read-only (see {@link resolveSystemBinds}), a
 * fresh /dev, /proc and /tmp, the worktree read-write at /tmp/repo, the rest of the root
 * read-only and empty, every namespace unshared (the network is a private loopback), no
 * capabilities but root's file permissions when envgen runs as root, its own session, and
 * it dies with envgen.
 */
export function buildBwrapArgs(system: readonly string[], worktree: string, mounts: readonly SandboxMount[], cwd: string): string[] {
  return [
    ...system,
    '--dev', '/dev',
    '--proc', '/proc',
    // bubblewrap leaves /proc/sys writable, and uid 0 inside maps to root outside.
    '--ro-bind', '/proc/sys', '/proc/sys',
    '--tmpfs', '/tmp',
    '--bind', worktree, SANDBOX_WORKDIR,
    ...mounts.flatMap((mount) => [mount.readonly ? '--ro-bind' : '--bind', mount.source, mount.target]),
    '--remount-ro', '/',
    '--unshare-all',
    '--cap-drop', 'ALL',
    // Run by root, uid 0 inside keeps root's file permissions (a user's run has none to keep).
    ...(process.getuid?.() === 0 ? ROOT_FILE_CAPABILITIES.flatMap((capability) => ['--cap-add', capability]) : []),
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
 * Security model: the command sees only the host's system directories (/usr, /etc, /opt,
 * /sys, the /lib and /bin links), read-only, minus /etc/shadow, /etc/gshadow and /etc/ssh;
 * the worktree read-write at /tmp/repo and the mounts; a private tmpfs /tmp and /dev. The
 * host's /run, /var, /root, /home, /work and anything else are absent, so no host daemon
 * socket (Docker's, a database's) can be reached. There is no network but a private
 * loopback; it has no capabilities but, run by root, root's file permissions
 * ({@link ROOT_FILE_CAPABILITIES}), its own pid/ipc/uts/cgroup/user/mount namespaces and
 * its own session. It runs as uid 0 mapped to the host's root, so the read-only binds
 * (including /proc/sys and /sys) are what protects the host; files it writes in the
 * worktree belong to the user running envgen.
 *
 * Limits: the wall clock kills the pid namespace (nothing survives); memory (RAM, tmpfs
 * included) and the process count are enforced by a per-command cgroup (v1 memory+pids,
 * or v2), with prlimit as a weaker fallback when no cgroup is writable.
 */
export function createLocalProvider(options: { logger?: Logger } = {}): SandboxProvider {
  const logger = options.logger ?? silentLogger;
  const cgroups = memoizeCgroupLayout(logger);
  let system: Promise<string[]> | undefined;
  const systemBinds = (): Promise<string[]> => (system ??= resolveSystemBinds());

  return {
    kind: 'local',
    async ensureAvailable() {
      const probe = await runQuiet(['bwrap', ...buildBwrapArgs(await systemBinds(), '/tmp', [], SANDBOX_WORKDIR), 'true']);
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
      const system = await systemBinds();
      return createSandboxHandle({
        kind: 'local',
        workdir: SANDBOX_WORKDIR,
        logger,
        start(argv, execOptions) {
          const settings = resolveExecSettings(sandboxOptions, execOptions, SANDBOX_WORKDIR);
          return startHostCommand({
            argv: ['bwrap', ...buildBwrapArgs(system, sandboxOptions.worktree, mounts, settings.cwd), ...argv],
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
