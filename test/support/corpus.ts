import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * envgen home shared by the end-to-end suites on real projects: Debian source indexes and
 * repo mirrors are fetched once into this cache (gitignored) and reused by later runs.
 */
export const CORPUS_HOME = fileURLToPath(new URL('../../.cache/envgen-test-home', import.meta.url));

/** Present while {@link CORPUS_HOME}'s downloads are whole: no suite is writing them. */
const CORPUS_WHOLE = join(CORPUS_HOME, 'whole');

/** The suite that fills {@link CORPUS_HOME} calls this before it writes there, and {@link markCorpusWhole} after. */
export function markCorpusWriting(): void {
  rmSync(CORPUS_WHOLE, { force: true });
}

export function markCorpusWhole(): void {
  mkdirSync(CORPUS_HOME, { recursive: true });
  writeFileSync(CORPUS_WHOLE, '');
}

/**
 * A new envgen home that reuses {@link CORPUS_HOME}'s downloads (Debian indexes, mirrors), so a
 * test gets its own pool and baselines without fetching the corpus again. Test files run in
 * parallel: while the suite that fills the corpus home is writing it, the new home starts empty
 * and fetches what it needs itself, rather than copying a mirror half written.
 */
export function freshHomeFromCorpus(): string {
  const home = mkdtempSync(join(tmpdir(), 'envgen-home-'));
  if (!existsSync(CORPUS_WHOLE)) return home;
  for (const dir of ['debian', 'mirrors']) {
    if (existsSync(join(CORPUS_HOME, dir))) cpSync(join(CORPUS_HOME, dir), join(home, dir), { recursive: true });
  }
  return home;
}
