import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { BundleFiles } from '@envgen/core';
import { writePatchedFiles } from '@envgen/patch';
import type { PatchedFile } from '@envgen/patch';
import { uniqueTarget } from '@envgen/sandbox';
import type { ExecResult, SandboxProvider } from '@envgen/sandbox';

/** A test outcome as a bundle's parser reports it. */
export type BundleTestStatus = 'passed' | 'failed' | 'skipped';

/** Where the bundle's script and parser appear inside the sandbox (read-only): this prefix and a suffix of the runner's own. */
const SANDBOX_BUNDLE_DIR = '/tmp/envgen-bundle';

/** Limits of one evaluation of a bundle's script and parser. */
export interface BundleRunLimits {
  /** Wall-clock limit of test_script.sh. */
  scriptTimeoutMs: number;
  /** Wall-clock limit of test_parser.py. */
  parserTimeoutMs: number;
  /** Output above this many bytes (script or parser) fails the run as a flood. */
  maxOutputBytes: number;
}

/** Output any run may print: enough for ordinary suites, while a flood stops early. */
const MIN_OUTPUT_BYTES = 8 * 1024 ** 2;
/** Output per test of a bigger suite: its line of results from the script, its entry in the parser's JSON, and room. */
const OUTPUT_BYTES_PER_TEST = 1024;

/**
 * Limits of a bundle's runs on a suite of `tests` tests (0 when unknown): the script gets the
 * suite's own time limit, the parser 60 s, and each may print 8 MiB or 1 KiB per test, which
 * ever is more. A suite of tens of thousands of parametrized cases (pypa/packaging collects
 * 62,435) prints more than 8 MiB of results on a clean run.
 */
export function bundleRunLimits(scriptTimeoutMs: number, tests = 0): BundleRunLimits {
  return { scriptTimeoutMs, parserTimeoutMs: 60_000, maxOutputBytes: Math.max(MIN_OUTPUT_BYTES, tests * OUTPUT_BYTES_PER_TEST) };
}

/** One evaluation: the tree it ran on, and either the parsed results or why there are none. */
export type BundleRun =
  | { ok: true; label: string; results: Record<string, BundleTestStatus>; seconds: number }
  | { ok: false; label: string; stage: 'script' | 'parser'; reason: string };

