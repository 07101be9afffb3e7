import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * envgen home shared by the end-to-end suites on real projects: Debian source indexes and
 * repo mirrors are fetched once into this cache (gitignored) and reused by later runs.
 */
export const CORPUS_HOME = fileURLToPath(new URL('../../.cache/envgen-test-home', import.meta.url));

/**
 * A new envgen home that reuses {@link CORPUS_HOME}'s downloads (Debian indexes, mirrors), so a
 * test gets its own pool and baselines without fetching the corpus again.
 */
export function freshHomeFromCorpus(): string {
  const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
  for (const dir of ['debian', 'mirrors']) {
    if (existsSync(join(CORPUS_HOME, dir))) cpSync(join(CORPUS_HOME, dir), join(home, dir), { recursive: true });
  }
  return home;
}
