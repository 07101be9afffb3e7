/**
 * Round trip of the agent's `terminal` tool: a command in the persistent sandboxed shell
 * against the naive ways of running it.
 *
 *   node --conditions=@envgen/source --import tsx bench/terminal.ts [runs]
 *
 * On a generated repo of 300 Python files (~1.3 MB), runs `cat` of one file, `rg` and
 * `grep -rn` for one definition, and `cd` + `ls` `runs` times (default 40) three ways per
 * sandbox backend that can run here:
 * - persistent: `shell.run(cmd)` in one long-lived bash (what the agent does);
 * - exec: `sandbox.exec(['bash', '-c', cmd])` in one open sandbox (a new jailed bash each time);
 * - fresh: open a sandbox, exec, dispose (the naive way: a new sandbox per command).
 * Interleaved round by round; prints the median milliseconds of each and fresh/persistent.
 * The bar: persistent median < 50 ms.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPersistentShell } from '@envgen/agent';
import type { PersistentShell } from '@envgen/agent';
import { describeError } from '@envgen/core';
import { createSandboxProvider } from '@envgen/sandbox';
import type { Sandbox, SandboxKind, SandboxProvider } from '@envgen/sandbox';
import { formatTable, median } from './stats.js';

const runs = Number(process.argv[2] ?? 40);
const BAR_MS = 50;

// A deterministic repo: 30 packages of 10 modules of 12 functions.
const worktree = mkdtempSync(path.join(os.tmpdir(), 'envgen-bench-terminal-'));
for (let p = 0; p < 30; p += 1) {
  mkdirSync(path.join(worktree, `pkg${p}`), { recursive: true });
  writeFileSync(path.join(worktree, `pkg${p}`, '__init__.py'), '');
  for (let m = 0; m < 10; m += 1) {
    const functions = Array.from(
      { length: 12 },
      (_, f) => `def func_${p}_${m}_${f}(value, other=None):\n    """Compute thing ${f} of module ${m}."""\n    total = value * ${f + 1}\n    if other is not None:\n        total += other\n    for i in range(${f}):\n        total -= i\n    return total\n`,
    );
    writeFileSync(path.join(worktree, `pkg${p}`, `mod${m}.py`), `import math\n\n${functions.join('\n\n')}`);
  }
}

const commands: Record<string, string> = {
  'cat file': 'cat pkg17/mod3.py',
  'rg pattern': 'rg -n "def func_17_3_5" .',
  'grep -rn pattern': 'grep -rn "def func_17_3_5" --include=*.py .',
  'cd + ls': 'cd pkg4 && ls && cd ..',
};

interface Way {
  name: 'persistent' | 'exec' | 'fresh';
  run(command: string): Promise<string>;
}

const ways = new Map<SandboxKind, Way[]>();
const shells: PersistentShell[] = [];
const sandboxes: Sandbox[] = [];
for (const kind of ['local', 'docker'] as SandboxKind[]) {
  const provider: SandboxProvider = createSandboxProvider(kind);
  try {
    await provider.ensureAvailable();
  } catch (error) {
    console.log(`${kind}: skipped (${describeError(error)})`);
    continue;
  }
  const shell = await openPersistentShell({ provider, worktree });
  shells.push(shell);
  const sandbox = await provider.open({ worktree });
  sandboxes.push(sandbox);
  const exec = async (box: Sandbox, command: string): Promise<string> => {
    const result = await box.exec(['bash', '-c', command]);
    if (result.status !== 'exited' || result.exitCode !== 0) throw new Error(`${kind}: ${command}: ${JSON.stringify(result)}`);
    return result.stdout;
  };
  ways.set(kind, [
    {
      name: 'persistent',
      async run(command) {
        const result = await shell.run(command);
        if (result.exitCode !== 0) throw new Error(`${kind}: ${command}: ${result.output}`);
        return result.output;
      },
    },
    { name: 'exec', run: (command) => exec(sandbox, command) },
    {
      name: 'fresh',
      async run(command) {
        const box = await provider.open({ worktree });
        try {
          return await exec(box, command);
        } finally {
          await box.dispose();
        }
      },
    },
  ]);
}

// Every way must see the same output, or the comparison means nothing.
for (const [kind, list] of ways) {
  for (const command of Object.values(commands)) {
    const outputs = await Promise.all(list.map((way) => way.run(command)));
    if (new Set(outputs).size !== 1) throw new Error(`${kind}: the ways disagree on ${command}`);
  }
}

const samples = new Map<string, number[]>();
for (let round = 0; round < runs; round += 1) {
  for (const [kind, list] of ways) {
    for (const [label, command] of Object.entries(commands)) {
      for (const way of list) {
        const started = performance.now();
        await way.run(command);
        const key = `${kind}\t${label}\t${way.name}`;
        samples.set(key, [...(samples.get(key) ?? []), performance.now() - started]);
      }
    }
  }
}
await Promise.all(shells.map((shell) => shell.close()));
await Promise.all(sandboxes.map((sandbox) => sandbox.dispose()));
rmSync(worktree, { recursive: true, force: true });

const rows: string[][] = [];
let worst = 0;
for (const kind of ways.keys()) {
  for (const label of Object.keys(commands)) {
    const at = (way: string): number => median(samples.get(`${kind}\t${label}\t${way}`) ?? []);
    const persistent = at('persistent');
    worst = Math.max(worst, persistent);
    rows.push([kind, label, persistent.toFixed(1), at('exec').toFixed(1), at('fresh').toFixed(1), `${(at('fresh') / persistent).toFixed(1)}x`]);
  }
}
console.log(`terminal tool round trip, median ms of ${runs} runs (${os.cpus().length} cores)\n`);
console.log(formatTable(['sandbox', 'command', 'persistent', 'exec', 'fresh', 'fresh/persistent'], rows));
console.log(`\nbar: persistent median < ${BAR_MS} ms: ${worst < BAR_MS ? 'met' : 'NOT met'} (worst ${worst.toFixed(1)} ms)`);
