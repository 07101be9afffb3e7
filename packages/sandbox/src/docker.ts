import { Writable } from 'node:stream';
import Docker from 'dockerode';
import { ERROR_CODES, EnvgenError, describeError, silentLogger } from '@envgen/core';
import type { Logger } from '@envgen/core';
import { ROOT_FILE_CAPABILITIES, SANDBOX_WORKDIR, checkSandboxOptions, resolveExecSettings, resolveLimits } from './exec-settings.js';
import type { RunningCommand } from './host-exec.js';
import { createOutputCollector } from './output.js';
import type { OutputCollector } from './output.js';
import { createSandboxHandle } from './sandbox-handle.js';
import { LIMIT_COUNTERS_ENV } from './types.js';
import type { ExecResult, ExecStatus, SandboxLimits, SandboxProvider } from './types.js';

/** The image `docker/python/Dockerfile` and `docker/build-base-image.sh` build. */
export const DEFAULT_DOCKER_IMAGE = 'envgen/python:bookworm';

export interface DockerProviderOptions {
  /** Image of every sandbox unless SandboxOptions.image says otherwise. */
  image?: string;
  /** Engine socket (default: dockerode's default, /var/run/docker.sock or DOCKER_HOST). */
  socketPath?: string;
  /** CPUs each container may use (HostConfig.NanoCpus); default 1. */
  cpus?: number;
  logger?: Logger;
}

/** docker-init (pid 1), the `sleep` that keeps the container up, and each exec's wrapper shell. */
const CONTAINER_PROCESSES = 3;

/**
 * Runs each command as `sh -c WRAPPER envgen-exec <nonce> argv...`. The wrapper reads the
 * container cgroup's OOM-kill and pids-limit counters before and after the command (shell
 * builtins only: no fork is needed, so it works with the process limit exhausted), names
 * their files to the command ({@link LIMIT_COUNTERS_ENV}), writes them and the exit status
 * as a last stderr line, then kills what the command left behind: processes carrying its
 * ENVGEN_EXEC marker, and its own process group.
 */
const WRAPPER = `n=$1; shift
c() { s=; for f in memory/memory.oom_control memory.events pids/pids.events pids.events; do
  if [ -r /sys/fs/cgroup/$f ]; then while read -r k v; do s="$s$f:$k=$v,"; done < /sys/fs/cgroup/$f; fi; done; }
c; b=$s
L=; for f in memory/memory.oom_control memory.events pids/pids.events pids.events; do
  [ -r /sys/fs/cgroup/$f ] && L="$L\${L:+:}/sys/fs/cgroup/$f"; done
export ${LIMIT_COUNTERS_ENV}="$L"
"$@"
r=$?
c
printf '\\nenvgen-exec-%s %s %s|%s\\n' "$n" "$r" "$b" "$s" >&2
for f in $(grep -lsz "^ENVGEN_EXEC=$n\\$" /proc/[0-9]*/environ); do
  p=\${f%/environ}; p=\${p#/proc/}; [ "$p" = $$ ] || kill -KILL "$p" 2>/dev/null; done
kill -KILL 0`;

interface Trailer {
  exitCode: number;
  memoryLimitHit: boolean;
  processLimitHit: boolean;
  /** Where the trailer starts in the stderr stream, in bytes. */
  offset: number;
}

function parseCounters(text: string): Map<string, number> {
  const counters = new Map<string, number>();
  for (const entry of text.split(',')) {
    const match = /^(.+)=(\d+)$/.exec(entry);
    if (match) counters.set(match[1] ?? '', Number(match[2]));
  }
  return counters;
}

/** Finds the wrapper's last line in the end of stderr. */
function readTrailer(stderr: OutputCollector, nonce: string): Trailer | undefined {
  const tail = stderr.tail().toString('latin1');
  const marker = `\nenvgen-exec-${nonce} `;
  const at = tail.lastIndexOf(marker);
  if (at < 0) return undefined;
  const match = /^(\d+) ([^|\n]*)\|([^\n]*)\n/.exec(tail.slice(at + marker.length));
  if (!match) return undefined;
  const before = parseCounters(match[2] ?? '');
  const after = parseCounters(match[3] ?? '');
  const grew = (test: (key: string) => boolean): boolean =>
    [...after].some(([key, value]) => test(key) && value > (before.get(key) ?? 0));
  return {
    exitCode: Number(match[1]),
    memoryLimitHit: grew((key) => key.startsWith('memory') && key.endsWith(':oom_kill')),
    processLimitHit: grew((key) => key.startsWith('pids') && key.endsWith(':max')),
    offset: stderr.totalBytes - tail.length + at,
  };
}

