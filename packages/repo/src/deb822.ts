/** One deb822 paragraph: field name → value (continuation lines joined with `\n`, leading space kept off). */
export type Deb822Stanza = Record<string, string>;

/** Parses deb822 text (apt `.sources` files, `Sources` indexes) into paragraphs. `#` lines are comments. */
export function parseDeb822(text: string): Deb822Stanza[] {
  const stanzas: Deb822Stanza[] = [];
  let current: Deb822Stanza = {};
  let field: string | null = null;
  const flush = (): void => {
    if (Object.keys(current).length) stanzas.push(current);
    current = {};
    field = null;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (line.startsWith('#')) continue;
    if ((line.startsWith(' ') || line.startsWith('\t')) && field !== null) {
      current[field] = `${current[field] ?? ''}\n${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    field = line.slice(0, colon).trim();
    current[field] = line.slice(colon + 1).trim();
  }
  flush();
  return stanzas;
}

/** The paragraphs of a `Sources` index whose `Package` is `source`, found without parsing the whole index. */
export function findSourceStanzas(index: string, source: string): Deb822Stanza[] {
  const found: Deb822Stanza[] = [];
  const needle = `Package: ${source}\n`;
  let at = index.startsWith(needle) ? 0 : index.indexOf(`\n${needle}`);
  while (at >= 0) {
    const start = index[at] === '\n' ? at + 1 : at;
    const end = index.indexOf('\n\n', start);
    found.push(...parseDeb822(index.slice(start, end < 0 ? undefined : end)));
    at = end < 0 ? -1 : index.indexOf(`\n${needle}`, end);
  }
  return found;
}

/** Source packages of a `Sources` index that build the binary package `binary` (for "did you mean" hints). */
export function findSourcesOfBinary(index: string, binary: string): string[] {
  const escaped = binary.replace(/[.+]/g, '\\$&');
  const pattern = new RegExp(`^Package: (\\S+)\\nBinary: (?:.*, )?${escaped}(?:,|$)`, 'gm');
  return [...index.matchAll(pattern)].map((match) => match[1] ?? '').filter((name) => name !== '');
}

/** `name → sha256` of a `Checksums-Sha256` field. */
export function parseChecksums(field: string): Map<string, { sha256: string; size: number }> {
  const checksums = new Map<string, { sha256: string; size: number }>();
  for (const line of field.split('\n')) {
    const [sha256, size, name] = line.trim().split(/\s+/);
    if (sha256 && size && name) checksums.set(name, { sha256, size: Number(size) });
  }
  return checksums;
}

// Build and documentation tooling: installing it is wasted time in a test sandbox.
const TOOLING = [
  /^debhelper/,
  /^dh-/,
  /^dpkg-dev$/,
  /^python3?(-dev)?$/,
  /^python3-all/,
  /^libpython3/,
  /^python3-setuptools/,
  /^pybuild-plugin-/,
  /^python3-sphinx/,
  /^sphinx/,
  /^python3-docutils$/,
  /^python3-wheel$/,
  /^python3-pip$/,
  /^python3-build$/,
  /^python3-installer$/,
  /^python3-hatch/,
  /^python3-flit/,
  /^flit/,
  /^python3-poetry/,
  /^python3-pdm/,
  /^python3-pytest-runner$/,
  /^openstack-pkg-tools$/,
  /^help2man$/,
  /^pandoc$/,
];

/**
 * Package names of a `Build-Depends`-style field: version constraints `(…)`, architecture
 * qualifiers `[…]`, build profiles `<…>` and `:any`/`:native` dropped; the first of alternatives.
 */
export function parseDependsField(field: string): string[] {
  return field
    .split(',')
    .map((clause) => clause.split('|')[0] ?? '')
    .map((first) => first.replace(/\([^)]*\)|\[[^\]]*\]|<[^>]*>/g, ' ').trim().split(/\s+/)[0] ?? '')
    .map((name) => name.replace(/:[a-z0-9-]+$/, ''))
    .filter((name) => name !== '');
}

/**
 * Debian packages the tests of a source package need: its `Build-Depends` and
 * `Build-Depends-Indep` minus build/doc tooling, always with python3-pytest; sorted, unique.
 */
export function selectTestPackages(stanza: Deb822Stanza): string[] {
  const all = [...parseDependsField(stanza['Build-Depends'] ?? ''), ...parseDependsField(stanza['Build-Depends-Indep'] ?? ''), 'python3-pytest'];
  return [...new Set(all.filter((name) => !TOOLING.some((pattern) => pattern.test(name))))].sort();
}
