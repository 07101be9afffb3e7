import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A service a project's CI starts beside its tests (a database, a cache), and the file that says so. */
export interface CiService {
  /** The image's name without registry, namespace or tag (`redis`, `postgres`, `mariadb`), or the service's key where the image is an expression (`${{ matrix.db }}`). */
  name: string;
  from: string;
}

const WORKFLOWS = '.github/workflows';

/** Indentation of a line, or null for a blank or comment line. */
function indentOf(line: string): number | null {
  const trimmed = line.trim();
  return trimmed === '' || trimmed.startsWith('#') ? null : line.length - line.trimStart().length;
}

/** `docker.io/library/redis:7-alpine` → `redis`; `valkey/valkey:8` → `valkey`; null for an expression. */
function imageName(image: string): string | null {
  const value = image.trim().replace(/^["']|["']$/g, '');
  if (value === '' || value.includes('${{') || value.startsWith('$')) return null;
  const last = value.split('/').at(-1) ?? value;
  return last.split(/[:@]/)[0]?.toLowerCase() || null;
}

/**
 * The services a CI file's `services:` blocks start: GitHub Actions' map of service keys to
 * `image:` (coleifer/huey's `redis` and `postgres`; PyMySQL's `mysql`, whose image is its
 * matrix's `${{ matrix.db }}`) and GitLab CI's list of images (`- redis:7`, `- name: postgres:16`).
 */
export function servicesOf(text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const opening = /^(\s*)services:\s*(#.*)?$/.exec(lines[index] ?? '');
    if (opening === null) continue;
    const depth = opening[1]?.length ?? 0;
    // The block's lines: deeper than `services:`, or list items at its depth (YAML allows both).
    const block: string[] = [];
    for (index += 1; index < lines.length; index += 1) {
      const line = lines[index] ?? '';
      const indent = indentOf(line);
      if (indent === null) continue;
      if (indent < depth || (indent === depth && !line.trimStart().startsWith('-'))) break;
      block.push(line);
    }
    index -= 1;
    const first = block[0];
    if (first === undefined) continue;
    const itemDepth = indentOf(first) ?? 0;
    if (first.trimStart().startsWith('-')) {
      // GitLab CI: a list of images, or of maps whose `name` is the image.
      for (const line of block) {
        const item = indentOf(line) === itemDepth ? /^\s*-\s*(?:name:\s*)?(\S+)\s*(#.*)?$/.exec(line) : null;
        const name = item === null ? null : imageName(item[1] ?? '');
        if (name !== null) found.push(name);
      }
      continue;
    }
    // GitHub Actions: service keys at the block's first depth, each with its `image:` below.
    let key: string | null = null;
    let image: string | null = null;
    const flush = () => {
      if (key !== null) found.push(image ?? key.toLowerCase());
    };
    for (const line of block) {
      if (indentOf(line) === itemDepth) {
        flush();
        key = /^\s*([\w.-]+):\s*(#.*)?$/.exec(line)?.[1] ?? null;
        image = null;
      } else if (key !== null) {
        const value = /^\s*image:\s*(.+?)\s*(#.*)?$/.exec(line)?.[1];
        if (value !== undefined) image = imageName(value);
      }
    }
    flush();
  }
  return [...new Set(found)];
}

/** The services the project's CI starts beside its tests (GitHub workflows, `.gitlab-ci.yml`), one per name. */
export async function readCiServices(worktree: string): Promise<CiService[]> {
  const files = [...(await readdir(join(worktree, WORKFLOWS)).catch(() => [] as string[])).filter((name) => /\.ya?ml$/.test(name)).sort().map((name) => `${WORKFLOWS}/${name}`), '.gitlab-ci.yml'];
  const services = new Map<string, CiService>();
  for (const file of files) {
    const text = await readFile(join(worktree, file), 'utf8').catch(() => null);
    if (text === null) continue;
    for (const name of servicesOf(text)) if (!services.has(name)) services.set(name, { name, from: file });
  }
  return [...services.values()];
}
