import { defineConfig } from 'vitest/config';
import { DurationSequencer } from './test/support/sequencer.js';

// Tests run against package sources: the `@envgen/source` export condition points each
// workspace package at src/ so no build is needed before `vitest`.
const conditions = ['@envgen/source', 'node', 'import', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
    // Two test files at a time, whatever the core count (vitest's default is one fewer than the
    // cores: one on a 2-core CI machine). Most slow tests wait on pytest in a sandbox, so two
    // overlap well, about half the time of one at a time. Suites that share
    // a download cache read it only once it is whole (test/support/corpus.ts).
    maxWorkers: 2,
    // The longest files first (test/durations.json), so neither worker is left with a long one at the end.
    sequence: { sequencer: DurationSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'],
          exclude: ['**/*.slow.test.ts', '**/node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'slow',
          include: ['packages/*/src/**/*.slow.test.ts', 'apps/*/src/**/*.slow.test.ts', 'test/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
