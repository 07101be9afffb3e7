import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { createProgress, runEnv } from '@envgen/cli';
import { CORPUS_HOME, markCorpusWhole, markCorpusWriting } from '../support/corpus.js';

const settings = resolveConfig({ env: { ENVGEN_HOME: CORPUS_HOME }, cwd: CORPUS_HOME });
const quiet = createProgress({ quiet: true });

// Other suites copy the corpus home's downloads only while no suite writes them.
beforeAll(markCorpusWriting);
afterAll(markCorpusWhole);

// Real projects from shared/corpus.md, with what their clean suites must show here.
const PROJECTS = [
  { repo: 'debian:toolz', minPassed: 180, env: {} },
  { repo: 'debian:markupsafe', minPassed: 30, env: { PYTHONPATH: 'src' } },
  { repo: 'debian:python-text-unidecode', minPassed: 130, env: { PYTHONPATH: 'src' } },
  { repo: 'debian:python-json-patch', minPassed: 100, env: {} },
] as const;

describe.each(PROJECTS)('envgen env on $repo', ({ repo, minPassed, env }) => {
  it('runs the clean suite twice in the local sandbox, maps coverage, then answers from the cache', async () => {
    const cold = await runEnv({ repo, refresh: true }, settings, silentLogger, quiet);
    expect(cold.fromCache).toBe(false);
    expect(cold.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(cold.sandbox).toBe('local');
    expect(cold.profile.env).toMatchObject(env);
    expect(cold.tests.passed).toBeGreaterThanOrEqual(minPassed);
    expect(cold.tests.failed + cold.tests.error).toBe(0);
    expect(cold.collectionErrors).toEqual([]);
    expect(cold.suiteSeconds).toHaveLength(2);
    expect(cold.sourceFiles).toBeGreaterThan(0);
    expect(cold.testFiles).toBeGreaterThan(0);
    // Entities count a property's getter and setter apart; the coverage map keys them once.
    expect(cold.entities.functions + cold.entities.methods).toBeGreaterThanOrEqual(cold.coverage.allFunctions);
    expect(cold.coverage.coveredFunctions).toBeGreaterThan(0);
    expect(cold.coverage.coveredFunctions).toBeLessThanOrEqual(cold.coverage.allFunctions);

    const warm = await runEnv({ repo }, settings, silentLogger, quiet);
    expect(warm.fromCache).toBe(true);
    expect(warm.commit).toBe(cold.commit);
    expect(warm.tests).toEqual(cold.tests);
    expect(warm.coverage).toEqual(cold.coverage);
    expect(warm.seconds).toBeLessThan(cold.seconds);
  });
});
