import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Writes a small repo inline: `files` maps repo-relative paths to contents. With `git`, the
 * tree is committed (fixed identity and date) so it has a base commit of its own.
 */
export function writeFixtureRepo(files: Record<string, string>, options: { git?: boolean; name?: string } = {}): string {
  const root = join(mkdtempSync(join(tmpdir(), 'envgen-fixture-')), options.name ?? 'project');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  if (options.git) {
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 'fixture',
      GIT_AUTHOR_EMAIL: 'fixture@example.invalid',
      GIT_COMMITTER_NAME: 'fixture',
      GIT_COMMITTER_EMAIL: 'fixture@example.invalid',
      GIT_AUTHOR_DATE: '2020-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2020-01-01T00:00:00Z',
    };
    execFileSync('git', ['init', '-q', root], { env });
    execFileSync('git', ['-C', root, 'add', '-A'], { env });
    execFileSync('git', ['-C', root, 'commit', '-qm', 'fixture'], { env });
  }
  return root;
}
