import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * Debian packages of `names` not installed on this host. Host packages are what the `local`
 * sandbox runs with (its root is the host's, read-only). Without dpkg nothing can be told,
 * so nothing is reported missing.
 */
export async function findMissingHostPackages(names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const installed = new Set<string>();
  try {
    const { stdout } = await execFileAsync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Abbrev}\n', ...names]);
    collect(stdout, installed);
  } catch (error) {
    // dpkg-query exits 1 when some names are unknown but still prints the known ones.
    const stdout = (error as { stdout?: unknown }).stdout;
    if (typeof stdout !== 'string') return [];
    collect(stdout, installed);
  }
  return names.filter((name) => !installed.has(name));
}

function collect(stdout: string, installed: Set<string>): void {
  for (const line of stdout.split('\n')) {
    const [name, status] = line.trim().split(/\s+/);
    if (name && status?.startsWith('ii')) installed.add(name.split(':')[0] ?? name);
  }
}
