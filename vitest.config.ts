import { defineConfig } from 'vitest/config';

// Tests run against package sources: the `@envgen/source` export condition points each
// workspace package at src/ so no build is needed before `vitest`.
const conditions = ['@envgen/source', 'node', 'import', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: conditions } },
  test: {
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
