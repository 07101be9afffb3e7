/**
 * The behaviour every sandbox backend must have, as one vitest suite. Test-only: used by
 * local.slow.test.ts, docker.slow.test.ts and none.slow.test.ts, never built.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@envgen/core';
import { createSandboxProvider } from './provider.js';
import { LIMIT_COUNTERS_ENV } from './types.js';
import type { Sandbox, SandboxKind, SandboxLimits } from './types.js';

const PYTHON = '/usr/bin/python3';
const MiB = 1024 ** 2;

export interface ContractOptions {
  /** Run the isolation tests (network, writes outside the worktree, read-only mounts). */
  isolated: boolean;
  /** When set, the suite is skipped and this says why. */
  skipReason?: string;
}

/** Host processes whose command line contains `marker`. */
async function findProcesses(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) found.push(Number(entry));
  }
  return found;
}

async function waitForNoProcesses(marker: string, withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = await findProcesses(marker);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function hostAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((info) => info && info.family === 'IPv4' && !info.internal)?.address;
}

// Tries each target (`host:port` over TCP, or a Unix socket path) and prints how each ended.
const CONNECT_SCRIPT = `
import socket, sys
out = []
for target in sys.argv[1:]:
    unix = target.startswith('/')
    s = socket.socket(socket.AF_UNIX if unix else socket.AF_INET)
    s.settimeout(3)
    try:
        if unix:
            s.connect(target)
        else:
            host, port = target.rsplit(':', 1)
            s.connect((host, int(port)))
        out.append('connected')
    except OSError as error:
        out.append(type(error).__name__)
    finally:
        s.close()
print(' '.join(out))
`;

const LOOPBACK_SCRIPT = `
import socket
server = socket.socket()
server.bind(('127.0.0.1', 0))
server.listen()
client = socket.create_connection(server.getsockname(), timeout=3)
peer, _ = server.accept()
client.sendall(b'ping')
print(peer.recv(4).decode(), sorted(name for _, name in socket.if_nameindex()))
`;

// Every process forks until the process limit refuses, then exits; the parent waits for its children.
const FORK_BOMB = `
import os
children = []
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        children = []
        continue
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
`;