function collectInto(collector: OutputCollector): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      collector.push(chunk);
      callback();
    },
  });
}

function unavailable(message: string, cause: unknown): EnvgenError {
  return new EnvgenError(ERROR_CODES.sandboxUnavailable, `${message} (${describeError(cause)})`, { cause });
}

/**
 * The `docker` backend: one container per sandbox, one `exec` per command.
 *
 * Security model: NetworkMode none, read-only root filesystem with a private tmpfs /tmp,
 * the worktree bind-mounted read-write at /tmp/repo (mounts as extra binds), all
 * capabilities dropped, no-new-privileges, docker-init as pid 1. The worktree must be a
 * path on the engine's host.
 *
 * Limits: memory (no swap), pids and CPUs are container limits, updated before an exec
 * whose limits differ. At a timeout the container is restarted (SIGKILL to its init kills
 * every process; /tmp is emptied) and the command reports `timeout`; other commands
 * running in the same sandbox at that moment report `killed`. When a command ends, the
 * processes it left behind are killed. OOM kills and pids-limit hits are read from the
 * container's cgroup counters before and after each command.
 */
export function createDockerProvider(options: DockerProviderOptions = {}): SandboxProvider {
  const logger = options.logger ?? silentLogger;
  const docker = new Docker(options.socketPath ? { socketPath: options.socketPath } : undefined);
  const where = options.socketPath ?? process.env.DOCKER_HOST ?? '/var/run/docker.sock';
  const nanoCpus = Math.round((options.cpus ?? 1) * 1e9);

  async function checkImage(image: string): Promise<void> {
    try {
      await docker.getImage(image).inspect();
    } catch (error) {
      throw unavailable(
        `Docker image ${image} is missing: build it with scripts/start-docker.sh (or docker build -t ${DEFAULT_DOCKER_IMAGE} docker/python)`,
        error,
      );
    }
  }

  return {
    kind: 'docker',
    async ensureAvailable() {
      try {
        await docker.ping();
      } catch (error) {
        throw unavailable(
          `No Docker engine answers at ${where}: start one with scripts/start-docker.sh, or use the local sandbox`,
          error,
        );
      }
      await checkImage(options.image ?? DEFAULT_DOCKER_IMAGE);
    },

    async open(sandboxOptions) {
      const mounts = await checkSandboxOptions(sandboxOptions);
      const image = sandboxOptions.image ?? options.image ?? DEFAULT_DOCKER_IMAGE;
      await checkImage(image);
      const sandboxLimits = resolveLimits(sandboxOptions.limits);
      const containerLimits = (limits: SandboxLimits): { Memory: number; MemorySwap: number; PidsLimit: number } => ({
        Memory: limits.memoryBytes,
        MemorySwap: limits.memoryBytes,
        PidsLimit: limits.maxProcesses + CONTAINER_PROCESSES,
      });
      let container: Docker.Container | undefined;
      try {
        container = await docker.createContainer({
          Image: image,
          Entrypoint: ['sleep'],
          Cmd: ['infinity'],
          WorkingDir: SANDBOX_WORKDIR,
          Labels: { 'envgen.sandbox': 'true' },
          HostConfig: {
            ...containerLimits(sandboxLimits),
            NetworkMode: 'none',
            NanoCpus: nanoCpus,
            ReadonlyRootfs: true,
            Tmpfs: { '/tmp': 'rw,exec,nosuid,nodev,mode=1777' },
            Mounts: [
              { Type: 'bind', Source: sandboxOptions.worktree, Target: SANDBOX_WORKDIR, ReadOnly: false },
              ...mounts.map((mount) => ({
                Type: 'bind' as const,
                Source: mount.source,
                Target: mount.target,
                ReadOnly: mount.readonly,
              })),
            ],
            CapDrop: ['ALL'],
            // The image's user is root: it keeps root's file permissions, as a plain run by root.
            CapAdd: ROOT_FILE_CAPABILITIES,
            SecurityOpt: ['no-new-privileges'],
            Init: true,
          },
        });
        await container.start();
      } catch (error) {
        await container?.remove({ force: true }).catch(() => {});
        throw new EnvgenError(ERROR_CODES.sandboxFailed, `Cannot start a ${image} container: ${describeError(error)}`, {
          cause: error,
        });
      }
      logger.debug('docker sandbox started', { container: container.id.slice(0, 12), image });

      let applied = containerLimits(sandboxLimits);
      let restarts = 0;
      let restarting: Promise<void> | undefined;
      // Set once the container is being removed: a command killed then needs no new start.
      let released = false;
      // Killing the container's init kills every process in it; start it again for the next command.
      const restart = (): Promise<void> => {
        restarting ??= (async () => {
          restarts += 1;
          await container.kill({ signal: 'SIGKILL' }).catch(() => {});
          if (released) return;
          await container.start().catch((error: unknown) => {
            if (!released) logger.warn('docker sandbox could not restart its container', { error: describeError(error) });
          });
        })().finally(() => {
          restarting = undefined;
        });
        return restarting;
      };

      return createSandboxHandle({
        kind: 'docker',
        workdir: SANDBOX_WORKDIR,
        logger,
        async start(argv, execOptions, nonce): Promise<RunningCommand> {
          const settings = resolveExecSettings(sandboxOptions, execOptions, SANDBOX_WORKDIR);
          const { limits } = settings;
          await restarting;
          const restartsAtStart = restarts;
          const started = performance.now();
          let exec: Docker.Exec;
          let stream: NodeJS.ReadWriteStream;
          try {
            const wanted = containerLimits(limits);
            if (wanted.Memory !== applied.Memory || wanted.PidsLimit !== applied.PidsLimit) {
              await container.update(wanted);
              applied = wanted;
            }
            exec = await container.exec({
              Cmd: ['/bin/sh', '-c', WRAPPER, 'envgen-exec', nonce, ...argv],
              Env: Object.entries({ ...settings.env, ENVGEN_EXEC: nonce }).map(([key, value]) => `${key}=${value}`),
              WorkingDir: settings.cwd,
              AttachStdin: execOptions.stdin !== undefined,
              AttachStdout: true,
              AttachStderr: true,
            });
            stream = await exec.start({ hijack: true, stdin: execOptions.stdin !== undefined });
          } catch (error) {
            throw new EnvgenError(
              ERROR_CODES.sandboxFailed,
              `Docker could not run a command in container ${container.id.slice(0, 12)}: ${describeError(error)}`,
              { cause: error },
            );
          }
          const stdout = createOutputCollector(limits.maxOutputBytes);
          // The tail holds the wrapper's trailer even when stderr overflows.
          const stderr = createOutputCollector(limits.maxOutputBytes, 4096);
          docker.modem.demuxStream(stream, collectInto(stdout), collectInto(stderr));
          if (execOptions.stdin !== undefined) stream.end(execOptions.stdin);

          let timedOut = false;
          let killed = false;
          const timer = setTimeout(() => {
            timedOut = true;
            void restart();
          }, limits.timeoutMs);

          const result = (async (): Promise<ExecResult> => {
            await new Promise<void>((resolve) => {
              stream.on('end', resolve);
              stream.on('close', resolve);
              stream.on('error', resolve);
            });
            clearTimeout(timer);
            const trailer = readTrailer(stderr, nonce);
            const exitCode = trailer
              ? trailer.exitCode
              : await exec.inspect().then(
                  (info) => info.ExitCode,
                  () => null,
                );
            const stderrBytes = stderr.head();
            const stderrEnd = trailer ? Math.min(trailer.offset, stderrBytes.length) : stderrBytes.length;
            const stderrTruncated = trailer ? trailer.offset > limits.maxOutputBytes : stderr.truncated;
            let status: ExecStatus = 'exited';
            if (killed || (!timedOut && restarts !== restartsAtStart)) status = 'killed';
            else if (trailer?.memoryLimitHit) status = 'memory';
            else if (trailer?.processLimitHit) status = 'processes';
            else if (timedOut) status = 'timeout';
            return {
              status,
              exitCode: status === 'timeout' || status === 'killed' ? null : exitCode,
              signal: null,
              stdout: stdout.head().toString('utf8'),
              stderr: stderrBytes.subarray(0, stderrEnd).toString('utf8'),
              truncated: stdout.truncated || stderrTruncated,
              durationMs: Math.round(performance.now() - started),
            };
          })();
          return {
            result,
            kill() {
              killed = true;
              void restart();
            },
          };
        },
        async release() {
          released = true;
          await container.remove({ force: true }).catch((error: unknown) => {
            logger.warn('docker sandbox could not remove its container', {
              container: container.id.slice(0, 12),
              error: describeError(error),
            });
          });
        },
      });
    },
  };
}
