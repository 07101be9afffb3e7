import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from '@envgen/core';
import type { Logger } from '@envgen/core';
import type { SandboxLimits } from './types.js';

/**
 * Where per-command cgroups can be made. `v1`: one directory under the memory hierarchy
 * and one under the pids hierarchy; `v2`: one directory in the unified hierarchy;
 * `unavailable`: no writable cgroup with both controllers (then only rlimits apply).
 */
export type CgroupLayout =
  | { kind: 'v1'; memoryParent: string; pidsParent: string }
  | { kind: 'v2'; parent: string }
  | { kind: 'unavailable'; reason: string };

/** What the limits of one cgroup did while the command ran. */
export interface CgroupEvents {
  /** The OOM killer killed a process because the memory limit was reached. */
  memoryLimitHit: boolean;
  /** A fork/clone failed because the process limit was reached. */
  processLimitHit: boolean;
}

/** A cgroup made for one command and removed after it. */
export interface ExecCgroup {
  /** `cgroup.procs` files the command's first process writes its pid into before exec. */
  readonly procsFiles: readonly string[];
  /**
   * The files of its limits' counters (`key value` lines): the memory controller's, whose
   * `oom_kill` counts the processes its limit killed, and the pids controller's, whose `max`
   * counts the forks its limit refused.
   */
  readonly counterFiles: readonly string[];
  readEvents(): Promise<CgroupEvents>;
  /** SIGKILLs every process in the cgroup until none is left. */
  killAll(): Promise<void>;
  /** Removes the cgroup directories; retries while the kernel still tears processes down. */
  remove(): Promise<void>;
}

interface MountedHierarchy {
  mountPoint: string;
  fsType: string;
  options: string[];
}

async function readMountedHierarchies(): Promise<MountedHierarchy[]> {
  const mounts = await readFile('/proc/self/mounts', 'utf8');
  return mounts
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[2] === 'cgroup' || fields[2] === 'cgroup2')
    .map((fields) => ({
      mountPoint: (fields[1] ?? '').replace(/\\040/g, ' '),
      fsType: fields[2] ?? '',
      options: (fields[3] ?? '').split(','),
    }));
}

/** The cgroup of this process in each hierarchy: `memory` → `/a/b`, `` (v2) → `/c`. */
async function readOwnCgroups(): Promise<Map<string, string>> {
  const text = await readFile('/proc/self/cgroup', 'utf8');
  const own = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of (match[1] ?? '').split(',')) own.set(controller, match[2] ?? '/');
  }
  return own;
}

