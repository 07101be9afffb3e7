/** An INI file: section → key → value (multi-line values joined with `\n`). Keys are lowercased. */
export type IniData = Map<string, Map<string, string>>;

/**
 * Parses INI text the way pytest's config readers see it: `[section]` headers, `key = value` or
 * `key: value`, indented continuation lines, `#`/`;` comment lines and ` #`/` ;` inline comments.
 */
export function parseIni(text: string): IniData {
  const data: IniData = new Map();
  let section: Map<string, string> | null = null;
  let key: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const value = trimmed.replace(/\s[#;].*$/, '');
    if (/^\s/.test(raw) && section !== null && key !== null) {
      const previous = section.get(key) ?? '';
      section.set(key, previous === '' ? value : `${previous}\n${value}`);
      continue;
    }
    const header = /^\[([^\]]+)\]$/.exec(value);
    if (header?.[1] !== undefined) {
      const name = header[1].trim();
      section = data.get(name) ?? new Map<string, string>();
      data.set(name, section);
      key = null;
      continue;
    }
    const separator = /[=:]/.exec(value);
    if (section === null || separator === null) continue;
    key = value.slice(0, separator.index).trim().toLowerCase();
    section.set(key, value.slice(separator.index + 1).trim());
  }
  return data;
}

/** Splits a command line like Python's `shlex.split`: whitespace-separated, quotes group, `\` escapes. */
export function splitShellWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] ?? '';
    if (quote === "'") {
      if (c === "'") quote = null;
      else current += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) current += text[++i] ?? '';
      else current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      current += text[++i] ?? '';
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}
