import { readFileSync } from 'node:fs';

/** A file's text, or null when it does not exist. */
export function readFileOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