async function isWritableParent(dir: string): Promise<boolean> {
  const probe = path.join(dir, `envgen-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(probe);
    await rmdir(probe);
    return true;
  } catch {
    return false;
  }
}

async function hasControllers(file: string, wanted: readonly string[]): Promise<boolean> {
  const list = await readFile(file, 'utf8').catch(() => '');
  const present = new Set(list.trim().split(/\s+/));
  return wanted.every((controller) => present.has(controller));
}

/**
 * Finds where per-command cgroups can be created, nested under this process's own cgroup
 * so they count against whatever limits the host already puts on it. Prefers cgroup v1
 * memory+pids hierarchies, then cgroup v2 (own cgroup with the controllers delegated to
 * its children, or else a sibling under the parent, which must already delegate them).
 */
export async function detectCgroupLayout(): Promise<CgroupLayout> {
  const [hierarchies, own] = await Promise.all([readMountedHierarchies(), readOwnCgroups()]);
  const v1Parent = (controller: string): string | undefined => {
    const mounted = hierarchies.find((h) => h.fsType === 'cgroup' && h.options.includes(controller));
    const ownPath = own.get(controller);
    return mounted && ownPath !== undefined ? path.join(mounted.mountPoint, ownPath) : undefined;
  };
  const memoryParent = v1Parent('memory');
  const pidsParent = v1Parent('pids');
  if (memoryParent && pidsParent && (await isWritableParent(memoryParent)) && (await isWritableParent(pidsParent))) {
    return { kind: 'v1', memoryParent, pidsParent };
  }

  const unified = hierarchies.find((h) => h.fsType === 'cgroup2');
  const ownV2 = own.get('');
  if (unified && ownV2 !== undefined) {
    const wanted = ['memory', 'pids'];
    const ownDir = path.join(unified.mountPoint, ownV2);
    const enabled = await writeFile(path.join(ownDir, 'cgroup.subtree_control'), '+memory +pids').then(
      () => true,
      () => false,
    );
    if (enabled && (await isWritableParent(ownDir))) return { kind: 'v2', parent: ownDir };
    // Controllers available in our own cgroup are enabled in the parent's subtree_control.
    const parentDir = path.dirname(ownDir);
    if (
      ownDir !== unified.mountPoint &&
      (await hasControllers(path.join(ownDir, 'cgroup.controllers'), wanted)) &&
      (await isWritableParent(parentDir))
    ) {
      return { kind: 'v2', parent: parentDir };
    }
  }
  return {
    kind: 'unavailable',
    reason: 'no writable cgroup with the memory and pids controllers (run as root, or delegate a cgroup v2 subtree)',
  };
}


/**
 * Removes the empty cgroups a killed envgen process left behind (named after its pid, see
 * {@link createExecCgroup}). Cgroups still holding processes are kept.
 */
export async function removeStaleCgroups(layout: CgroupLayout): Promise<void> {
  if (layout.kind === 'unavailable') return;
  const parents = layout.kind === 'v1' ? [layout.memoryParent, layout.pidsParent] : [layout.parent];
  for (const parent of parents) {
    for (const name of await readdir(parent).catch(() => [])) {
      const owner = /^envgen-(\d+)-\d+$/.exec(name)?.[1];
      if (owner !== undefined && !isProcessAlive(Number(owner))) await rmdir(path.join(parent, name)).catch(() => {});
    }
  }
}

/**
 * Detects the layout once (on first call), sweeps stale cgroups, and logs what it means:
 * a warning when only rlimits will apply.
 */
export function memoizeCgroupLayout(logger: Logger): () => Promise<CgroupLayout> {
  let layout: Promise<CgroupLayout> | undefined;
  return () => {
    layout ??= detectCgroupLayout().then(async (found) => {
      await removeStaleCgroups(found);
      if (found.kind === 'unavailable') {
        logger.warn(
          'sandbox: memory and process limits fall back to prlimit (address space only; the process limit is not enforced for root)',
          { reason: found.reason },
        );
      } else {
        logger.debug('sandbox: per-command cgroups', { layout: found.kind });
      }
      return found;
    });
    return layout;
  };
}

function readCounter(text: string, key: string): number {
  const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

async function readText(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(() => '');
}

async function killProcs(procsFile: string): Promise<void> {
  for (let round = 0; round < 100; round += 1) {
    const pids = (await readText(procsFile)).split('\n').filter(Boolean).map(Number);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function removeDir(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** What the memory controller's `oom_kill` and the pids controller's `max` counted. */
async function readCounterFiles([memoryFile, pidsFile]: readonly [string, string]): Promise<CgroupEvents> {
  const [memory, pids] = await Promise.all([readText(memoryFile), readText(pidsFile)]);
  return { memoryLimitHit: readCounter(memory, 'oom_kill') > 0, processLimitHit: readCounter(pids, 'max') > 0 };
}

let sequence = 0;

/** Creates a cgroup (one per hierarchy on v1) limiting memory and processes for one command. */
export async function createExecCgroup(
  layout: Exclude<CgroupLayout, { kind: 'unavailable' }>,
  limits: Pick<SandboxLimits, 'memoryBytes'> & { pidsMax: number },
): Promise<ExecCgroup> {
  sequence += 1;
  const name = `envgen-${process.pid}-${sequence}`;
  if (layout.kind === 'v1') {
    const memoryDir = path.join(layout.memoryParent, name);
    const pidsDir = path.join(layout.pidsParent, name);
    await mkdir(memoryDir);
    await mkdir(pidsDir).catch(async (error: unknown) => {
      await rmdir(memoryDir);
      throw error;
    });
    await writeFile(path.join(memoryDir, 'memory.limit_in_bytes'), String(limits.memoryBytes));
    // Without this the limit would only push pages to swap, where a host has swap.
    await writeFile(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(() => {});
    await writeFile(path.join(pidsDir, 'pids.max'), String(limits.pidsMax));
    const counterFiles = [path.join(memoryDir, 'memory.oom_control'), path.join(pidsDir, 'pids.events')] as const;
    return {
      procsFiles: [path.join(memoryDir, 'cgroup.procs'), path.join(pidsDir, 'cgroup.procs')],
      counterFiles,
      readEvents: () => readCounterFiles(counterFiles),
      killAll: () => killProcs(path.join(pidsDir, 'cgroup.procs')),
      async remove() {
        await Promise.all([removeDir(memoryDir), removeDir(pidsDir)]);
      },
    };
  }
  const dir = path.join(layout.parent, name);
  await mkdir(dir);
  await writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
  await writeFile(path.join(dir, 'memory.swap.max'), '0').catch(() => {});
  await writeFile(path.join(dir, 'pids.max'), String(limits.pidsMax));
  const counterFiles = [path.join(dir, 'memory.events'), path.join(dir, 'pids.events')] as const;
  return {
    procsFiles: [path.join(dir, 'cgroup.procs')],
    counterFiles,
    readEvents: () => readCounterFiles(counterFiles),
    async killAll() {
      // cgroup.kill (Linux 5.14+) kills atomically; the loop covers older kernels.
      await writeFile(path.join(dir, 'cgroup.kill'), '1').catch(() => {});
      await killProcs(path.join(dir, 'cgroup.procs'));
    },
    remove: () => removeDir(dir),
  };
}
