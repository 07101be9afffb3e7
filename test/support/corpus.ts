import { fileURLToPath } from 'node:url';

/**
 * envgen home shared by the end-to-end suites on real projects: Debian source indexes and
 * repo mirrors are fetched once into this cache (gitignored) and reused by later runs.
 */
export const CORPUS_HOME = fileURLToPath(new URL('../../.cache/envgen-test-home', import.meta.url));
