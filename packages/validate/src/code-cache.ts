import { copyFile, mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';

/** A key of the code cache: the sha256 the warm server names a rewrite by (see `envgen_warm.caches`). */
const KEY = /^[0-9a-f]{64}$/;

/** Default bound of a code cache's size; the least recently used entries go first. */
export const CODE_CACHE_MAX_BYTES = 256 * 1024 ** 2;

/**
 * Adds rewrites a warm server wrote to `outDir` (its first request, before any project code
 * ran there) to the cache: copied beside their final name, then renamed, so a reader never
 * sees half a file. Names that are not cache keys are ignored (the answer came from inside
 * the sandbox).
 */
export async function adoptRewrites(outDir: string, cacheDir: string, keys: readonly string[]): Promise<number> {
  const valid = keys.filter((key) => KEY.test(key));
  if (valid.length === 0) return 0;
  await mkdir(cacheDir, { recursive: true });
  let adopted = 0;
  for (const key of valid) {
    const temporary = join(cacheDir, `${key}.${process.pid}.tmp`);
    try {
      await copyFile(join(outDir, key), temporary);
      await rename(temporary, join(cacheDir, key));
      adopted += 1;
    } catch {
      await rm(temporary, { force: true });
    }
  }
  return adopted;
}

/** Marks cache entries as used now (the pruning keeps the most recently used). */
export async function touchRewrites(cacheDir: string, keys: readonly string[]): Promise<void> {
  const now = new Date();
  await Promise.all(keys.filter((key) => KEY.test(key)).map((key) => utimes(join(cacheDir, key), now, now).catch(() => undefined)));
}

/** Removes the least recently used entries until the cache holds at most `maxBytes`. */
export async function pruneCodeCache(cacheDir: string, maxBytes = CODE_CACHE_MAX_BYTES): Promise<void> {
  const names = await readdir(cacheDir).catch(() => [] as string[]);
  const entries = (
    await Promise.all(
      names.map(async (name) => {
        const info = await stat(join(cacheDir, name)).catch(() => null);
        return info === null ? null : { name, size: info.size, used: info.mtimeMs };
      }),
    )
  ).filter((entry) => entry !== null);
  let total = entries.reduce((sum, entry) => sum + entry.size, 0);
  if (total <= maxBytes) return;
  entries.sort((a, b) => a.used - b.used);
  for (const entry of entries) {
    if (total <= maxBytes) break;
    await rm(join(cacheDir, entry.name), { force: true });
    total -= entry.size;
  }
}
