import type { Logger } from '@envgen/core';
import { createDockerProvider } from './docker.js';
import type { DockerProviderOptions } from './docker.js';
import { createLocalProvider } from './local.js';
import { createNoneProvider } from './none.js';
import type { SandboxKind, SandboxProvider } from './types.js';

export interface SandboxProviderOptions {
  logger?: Logger;
  /** Options of the `docker` backend; ignored by the others. */
  docker?: DockerProviderOptions;
}

/**
 * The one way to get a sandbox backend.
 *
 * - `local` (default): a bubblewrap jail per command on this host — read-only root, the
 *   worktree writable at /tmp/repo, no network, no capabilities, per-command cgroups.
 * - `docker`: one container per sandbox (NetworkMode none, read-only rootfs, tmpfs /tmp,
 *   no capabilities, memory/pids/CPU limits), one `exec` per command.
 * - `none`: no isolation at all, only limits; logs a loud warning when opened.
 *
 * Every backend enforces the same {@link SandboxLimits}: the wall clock kills the whole
 * process tree (`timeout`), the memory and process limits are reported as `memory` and
 * `processes`, stdout and stderr are each cut at maxOutputBytes (`truncated`). Call
 * `ensureAvailable()` first for a clear error when the backend cannot run here.
 */
export function createSandboxProvider(kind: SandboxKind, options: SandboxProviderOptions = {}): SandboxProvider {
  switch (kind) {
    case 'local':
      return createLocalProvider({ logger: options.logger });
    case 'docker':
      return createDockerProvider({ ...options.docker, logger: options.logger });
    case 'none':
      return createNoneProvider({ logger: options.logger });
  }
}
