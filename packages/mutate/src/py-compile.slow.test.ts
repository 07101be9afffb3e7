import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractEntities } from '@envgen/python';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCandidates } from './apply-strategy.js';
import { selectStrategies } from './registry.js';
import { SAMPLE_MODULE } from './sample-module.fixture.js';

const PYTHON = '/usr/bin/python3';

describe.skipIf(!existsSync(PYTHON))('kept edits are valid Python for the real interpreter', () => {
  const dir = mkdtempSync(join(tmpdir(), 'envgen-mutate-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('py_compiles every distinct kept edit of the sample module', async () => {
    const { entities } = extractEntities(SAMPLE_MODULE, 'inventory.py');
    const candidates = await generateCandidates({
      source: SAMPLE_MODULE,
      path: 'inventory.py',
      entities,
      strategies: selectStrategies(),
      seed: 'py-compile',
      attempts: 5,
    });
    const files: string[] = [];
    for (const candidate of candidates) {
      if (candidate.status !== 'kept') continue;
      const file = join(dir, `${String(files.length).padStart(4, '0')}_${candidate.strategy}.py`);
      writeFileSync(file, candidate.edit.newSource);
      files.push(file);
    }
    expect(files.length).toBeGreaterThan(100);
    const result = spawnSync(PYTHON, ['-m', 'py_compile', ...files], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