/** Runs a bundle's test_script.sh and test_parser.py on copies of a clean tree. */
export interface BundleRunner {
  /** Copies the clean tree, writes `files` over the copy, runs script then parser in the sandbox. */
  run(label: string, files: readonly PatchedFile[]): Promise<BundleRun>;
  /** Removes the runner's temporary files. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link createBundleRunner}. */
export interface CreateBundleRunnerOptions {
  bundle: BundleFiles;
  /** Host path of the clean tree; it is only read (each run works on a fresh copy). */
  worktree: string;
  /** Interpreter that runs test_parser.py inside the sandbox. */
  python: string;
  sandboxProvider: SandboxProvider;
  limits: BundleRunLimits;
  /** docker: the image to run. */
  image?: string;
}

function tail(text: string, chars = 300): string {
  const trimmed = text.trim();
  return trimmed.length <= chars ? trimmed : `…${trimmed.slice(-chars)}`;
}

function describeStop(exec: ExecResult, what: string, limits: BundleRunLimits, timeoutMs: number): string | null {
  switch (exec.status) {
    case 'timeout':
      return `${what} did not finish within ${timeoutMs / 1000}s and was killed`;
    case 'memory':
      return `${what} hit the sandbox memory limit and was killed`;
    case 'processes':
      return `${what} hit the sandbox process limit and was killed`;
    case 'killed':
      return `${what} was killed by signal ${exec.signal ?? '?'}`;
    case 'exited':
      return exec.truncated ? `${what} flooded its output: more than ${limits.maxOutputBytes} bytes (output cut)` : null;
  }
}

/** The parser's stdout as results, or why it is not one JSON object of test id → status. */
export function readParserOutput(stdout: string): { results: Record<string, BundleTestStatus> } | { problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(stdout);
  } catch {
    return { problem: `test_parser.py did not print one JSON object; it printed ${JSON.stringify(tail(stdout, 200))}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { problem: `test_parser.py printed JSON that is not an object: ${JSON.stringify(tail(stdout, 200))}` };
  }
  const results: Record<string, BundleTestStatus> = {};
  for (const [id, status] of Object.entries(data)) {
    if (status !== 'passed' && status !== 'failed' && status !== 'skipped') {
      return { problem: `test_parser.py gave test ${JSON.stringify(id)} the status ${JSON.stringify(status)}; allowed: "passed", "failed", "skipped"` };
    }
    results[id] = status;
  }
  return { results };
}

/**
 * A runner for a bundle's own script and parser, both untrusted: each run gets a fresh copy
 * of the clean tree (so listed test files and everything else are restored), the patched files
 * are written with writePatchedFiles (no symlinks), and the script and parser run in the
 * sandbox under wall-clock, memory, process and output limits. A hang, a flood or garbage
 * output is a failed run with its reason, never an exception.
 */
export async function createBundleRunner(options: CreateBundleRunnerOptions): Promise<BundleRunner> {
  const scratch = await mkdtemp(join(tmpdir(), 'envgen-bundle-check-'));
  const bundleDir = join(scratch, 'bundle');
  await mkdir(bundleDir);
  await writeFile(join(bundleDir, 'test_script.sh'), options.bundle['test_script.sh']);
  await writeFile(join(bundleDir, 'test_parser.py'), options.bundle['test_parser.py']);
  await chmod(bundleDir, 0o755);
  const bundleTarget = uniqueTarget(SANDBOX_BUNDLE_DIR);
  let count = 0;
  let closed = false;
  return {
    async run(label, files) {
      count += 1;
      const tree = join(scratch, `tree-${count}`);
      await cp(options.worktree, tree, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (source) => !(basename(source) === '.git' && source === join(options.worktree, '.git')),
      });
      try {
        await writePatchedFiles(tree, files);
        const sandbox = await options.sandboxProvider.open({
          worktree: tree,
          mounts: [{ source: bundleDir, target: bundleTarget, readonly: true }],
          ...(options.image === undefined ? {} : { image: options.image }),
        });
        try {
          // stdout goes through an unbuffered `head`, so a script flooding it dies of SIGPIPE at the cap
          // instead of running until the wall-clock limit.
          const cap = options.limits.maxOutputBytes;
          const script = await sandbox.exec(['bash', '-c', `bash ${bundleTarget}/test_script.sh | stdbuf -o0 head -c ${cap + 1}`], {
            limits: { timeoutMs: options.limits.scriptTimeoutMs, maxOutputBytes: cap + 1 },
          });
          const flooded = Buffer.byteLength(script.stdout) > cap;
          const scriptStop = flooded ? `test_script.sh flooded its output: more than ${cap} bytes (output cut)` : describeStop(script, 'test_script.sh', options.limits, options.limits.scriptTimeoutMs);
          if (scriptStop) return { ok: false, label, stage: 'script', reason: `${scriptStop}; last output: ${JSON.stringify(tail(script.stdout || script.stderr))}` };
          const parser = await sandbox.exec([options.python, `${bundleTarget}/test_parser.py`], {
            stdin: script.stdout,
            limits: { timeoutMs: options.limits.parserTimeoutMs, maxOutputBytes: options.limits.maxOutputBytes },
          });
          const parserStop = describeStop(parser, 'test_parser.py', options.limits, options.limits.parserTimeoutMs);
          if (parserStop) return { ok: false, label, stage: 'parser', reason: parserStop };
          if (parser.exitCode !== 0) {
            return { ok: false, label, stage: 'parser', reason: `test_parser.py exited with code ${parser.exitCode}: ${JSON.stringify(tail(parser.stderr || parser.stdout))}` };
          }
          const read = readParserOutput(parser.stdout);
          if ('problem' in read) return { ok: false, label, stage: 'parser', reason: read.problem };
          return { ok: true, label, results: read.results, seconds: script.durationMs / 1000 };
        } finally {
          await sandbox.dispose();
        }
      } finally {
        await rm(tree, { recursive: true, force: true });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
