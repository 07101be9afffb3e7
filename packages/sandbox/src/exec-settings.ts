import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CODES, EnvgenError, describeError } from '@envgen/core';
import { DEFAULT_LIMITS } from './types.js';
import type { ExecOptions, SandboxLimits, SandboxMount, SandboxOptions } from './types.js';

/** Where the worktree appears inside the jailed backends (`local`, `docker`). */
export const SANDBOX_WORKDIR = '/tmp/repo';

/**
 * What root keeps in the jailed backends, which drop every other capability: the file
 * permissions root has, as a plain run by root has them. Without them uid 0 is neither root
 * nor a user: a test that asks `os.getuid() == 0` (pyfakefs compares its fake file system's
 * root behaviour with the real one) expects a read-only directory to be writable and finds it
 * is not. Mounts, namespaces, devices, signals to the host and the network stay out of reach.
 */
export const ROOT_FILE_CAPABILITIES = ['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_DAC_READ_SEARCH', 'CAP_FOWNER', 'CAP_FSETID'];

/**
 * A mount target of its own under `prefix` (e.g. `/tmp/envgen-out-1f2e3d4c5b6a`), for a
 * directory that differs per sandbox: the `none` backend links every target on the host,
 * where two sandboxes open at once (the baseline's two runs, the validator's workers) would
 * otherwise want one path for two directories.
 */
export function uniqueTarget(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** The environment every command starts from; sandbox and exec `env` are layered on top. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/tmp',
  TMPDIR: '/tmp',
  LANG: 'C.UTF-8',
};

/** What one command runs with, resolved from the sandbox's and the exec's options. */
export interface ExecSettings {
  limits: SandboxLimits;
  env: Record<string, string>;
  /** Absolute working directory as the command sees it. */
  cwd: string;
}

/** Layers DEFAULT_LIMITS < sandbox limits < exec limits and checks every value is usable. */
export function resolveLimits(...layers: (Partial<SandboxLimits> | undefined)[]): SandboxLimits {
  const limits: SandboxLimits = { ...DEFAULT_LIMITS };
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      if (value !== undefined) limits[key as keyof SandboxLimits] = value;
    }
  }
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new EnvgenError(ERROR_CODES.usage, `Sandbox limit ${key} must be a positive integer, got ${String(value)}.`);
    }
  }
  return limits;
}

/**
 * Resolves limits, environment and working directory of one command. `workdir` is the
 * worktree as the command sees it; `cwd` may not leave it.
 */
export function resolveExecSettings(sandbox: SandboxOptions, exec: ExecOptions, workdir: string): ExecSettings {
  return {
    limits: resolveLimits(sandbox.limits, exec.limits),
    env: { ...BASE_ENV, ...sandbox.env, ...exec.env },
    cwd: resolveCwd(workdir, exec.cwd),
  };
}

function resolveCwd(workdir: string, cwd: string | undefined): string {
  if (cwd === undefined || cwd === '' || cwd === '.') return workdir;
  const resolved = path.posix.resolve(workdir, cwd);
  if (path.isAbsolute(cwd) || (resolved !== workdir && !resolved.startsWith(`${workdir}/`))) {
    throw new EnvgenError(
      ERROR_CODES.pathEscape,
      `Exec cwd "${cwd}" leaves the worktree: pass a path relative to the worktree root.`,
    );
  }
  return resolved;
}

/**
 * Checks the sandbox options every backend shares: an absolute worktree directory, and mounts from
 * absolute host paths onto distinct targets under /tmp (other than the worktree itself).
 * Returns the mounts.
 */
export async function checkSandboxOptions(options: SandboxOptions): Promise<SandboxMount[]> {
  if (!path.isAbsolute(options.worktree)) {
    throw new EnvgenError(ERROR_CODES.usage, `Sandbox worktree must be an absolute path, got "${options.worktree}".`);
  }
  const worktree = await stat(options.worktree).catch((error: unknown) => {
    throw new EnvgenError(ERROR_CODES.usage, `Sandbox worktree ${options.worktree} cannot be read: ${describeError(error)}`, {
      cause: error,
    });
  });
  if (!worktree.isDirectory()) {
    throw new EnvgenError(ERROR_CODES.usage, `Sandbox worktree ${options.worktree} is not a directory.`);
  }
  const mounts = options.mounts ?? [];
  const targets = new Set<string>();
  for (const mount of mounts) {
    const target = path.posix.normalize(mount.target);
    if (!path.isAbsolute(mount.source)) {
      throw new EnvgenError(ERROR_CODES.usage, `Mount source must be an absolute host path, got "${mount.source}".`);
    }
    if (target !== mount.target || !target.startsWith('/tmp/') || target === SANDBOX_WORKDIR || targets.has(target)) {
      throw new EnvgenError(
        ERROR_CODES.usage,
        `Mount target "${mount.target}" must be a distinct normalized path under /tmp other than ${SANDBOX_WORKDIR}, e.g. /tmp/envgen-plugin.`,
      );
    }
    targets.add(target);
  }
  return mounts;
}
