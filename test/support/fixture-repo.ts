import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Writes a small repo inline: `files` maps repo-relative paths to contents. With `git`, the
 * tree is committed (fixed identity and date) so it has a base commit of its own; with
 * `releaseTag`, that commit is tagged and an empty commit follows it.
 */
export function writeFixtureRepo(files: Record<string, string>, options: { git?: boolean; name?: string; releaseTag?: string } = {}): string {
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
    if (options.releaseTag !== undefined) {
      // A release, then one commit on top of it: the checkout is a dev version past the tag.
      execFileSync('git', ['-C', root, 'tag', options.releaseTag], { env });
      execFileSync('git', ['-C', root, 'commit', '-q', '--allow-empty', '-m', 'after the release'], { env });
    }
  }
  return root;
}
