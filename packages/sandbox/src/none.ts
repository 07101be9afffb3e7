import { readlink, symlink, unlink } from 'node:fs/promises';
import { ERROR_CODES, EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { memoizeCgroupLayout } from './cgroup.js';
import { checkSandboxOptions, resolveExecSettings } from './exec-settings.js';
import { startHostCommand } from './host-exec.js';
import { createSandboxHandle } from './sandbox-handle.js';
import type { SandboxMount, SandboxProvider } from './types.js';

/**
 * Makes each mount target a symlink to its source on the host (there is no private /tmp).
 * Returns the links it made, to be removed at dispose. A target that is already a link to
 * the same source is shared; anything else at the target is an error.
 */
async function linkMounts(mounts: readonly SandboxMount[]): Promise<string[]> {
  const made: string[] = [];
  for (const mount of mounts) {
    const existing = await readlink(mount.target).catch(() => undefined);
    if (existing === mount.source) continue;
    try {
      await symlink(mount.source, mount.target);
      made.push(mount.target);
    } catch (error) {
      await Promise.allSettled(made.map((link) => unlink(link)));
      throw new EnvgenError(
        ERROR_CODES.sandboxFailed,
        `Cannot link ${mount.target} to ${mount.source} for the unsandboxed backend (${describeError(error)}): remove it or pick another mount target.`,
        { cause: error },
      );
    }
  }
  return made;
}

/**
 * The `none` backend: commands run directly on the host, in the worktree itself. It is NOT
 * a sandbox: the command can read and write anything envgen can and reach the network.
 * What it keeps: the cleared environment, the wall-clock timeout (the process group and,
 * where cgroups are writable, everything in the command's cgroup is killed), the memory
 * and process limits (cgroups, or prlimit), and the output cap. Mounts become symlinks and
 * read-only is not enforced. Only for machines where nothing else runs, when asked for.
 */
export function createNoneProvider(options: { logger?: Logger } = {}): SandboxProvider {
  const logger = options.logger ?? silentLogger;
  const detectCgroups = memoizeCgroupLayout(logger);
  return {
    kind: 'none',
    async ensureAvailable() {},
    async open(sandboxOptions) {
      const mounts = await checkSandboxOptions(sandboxOptions);
      logger.warn(
        'SANDBOX DISABLED (sandbox kind "none"): untrusted repository code runs directly on this host with full access to its files and network',
        { worktree: sandboxOptions.worktree },
      );
      const cgroups = await detectCgroups();
      const links = await linkMounts(mounts);
      const workdir = sandboxOptions.worktree;
      return createSandboxHandle({
        kind: 'none',
        workdir,
        logger,
        start(argv, execOptions) {
          const settings = resolveExecSettings(sandboxOptions, execOptions, workdir);
          return startHostCommand({
            argv,
            env: settings.env,
            cwd: settings.cwd,
            stdin: execOptions.stdin,
            limits: settings.limits,
            cgroups,
            extraProcesses: 0,
          });
        },
        async release() {
          await Promise.allSettled(links.map((link) => unlink(link)));
        },
      });
    },
  };
}
