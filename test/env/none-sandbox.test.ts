import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LIB, TESTS } from '../support/calc-fixture.js';
import { writeFixtureRepo } from '../support/fixture-repo.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `envgen ARGS --sandbox none --json` as a process of its own: its exit code, stdout and stderr. */
function envgen(args: string[], home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--conditions=@envgen/source', '--import', 'tsx', join(ROOT, 'test/support/run-cli.ts'), ...args, '--sandbox', 'none', '--json'], {
    cwd: ROOT,
    env: { ...process.env, ENVGEN_HOME: home },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('the none backend', () => {
  it('runs two envgen processes with homes of their own at once, each with its baseline, validator and checks', async () => {
    const repo = writeFixtureRepo({ 'calc.py': LIB, 'tests/test_calc.py': TESTS }, { git: true, name: 'calc' });
    // Each process links envgen's plugin, its warm server and its code cache on the host.
    const runs = await Promise.all(
      [0, 1].map(() => envgen(['inject', '--repo', repo, '-n', '8', '--seed', '5', '--combine', '0', '--no-tasks'], mkdtempSync(join(tmpdir(), 'envgen-home-')))),
    );
    for (const run of runs) {
      expect(run.stderr).not.toContain('Cannot link');
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as { kept: number; replay: { agreed: boolean } | null };
      expect(report.kept).toBeGreaterThan(0);
      expect(report.replay).toMatchObject({ agreed: true });
    }
  });
});