/** Declares the shared sandbox contract suite for one backend. */
export function describeSandboxContract(kind: SandboxKind, options: ContractOptions): void {
  describe.skipIf(options.skipReason !== undefined)(`${kind} sandbox contract`, () => {
    let root: string;
    let worktree: string;
    let roSource: string;
    let rwSource: string;
    let sandbox: Sandbox;
    const limits: Partial<SandboxLimits> = { timeoutMs: 60_000, memoryBytes: 512 * MiB, maxProcesses: 64 };

    beforeAll(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), `envgen-sandbox-${kind}-`));
      worktree = path.join(root, 'worktree');
      roSource = path.join(root, 'ro');
      rwSource = path.join(root, 'rw');
      await Promise.all([mkdir(path.join(worktree, 'pkg'), { recursive: true }), mkdir(roSource), mkdir(rwSource)]);
      await writeFile(path.join(worktree, 'README'), 'worktree file\n');
      await writeFile(path.join(roSource, 'plugin.py'), 'VALUE = 42\n');
      const provider = createSandboxProvider(kind);
      await provider.ensureAvailable();
      sandbox = await provider.open({
        worktree,
        mounts: [
          { source: roSource, target: `/tmp/envgen-ro-${kind}`, readonly: true },
          { source: rwSource, target: `/tmp/envgen-rw-${kind}`, readonly: false },
        ],
        limits,
        env: { SANDBOX_LEVEL: 'sandbox' },
      });
    });

    afterAll(async () => {
      await sandbox?.dispose();
      await sandbox?.dispose(); // idempotent
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('runs a command and returns its exit code, stdout and stderr', async () => {
      const result = await sandbox.exec(['sh', '-c', 'echo out; echo err >&2; cat README; exit 3']);
      expect(result).toMatchObject({ status: 'exited', exitCode: 3, stdout: 'out\nworktree file\n', stderr: 'err\n' });
      expect(result.truncated).toBe(false);
    });

    it('runs in the worktree or a cwd inside it, with a cleared environment plus sandbox and exec env', async () => {
      process.env.ENVGEN_HOST_ONLY = 'leak';
      const root = await sandbox.exec(['sh', '-c', 'pwd; echo "$HOME|$LANG|$SANDBOX_LEVEL|$EXEC_LEVEL|${ENVGEN_HOST_ONLY:-unset}"'], {
        env: { EXEC_LEVEL: 'exec' },
      });
      delete process.env.ENVGEN_HOST_ONLY;
      expect(root.stdout).toBe(`${sandbox.workdir}\n/tmp|C.UTF-8|sandbox|exec|unset\n`);
      const sub = await sandbox.exec(['pwd'], { cwd: 'pkg' });
      expect(sub.stdout).toBe(`${sandbox.workdir}/pkg\n`);
      await expect(sandbox.exec(['pwd'], { cwd: '../..' })).rejects.toMatchObject({ code: 'path-escape' });
    });

    it('feeds stdin and closes it', async () => {
      const result = await sandbox.exec([PYTHON, '-c', 'import sys; data = sys.stdin.read(); print(len(data), data.upper())'], {
        stdin: 'hello sandbox',
      });
      expect(result.stdout).toBe('13 HELLO SANDBOX\n');
      const empty = await sandbox.exec(['cat']);
      expect(empty).toMatchObject({ status: 'exited', exitCode: 0, stdout: '' });
    });

    it('gives Python multiprocessing a writable /dev/shm', async () => {
      const result = await sandbox.exec([PYTHON, '-c', 'import multiprocessing; multiprocessing.Lock(); print("ok")']);
      expect(result).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'ok\n' });
    });

    it('keeps worktree writes on the host', async () => {
      const result = await sandbox.exec(['sh', '-c', 'echo written > pkg/new.txt && mkdir -p build && touch build/x']);
      expect(result.exitCode).toBe(0);
      expect(await readFile(path.join(worktree, 'pkg/new.txt'), 'utf8')).toBe('written\n');
      expect(existsSync(path.join(worktree, 'build/x'))).toBe(true);
    });

    it("gives uid 0 root's file permissions, as a plain run by root has them, and no other capability", async () => {
      // pyfakefs's tests compare root's behaviour of their fake file system with the real one's.
      const script = [
        'import os',
        "os.mkdir('locked'); os.chmod('locked', 0o555)",
        "try:\n    open('locked/f', 'w').close(); wrote = 'wrote'\nexcept PermissionError:\n    wrote = 'denied'",
        "os.chmod('locked', 0o755); os.remove('locked/f') if wrote == 'wrote' else None; os.rmdir('locked')",
        "effective = int(next(line for line in open('/proc/self/status') if line.startswith('CapEff:')).split()[1], 16)",
        "print(os.getuid(), wrote, hex(effective))",
      ].join('\n');
      const result = await sandbox.exec([PYTHON, '-c', script]);
      expect(result.exitCode).toBe(0);
      const [uid, wrote, effective] = result.stdout.trim().split(' ');
      expect(wrote).toBe(uid === '0' ? 'wrote' : 'denied');
      // CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER and FSETID (bits 0-4) at most.
      if (options.isolated) expect(Number(effective) & ~0x1f).toBe(0);
    });

    it('shows mounts, writable only when rw', async () => {
      const ro = `/tmp/envgen-ro-${kind}`;
      const rw = `/tmp/envgen-rw-${kind}`;
      const read = await sandbox.exec([PYTHON, '-c', `import sys; sys.path.insert(0, '${ro}'); import plugin; print(plugin.VALUE)`]);
      expect(read.stdout).toBe('42\n');
      const write = await sandbox.exec(['sh', '-c', `echo result > ${rw}/out.txt`]);
      expect(write.exitCode).toBe(0);
      expect(await readFile(path.join(rwSource, 'out.txt'), 'utf8')).toBe('result\n');
      if (options.isolated) {
        const denied = await sandbox.exec(['sh', '-c', `echo evil > ${ro}/plugin.py`]);
        expect(denied.exitCode).not.toBe(0);
        expect(await readFile(path.join(roSource, 'plugin.py'), 'utf8')).toBe('VALUE = 42\n');
      }
    });

    it.skipIf(!options.isolated)('has no network: host services are unreachable, loopback is private', async () => {
      let connections = 0;
      const server = net.createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      const { port } = server.address() as net.AddressInfo;
      try {
        const targets = [`127.0.0.1:${port}`];
        const address = hostAddress();
        if (address) targets.push(`${address}:${port}`);
        // Sanity: the server answers from the host itself.
        await new Promise<void>((resolve, reject) => {
          const probe = net.connect(port, '127.0.0.1', () => {
            probe.destroy();
            resolve();
          });
          probe.on('error', reject);
        });
        const seenFromHost = connections;
        const result = await sandbox.exec([PYTHON, '-c', CONNECT_SCRIPT, ...targets]);
        expect(result.stdout.trim().split(' ')).toHaveLength(targets.length);
        expect(result.stdout).not.toContain('connected');
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(connections).toBe(seenFromHost);
      } finally {
        server.close();
      }
      const loopback = await sandbox.exec([PYTHON, '-c', LOOPBACK_SCRIPT]);
      expect(loopback.stdout).toBe("ping ['lo']\n");
    });

    it.skipIf(!options.isolated)('cannot reach host daemons through Unix sockets', async () => {
      const socketPath = `/run/envgen-sandbox-test-${randomBytes(4).toString('hex')}.sock`;
      let connections = 0;
      const server = net.createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      try {
        const targets = [socketPath, ...['/run/docker.sock', '/var/run/docker.sock'].filter((file) => existsSync(file))];
        const result = await sandbox.exec([PYTHON, '-c', CONNECT_SCRIPT, ...targets]);
        expect(result.stdout.trim().split(' ')).toHaveLength(targets.length);
        expect(result.stdout).not.toContain('connected');
        expect(connections).toBe(0);
      } finally {
        server.close();
      }
    });

    it.skipIf(!options.isolated)('cannot write outside the worktree and leaves the host unchanged', async () => {
      const name = `envgen-escape-${randomBytes(4).toString('hex')}`;
      const targets = [`/etc/${name}`, `/work/${name}`, `/usr/${name}`, `/${name}`];
      const script = targets.map((target) => `(echo x > ${target}) 2>/dev/null && echo wrote ${target};`).join(' ');
      // The user's home is the jail's own, empty (a write there stays in the jail).
      const home = path.join(os.userInfo().homedir, name);
      const result = await sandbox.exec(['sh', '-c', `${script} (echo x > ${home}) 2>/dev/null; touch /tmp/${name} && echo tmp-ok`]);
      expect(result.stdout).toBe('tmp-ok\n');
      for (const target of [...targets, home, `/tmp/${name}`]) expect(existsSync(target)).toBe(false);
      const sysctl = await sandbox.exec(['sh', '-c', 'cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern']);
      expect(sysctl.exitCode).not.toBe(0);
    });

    it("has the home directory the password database names, as a plain run does, and none of the host's files in it when isolated", async () => {
      const result = await sandbox.exec(['python3', '-c', 'import os, pwd; home = pwd.getpwuid(os.getuid()).pw_dir; print(os.path.isdir(home), os.path.isdir(os.path.expanduser("~" + pwd.getpwuid(os.getuid()).pw_name)))']);
      expect(result.stdout).toBe('True True\n');
      if (!options.isolated) return;
      const marker = path.join(os.userInfo().homedir, `.envgen-contract-${randomBytes(4).toString('hex')}`);
      await writeFile(marker, 'host\n');
      try {
        const seen = await sandbox.exec(['sh', '-c', `test -e ${marker} && echo seen || echo unseen`]);
        expect(seen.stdout).toBe('unseen\n');
      } finally {
        await rm(marker, { force: true });
      }
    });

    it('kills the whole process tree at the timeout', async () => {
      const marker = `1000.${Date.now() % 1_000_000}${Math.floor(Math.random() * 1000)}`;
      const result = await sandbox.exec(['sh', '-c', `sleep ${marker} & sh -c "sleep ${marker}" & sleep ${marker}`], {
        limits: { timeoutMs: 1500 },
      });
      expect(result.status).toBe('timeout');
      expect(result.durationMs).toBeGreaterThanOrEqual(1400);
      expect(result.durationMs).toBeLessThan(2500);
      expect(await waitForNoProcesses(marker, 2000)).toEqual([]);
      const after = await sandbox.exec(['echo', 'still usable']);
      expect(after.stdout).toBe('still usable\n');
    });

    it('kills what a command leaves running when it ends', async () => {
      const marker = `1000.${Date.now() % 1_000_000}7`;
      const result = await sandbox.exec(['sh', '-c', `(sleep ${marker} &) ; echo started`]);
      expect(result).toMatchObject({ status: 'exited', exitCode: 0, stdout: 'started\n' });
      expect(await waitForNoProcesses(marker, 2000)).toEqual([]);
    });

    it('contains a fork bomb and reports processes', async () => {
      const result = await sandbox.exec([PYTHON, '-c', FORK_BOMB], { limits: { maxProcesses: 24, timeoutMs: 30_000 } });
      expect(result.status).toBe('processes');
      expect(result.durationMs).toBeLessThan(15_000);
      const after = await sandbox.exec(['echo', 'responsive']);
      expect(after.stdout).toBe('responsive\n');
    });

    it('contains a memory hog and reports memory', async () => {
      const result = await sandbox.exec([PYTHON, '-c', 'x = bytearray(2 * 1024**3); print(len(x))'], {
        limits: { memoryBytes: 256 * MiB },
      });
      expect(result.status).toBe('memory');
      expect(result.stdout).toBe('');
      const small = await sandbox.exec([PYTHON, '-c', 'x = bytearray(64 * 1024**2); print(len(x))'], {
        limits: { memoryBytes: 256 * MiB },
      });
      expect(small).toMatchObject({ status: 'exited', exitCode: 0, stdout: `${64 * MiB}\n` });
    });

    it("names its limits' counters to the command, which sees them count a child the memory limit killed", async () => {
      // What envgen's warm server does around each forked run: counters before, the run, counters after.
      const script = [
        'import os, subprocess, sys',
        `files = os.environ["${LIMIT_COUNTERS_ENV}"].split(":")`,
        'def count(key, prefix):',
        '    return sum(int(line.split()[1]) for path in files if os.path.basename(path).startswith(prefix) for line in open(path) if line.split()[0] == key)',
        'before = count("oom_kill", "memory"), count("max", "pids")',
        'hog = subprocess.run([sys.executable, "-c", "x = bytearray(2 * 1024**3)"])',
        'small = subprocess.run([sys.executable, "-c", "pass"])',
        'print(hog.returncode, count("oom_kill", "memory") - before[0], small.returncode, count("max", "pids") - before[1])',
      ].join('\n');
      const result = await sandbox.exec([PYTHON, '-c', script], { limits: { memoryBytes: 256 * MiB } });
      expect(result).toMatchObject({ status: 'memory', exitCode: 0, stdout: '-9 1 0 0\n' });
    });

    it('kills running commands when a sandbox is disposed, quietly, and refuses new ones', async () => {
      const warnings: string[] = [];
      const provider = createSandboxProvider(kind, { logger: createLogger({ level: 'warn', write: (line) => warnings.push(line) }) });
      const other = await provider.open({ worktree, limits });
      warnings.length = 0; // the none backend warns on open, by design
      const marker = `1000.${Date.now() % 1_000_000}3`;
      const running = other.exec(['sh', '-c', `sleep ${marker}`]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = Date.now();
      await other.dispose();
      expect((await running).status).toBe('killed');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await waitForNoProcesses(marker, 2000)).toEqual([]);
      await expect(other.exec(['true'])).rejects.toMatchObject({ code: 'usage' });
      // Nothing to warn about: the sandbox was meant to go (docker once warned that the
      // container it was removing could not be restarted).
      expect(warnings).toEqual([]);
    });

    it('cuts huge output at maxOutputBytes, quickly, and keeps both streams', async () => {
      const result = await sandbox.exec(['sh', '-c', 'head -c 50000000 /dev/zero | tr "\\0" a; echo tail >&2; exit 4'], {
        limits: { maxOutputBytes: MiB },
      });
      expect(result).toMatchObject({ status: 'exited', exitCode: 4, truncated: true, stderr: 'tail\n' });
      expect(result.stdout).toBe('a'.repeat(MiB));
      expect(result.durationMs).toBeLessThan(10_000);
    });
  });
}
