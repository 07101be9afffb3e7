import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { uniqueTarget } from '@envgen/sandbox';
import type { Sandbox, SandboxLimits, SandboxMount, SandboxProvider } from '@envgen/sandbox';

/** Host directory of envgen's pytest plugin (`envgen_pytest.py`), shipped beside `src/`. */
export const PYTEST_SUPPORT_DIR = fileURLToPath(new URL('../python', import.meta.url));
/**
 * Where the plugin's directory appears inside a sandbox (read-only): a path of this envgen
 * process's own, since the `none` backend links it on the host, where another envgen process
 * (another checkout of envgen, a test worker) links its own.
 */
export const SANDBOX_SUPPORT_DIR = uniqueTarget('/tmp/envgen-support');
/**
 * Where result files are written inside a sandbox (read-write, shared with the host): this
 * prefix and a suffix of each sandbox's own ({@link uniqueTarget}).
 */
export const SANDBOX_OUT_DIR = '/tmp/envgen-out';

/** A host directory receiving result files, and where a sandbox's commands see it. */
export interface OutDir {
  outDir: string;
  /** Where `outDir` is mounted inside the sandbox: {@link SANDBOX_OUT_DIR} and a suffix of its own. */
  outTarget: string;
}

/** A sandbox with envgen's pytest plugin mounted and a host directory receiving result files. */
export interface PytestSandbox extends OutDir {
  sandbox: Sandbox;
  /** Disposes the sandbox and removes `outDir`. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openPytestSandbox}. */
export interface OpenPytestSandboxOptions {
  /** Host path of the worktree the tests run in. */
  worktree: string;
  /** Default limits of every command in this sandbox. */
  limits?: Partial<SandboxLimits>;
  /** Extra environment of every command. */
  env?: Record<string, string>;
  /** docker: image to run. */
  image?: string;
}

/** A fresh host directory for result files, writable by any user, with a target of its own. */
export async function makeOutDir(prefix: string): Promise<OutDir> {
  const outDir = await mkdtemp(join(tmpdir(), prefix));
  // Containers may run tests as another user; the directory only ever holds result files.
  await chmod(outDir, 0o777);
  return { outDir, outTarget: uniqueTarget(SANDBOX_OUT_DIR) };
}

/** The mounts {@link runPytest} needs: the plugin (ro) and the out directory (rw). */
export function pytestMounts(out: OutDir): SandboxMount[] {
  return [
    { source: PYTEST_SUPPORT_DIR, target: SANDBOX_SUPPORT_DIR, readonly: true },
    { source: out.outDir, target: out.outTarget, readonly: false },
  ];
}

/**
 * Opens a sandbox over `worktree` ready for {@link runPytest}: the plugin directory is
 * mounted (not copied), and a fresh host directory receives the result files.
 */
export async function openPytestSandbox(
  provider: SandboxProvider,
  options: OpenPytestSandboxOptions,
): Promise<PytestSandbox> {
  const out = await makeOutDir('envgen-testrun-');
  const { outDir } = out;
  let sandbox: Sandbox;
  try {
    sandbox = await provider.open({
      worktree: options.worktree,
      mounts: pytestMounts(out),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.image === undefined ? {} : { image: options.image }),
    });
  } catch (error) {
    await rm(outDir, { recursive: true, force: true });
    throw error;
  }
  let closed = false;
  return {
    sandbox,
    ...out,
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await sandbox.dispose();
      } finally {
        await rm(outDir, { recursive: true, force: true });
      }
    },
  };
}
