import { readlink, symlink, unlink } from 'node:fs/promises';
import { ERROR_CODES, EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { memoizeCgroupLayout } from './cgroup.js';
import { checkSandboxOptions, resolveExecSettings } from './exec-settings.js';
import { startHostCommand } from './host-exec.js';
import { createSandboxHandle } from './sandbox-handle.js';
import type { SandboxMount, SandboxProvider } from './types.js';

/** This process's links of mount targets: the source each points at and the open sandboxes using it. */
const LINKS = new Map<string, { source: string; users: number }>();

/**
 * Makes each mount target a symlink to its source on the host (there is no private /tmp).
 * A target another open sandbox of this process links to the same source is shared (the last
 * to close removes it), as is a link to the same source left on the host; a target linked to
 * another source, or anything else there, is an error. Returns the targets taken, to be let
 * go of at dispose ({@link releaseLinks}).
 */
async function linkMounts(mounts: readonly SandboxMount[]): Promise<string[]> {
  const taken: string[] = [];
  const fail = async (mount: SandboxMount, error: unknown): Promise<never> => {
    await releaseLinks(taken);
    throw new EnvgenError(
      ERROR_CODES.sandboxFailed,
      `Cannot link ${mount.target} to ${mount.source} for the unsandboxed backend (${describeError(error)}): remove it or pick another mount target.`,
      { cause: error },
    );
  };
  for (const mount of mounts) {
    const held = LINKS.get(mount.target);
    if (held !== undefined) {
      if (held.source !== mount.source) await fail(mount, new Error(`another open sandbox links it to ${held.source}`));
      held.users += 1;
      taken.push(mount.target);
      continue;
    }
    // Claimed before the awaits below, so a sandbox opened meanwhile shares it.
    LINKS.set(mount.target, { source: mount.source, users: 1 });
    try {
      const existing = await readlink(mount.target).catch(() => undefined);
      if (existing !== mount.source) await symlink(mount.source, mount.target);
    } catch (error) {
      // Whatever is there is not this process's to remove.
      LINKS.delete(mount.target);
      await fail(mount, error);
    }
    taken.push(mount.target);
  }
  return taken;
}

/** Lets go of targets {@link linkMounts} took: a link no open sandbox uses any more is removed. */
async function releaseLinks(targets: readonly string[]): Promise<void> {
  for (const target of targets) {
    const held = LINKS.get(target);
    if (held === undefined) continue;
    held.users -= 1;
    if (held.users > 0) continue;
    LINKS.delete(target);
    await unlink(target).catch(() => undefined);
  }
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
          await releaseLinks(links);
        },
      });
    },
  };
}
