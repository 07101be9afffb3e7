import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDeb822 } from './deb822.js';

/** One Debian archive suite envgen reads `Sources` indexes from. */
export interface AptSource {
  /** Archive root, e.g. `http://deb.debian.org/debian` (no trailing slash). */
  uri: string;
  suite: string;
  components: string[];
}

function addSource(sources: AptSource[], uri: string, suite: string, components: string[]): void {
  const clean = uri.replace(/\/+$/, '');
  // Only plain HTTP(S) archives with components; `mirror+file:`, `cdrom:` and flat repos are skipped.
  if (!/^https?:\/\//.test(clean) || suite.endsWith('/') || components.length === 0) return;
  const existing = sources.find((source) => source.uri === clean && source.suite === suite);
  if (existing) existing.components = [...new Set([...existing.components, ...components])];
  else sources.push({ uri: clean, suite, components });
}

/** Archives of a deb822 `.sources` file's text (enabled `deb`/`deb-src` stanzas). */
export function parseDeb822Sources(text: string): AptSource[] {
  const sources: AptSource[] = [];
  for (const stanza of parseDeb822(text)) {
    const types = (stanza['Types'] ?? '').split(/\s+/);
    if (!types.includes('deb') && !types.includes('deb-src')) continue;
    if ((stanza['Enabled'] ?? 'yes').toLowerCase() === 'no') continue;
    const components = (stanza['Components'] ?? '').split(/\s+/).filter(Boolean);
    for (const uri of (stanza['URIs'] ?? '').split(/\s+/).filter(Boolean)) {
      for (const suite of (stanza['Suites'] ?? '').split(/\s+/).filter(Boolean)) addSource(sources, uri, suite, components);
    }
  }
  return sources;
}

/** Archives of a one-line `sources.list` file's text (`deb [options] URI SUITE COMPONENT…`). */
export function parseOneLineSources(text: string): AptSource[] {
  const sources: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').replace(/\[[^\]]*\]/, ' ').trim();
    const [type, uri, suite, ...components] = line.split(/\s+/);
    if ((type === 'deb' || type === 'deb-src') && uri && suite) addSource(sources, uri, suite, components);
  }
  return sources;
}

/** The apt configuration files of this machine: `/etc/apt/sources.list` and `sources.list.d/*.{list,sources}`. */
export async function listAptSourceFiles(root = '/etc/apt'): Promise<string[]> {
  const names = await readdir(join(root, 'sources.list.d')).catch(() => []);
  const extra = names.filter((name) => name.endsWith('.list') || name.endsWith('.sources')).sort();
  return [join(root, 'sources.list'), ...extra.map((name) => join(root, 'sources.list.d', name))];
}

/** Reads and merges the archives configured in `files` (missing files are skipped). */
export async function readAptSources(files: string[]): Promise<AptSource[]> {
  const merged: AptSource[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text === null) continue;
    const found = file.endsWith('.sources') ? parseDeb822Sources(text) : parseOneLineSources(text);
    for (const source of found) addSource(merged, source.uri, source.suite, source.components);
  }
  return merged;
}
