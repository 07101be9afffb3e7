import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandboxProvider } from '@envgen/sandbox';
import { dockerSkipReason } from '../../../test/support/docker.js';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { openPersistentShell } from './persistent-shell.js';
import type { PersistentShell } from './persistent-shell.js';

const repo = writeFixtureRepo({ 'pkg/mod.py': 'def answer():\n    return 42\n', 'README': 'hello\n' });

const dockerMissing = await dockerSkipReason("the persistent shell's docker tests");

describe.each([
  { backend: 'local' as const, skip: undefined },
  { backend: 'docker' as const, skip: dockerMissing },
])('persistent shell in the $backend sandbox', ({ backend, skip }) => {
  if (skip !== undefined) {
    it.skip(`needs a Docker engine (${skip})`, () => undefined);
    return;
  }
  const provider = createSandboxProvider(backend);
  const shells: PersistentShell[] = [];
  const open = async (): Promise<PersistentShell> => {
    const shell = await openPersistentShell({ provider, worktree: repo, killGraceMs: 1_000 });
    shells.push(shell);
    return shell;
  };
  afterAll(async () => {
    await Promise.all(shells.map((shell) => shell.close()));
  });

  it('keeps the working directory, variables and functions between commands, in the jail', async () => {
    const shell = await open();
    expect(shell.workdir).toBe('/tmp/repo');
    expect(await shell.run('cd pkg && export TOKEN=abc && greet() { echo "hi $1"; }')).toMatchObject({ status: 'exited', exitCode: 0, cwd: '/tmp/repo/pkg' });
    const next = await shell.run('pwd; echo $TOKEN; greet you; cat mod.py');
    expect(next.output).toBe('/tmp/repo/pkg\nabc\nhi you\ndef answer():\n    return 42\n');
    expect(shell.cwd).toBe('/tmp/repo/pkg');
    // The jail: the host's /work is not there, the network is down, stdin is empty.
    expect((await shell.run('ls /work 2>&1; cat; echo done')).output).toMatch(/No such file or directory\ndone\n$/);
    expect((await shell.run('false')).exitCode).toBe(1);
    expect((await shell.run('echo -n no newline')).output).toBe('no newline');
    expect((await shell.run('if then')).output).toMatch(/syntax error/);
    expect((await shell.run('echo still here')).output).toBe('still here\n');
  });

  it('kills a command at its timeout with everything it started and keeps the shell state', async () => {
    const shell = await open();
    await shell.run('X=kept; cd pkg');
    const started = performance.now();
    const slow = await shell.run('echo before; (sleep 30; echo $((6 * 7))) | cat; sleep 30', { timeoutMs: 500 });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(slow.status).toBe('timeout');
    expect(slow.exitCode).toBeNull();
    expect(slow.restarted).toBe(false);
    // Like Ctrl-C: the rest of the list (the second sleep) did not run either.
    expect(slow.output).toMatch(/^before\n/);
    expect(slow.output).not.toMatch(/^42$/m);
    // No `sleep 30` is left (read from /proc: the docker image has no pgrep, and its
    // container keeps a `sleep infinity` of its own).
    // A process that ends between the glob and the read is skipped quietly (stderr first: bash reports a failed `<` there).
    const sleeping = 'for p in /proc/[0-9]*; do tr "\\0" " " 2>/dev/null < $p/cmdline; echo; done | grep -c "^sleep 30 $" || true';
    expect((await shell.run(`echo $X; pwd; ${sleeping}`)).output).toBe('kept\n/tmp/repo/pkg\n0\n');
  });

  it('replaces a shell stuck in a builtin loop, and one the command exited, in the same directory', async () => {
    const shell = await open();
    await shell.run('cd pkg; X=lost');
    const stuck = await shell.run('while :; do :; done', { timeoutMs: 300 });
    expect(stuck).toMatchObject({ status: 'timeout', restarted: true, cwd: '/tmp/repo/pkg' });
    expect((await shell.run('pwd; echo "[$X]"')).output).toBe('/tmp/repo/pkg\n[]\n');
    const exited = await shell.run('exit 7');
    expect(exited).toMatchObject({ status: 'shell-exited', exitCode: 7, restarted: true });
    expect((await shell.run('pwd')).output).toBe('/tmp/repo/pkg\n');
  });

  it('cuts long output in the middle at the cap, in bounded memory', async () => {
    const shell = await open();
    const result = await shell.run('seq 1 200000', { maxOutputChars: 1_000 });
    expect(result.totalChars).toBe(1_288_895);
    expect(result.output.length).toBeLessThanOrEqual(1_000);
    expect(result.output).toMatch(/^1\n2\n3\n/);
    expect(result.output).toMatch(/\n199999\n200000\n$/);
    expect(result.output).toContain(`[... ${result.omittedChars} characters omitted ...]`);
  });

  it('runs queued commands one at a time, in order, and several shells side by side', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    const results = await Promise.all([a.run('sleep 0.2; echo one'), a.run('echo two'), b.run('echo three')]);
    expect(results.map((r) => r.output)).toEqual(['one\n', 'two\n', 'three\n']);
  });

  it('cleans up its FIFO directories when closed', async () => {
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith('envgen-shell-')).length;
    const shell = await openPersistentShell({ provider, worktree: repo });
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('envgen-shell-')).length).toBe(before + 1);
    await shell.close();
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('envgen-shell-')).length).toBe(before);
    await expect(shell.run('true')).rejects.toThrow(/closed/);
  });
});
