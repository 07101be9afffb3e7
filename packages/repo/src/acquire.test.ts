import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isEnvgenError } from '@envgen/core';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireRepo, submoduleUrl, submoduleUrlRefusal } from './acquire.js';
import { directoryState, git } from './git-test-helpers.fixture.js';
import { parseRepoSpec } from './spec.js';
import { createWorktree } from './worktree.js';

const root = mkdtempSync(join(tmpdir(), 'envgen-acquire-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

function writeTree(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

/** A work repo with two commits (tag v1 on the first) plus its bare clone at `<base>/<owner>/<name>.git`. */
function makeUpstream(base: string, owner: string, name: string): { work: string; bare: string; first: string; second: string } {
  const work = join(root, `work-${(counter += 1)}`);
  writeTree(work, { 'pkg/__init__.py': 'VALUE = 1\n', 'tests/test_pkg.py': 'def test_v(): pass\n' });
  git(work, 'init', '--quiet', '--initial-branch=main');
  git(work, 'add', '.');
  git(work, 'commit', '--quiet', '-m', 'one');
  git(work, 'tag', 'v1');
  const first = git(work, 'rev-parse', 'HEAD');
  writeTree(work, { 'pkg/__init__.py': 'VALUE = 2\n' });
  git(work, 'commit', '--quiet', '-am', 'two');
  const second = git(work, 'rev-parse', 'HEAD');
  const bare = join(base, owner, `${name}.git`);
  mkdirSync(dirname(bare), { recursive: true });
  git(root, 'clone', '--quiet', '--bare', work, bare);
  return { work, bare, first, second };
}

describe('acquireRepo: github and git URLs', () => {
  const base = join(root, 'github');
  const upstream = makeUpstream(base, 'acme', 'widgets');
  const home = join(root, 'home-github');
  const options = { home, githubBaseUrl: `file://${base}` };

  it('mirrors owner/name from the base URL and resolves HEAD, tags and shas', async () => {
    const head = await acquireRepo(parseRepoSpec('acme/widgets'), options);
    expect(head).toMatchObject({ owner: 'acme', name: 'widgets', commit: upstream.second, aptPackages: [], notes: [] });
    expect(head.mirror.startsWith(join(home, 'mirrors', 'git'))).toBe(true);
    expect(git(head.mirror, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect((await acquireRepo(parseRepoSpec('acme/widgets@v1'), options)).commit).toBe(upstream.first);
    expect((await acquireRepo(parseRepoSpec(`acme/widgets@${upstream.first.slice(0, 10)}`), options)).commit).toBe(upstream.first);
  });

  it('fetches a ref the mirror lacks, and reuses the mirror without the network once it has it', async () => {
    git(upstream.work, 'tag', 'v2');
    git(upstream.work, 'push', '--quiet', upstream.bare, 'v2');
    const v2 = await acquireRepo(parseRepoSpec('acme/widgets@v2'), options);
    expect(v2.commit).toBe(upstream.second);
    // The upstream disappears: cached refs and shas still resolve, a new ref says what to check.
    renameSync(upstream.bare, `${upstream.bare}.gone`);
    try {
      expect((await acquireRepo(parseRepoSpec(`acme/widgets@${upstream.first}`), options)).commit).toBe(upstream.first);
      expect((await acquireRepo(parseRepoSpec('acme/widgets@v2'), options)).commit).toBe(upstream.second);
      const error = await acquireRepo(parseRepoSpec('acme/widgets@v3'), options).catch((caught: unknown) => caught);
      expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
      expect((error as Error).message).toContain('ENVGEN_GITHUB_URL');
    } finally {
      renameSync(`${upstream.bare}.gone`, upstream.bare);
    }
  });

  it('says which repo is missing and what to check', async () => {
    const error = await acquireRepo(parseRepoSpec('acme/nothing'), options).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
    expect((error as Error).message).toContain('acme/nothing');
    expect((error as Error).message).toContain(`file://${base}`);
  });

  it('mirrors a file:// git URL with a ref', async () => {
    const repo = await acquireRepo(parseRepoSpec(`file://${upstream.bare}@v1`), { home });
    expect(repo).toMatchObject({ owner: 'acme', name: 'widgets', commit: upstream.first });
    expect(repo.mirror).toMatch(new RegExp(`^${home}/mirrors/git/file/.*/acme/widgets-[0-9a-f]{8}\\.git$`));
  });

  it('says which mirror to delete when a worktree cannot be made from it, leaving no directory behind', async () => {
    const repo = await acquireRepo(parseRepoSpec('acme/widgets@v1'), options);
    const dir = join(home, 'worktrees', 'damaged');
    const error = await createWorktree({ ...repo, commit: 'f'.repeat(40) }, { home, dir }).catch((caught: unknown) => caught);
    expect(isEnvgenError(error, 'repo-unavailable')).toBe(true);
    expect((error as Error).message).toContain('checkout');
    expect((error as Error).message).toContain(`from ${repo.mirror}; if the mirror is damaged, delete it to re-acquire`);
    expect(existsSync(dir)).toBe(false);
  });

  it('creates a worktree at the commit without modifying the mirror, and removes it', async () => {
    const repo = await acquireRepo(parseRepoSpec('acme/widgets@v1'), options);
    const before = directoryState(repo.mirror);
    const worktree = await createWorktree(repo, { home });
    expect(worktree.path.startsWith(join(home, 'worktrees'))).toBe(true);
    expect(readFileSync(join(worktree.path, 'pkg', '__init__.py'), 'utf8')).toBe('VALUE = 1\n');
    expect(git(worktree.path, 'rev-parse', 'HEAD')).toBe(upstream.first);
    expect(git(worktree.path, 'status', '--porcelain')).toBe('');
    expect(git(worktree.path, 'remote')).toBe('');
    writeFileSync(join(worktree.path, 'pkg', '__init__.py'), 'VALUE = 3\n');
    git(worktree.path, 'commit', '--quiet', '-am', 'bug');
    expect(directoryState(repo.mirror)).toBe(before);
    await worktree.remove();
    await worktree.remove();
    expect(() => readFileSync(join(worktree.path, 'pkg', '__init__.py'))).toThrow();
  });
});

describe('acquireRepo: a repository whose tests read data from git submodules (tomlkit: tests/toml-test)', () => {
  const base = join(root, 'github-submodules');
  const home = join(root, 'home-submodules');

  /** A one-commit repo of data files, served bare at `<base>/<owner>/<name>.git`; its commit. */
  function dataRepo(owner: string, name: string, files: Record<string, string>): string {
    const dir = join(root, `data-${name}`);
    writeTree(dir, files);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    git(dir, 'add', '.');
    git(dir, 'commit', '--quiet', '-m', 'data');
    git(root, 'clone', '--quiet', '--bare', dir, join(base, owner, `${name}.git`));
    return git(dir, 'rev-parse', 'HEAD');
  }

  it('fetches them through the GitHub base, relative URLs as git resolves them, and writes their files into every checkout', async () => {
    const tomlTest = dataRepo('toml-lang', 'toml-test', { 'tests/valid/bool.toml': 'a = true\n' });
    const cases = dataRepo('acme', 'cases', { 'one.json': '{}\n' });
    const work = join(root, 'work-submodules');
    writeTree(work, {
      'pkg/__init__.py': 'VALUE = 1\n',
      'tests/test_pkg.py': 'def test_v(): pass\n',
      '.gitmodules': [
        '[submodule "toml-test"]',
        '\tpath = tests/toml-test',
        '\turl = https://github.com/toml-lang/toml-test.git',
        '[submodule "cases"]',
        '\tpath = tests/cases',
        '\turl = ../cases.git',
        '[submodule "gone"]',
        '\tpath = vendor/gone',
        '\turl = https://example.invalid/gone.git',
        '',
      ].join('\n'),
    });
    git(work, 'init', '--quiet', '--initial-branch=main');
    git(work, 'add', '.');
    git(work, 'update-index', '--add', '--cacheinfo', `160000,${tomlTest},tests/toml-test`);
    git(work, 'update-index', '--add', '--cacheinfo', `160000,${cases},tests/cases`);
    git(work, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/gone`);
    git(work, 'commit', '--quiet', '-m', 'one');
    git(root, 'clone', '--quiet', '--bare', work, join(base, 'acme', 'toml.git'));

    const repo = await acquireRepo(parseRepoSpec('acme/toml'), { home, githubBaseUrl: `file://${base}` });
    expect(repo.submodules.map(({ path, commit }) => ({ path, commit }))).toEqual([
      { path: 'tests/toml-test', commit: tomlTest },
      { path: 'tests/cases', commit: cases },
    ]);
    expect(repo.notes).toHaveLength(1);
    expect(repo.notes[0]).toMatch(/^its git submodule vendor\/gone \(https:\/\/example\.invalid\/gone\.git at 11111111\) could not be fetched \(.*\): its directory stays empty/);
    const worktree = await createWorktree(repo, { home });
    expect(readFileSync(join(worktree.path, 'tests', 'toml-test', 'tests', 'valid', 'bool.toml'), 'utf8')).toBe('a = true\n');
    expect(readFileSync(join(worktree.path, 'tests', 'cases', 'one.json'), 'utf8')).toBe('{}\n');
    // The checkout's git sees the gitlinks only: the files are in no status and no diff.
    expect(git(worktree.path, 'status', '--porcelain')).toBe('');
    await worktree.remove();
    for (const submodule of repo.submodules) expect(submodule.mirror.startsWith(join(home, 'mirrors'))).toBe(true);
  });

  it('never takes a submodule whose path leaves the checkout (a hostile tree git would refuse to check out) or whose URL is a path of this machine', async () => {
    const work = join(root, 'hostile.git');
    git(root, 'init', '--quiet', '--bare', '--initial-branch=main', work);
    const fed = (input: string, ...args: string[]) => execFileSync('git', args, { cwd: work, input, encoding: 'utf8' }).trim();
    const modules = fed(
      '[submodule "up"]\n\tpath = ..\n\turl = ../up.git\n[submodule "git"]\n\tpath = .GIT\n\turl = ../git.git\n[submodule "mine"]\n\tpath = data\n\turl = /root\n',
      'hash-object',
      '-w',
      '--stdin',
    );
    const gitlink = '1'.repeat(40);
    const tree = fed(`100644 blob ${modules}\t.gitmodules\n160000 commit ${gitlink}\t..\n160000 commit ${gitlink}\t.GIT\n160000 commit ${gitlink}\tdata\n`, 'mktree');
    const commit = git(work, 'commit-tree', tree, '-m', 'hostile');
    git(work, 'update-ref', 'refs/heads/main', commit);
    const repo = await acquireRepo(parseRepoSpec(`file://${work}`), { home: join(root, 'home-hostile') });
    expect(repo.submodules).toEqual([]);
    // Nor one that would copy a directory of this machine into its checkouts.
    expect(repo.notes).toEqual([
      'its git submodule data (/root) is not fetched: a path on this machine outside where the repo is served from; its directory stays empty, and tests that read files from it fail or do not collect',
    ]);
  });

  it("uses a local repo's own initialized submodules", async () => {
    const data = join(root, 'data-local');
    writeTree(data, { 'cases/a.txt': 'a\n' });
    git(data, 'init', '--quiet', '--initial-branch=main');
    git(data, 'add', '.');
    git(data, 'commit', '--quiet', '-m', 'data');
    const work = join(root, 'work-local-submodules');
    writeTree(work, { 'pkg/__init__.py': 'VALUE = 1\n' });
    git(work, 'init', '--quiet', '--initial-branch=main');
    git(work, '-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', data, 'tests/data');
    git(work, 'add', '.');
    git(work, 'commit', '--quiet', '-m', 'one');
    rmSync(data, { recursive: true });

    const localHome = join(root, 'home-local-submodules');
    const repo = await acquireRepo(parseRepoSpec(work), { home: localHome });
    expect(repo.notes).toEqual([]);
    expect(repo.submodules).toEqual([{ path: 'tests/data', commit: git(join(work, 'tests', 'data'), 'rev-parse', 'HEAD'), mirror: join(work, '.git', 'modules', 'tests/data') }]);
    const worktree = await createWorktree(repo, { home: localHome });
    expect(readFileSync(join(worktree.path, 'tests', 'data', 'cases', 'a.txt'), 'utf8')).toBe('a\n');
    await worktree.remove();
  });
});

describe('submoduleUrlRefusal', () => {
  it.each([
    ['/root/private', '/root/private', 'https://github.com/acme/toml.git', false, 'a path on this machine outside where the repo is served from'],
    ['file:///home/me/secrets', 'file:///home/me/secrets', 'file:///srv/git/acme/toml.git', false, 'a path on this machine outside where the repo is served from'],
    ['../../../../root/x', 'file:///root/x', 'file:///srv/git/acme/toml.git', false, 'a path on this machine outside where the repo is served from'],
    ['../cases.git', 'file:///srv/git/acme/cases.git', 'file:///srv/git/acme/toml.git', false, null],
    ['https://github.com/toml-lang/toml-test', 'file:///srv/git/toml-lang/toml-test.git', 'file:///srv/git/acme/toml.git', false, null],
    ['https://gitlab.com/acme/data.git', 'https://gitlab.com/acme/data.git', 'https://github.com/acme/toml.git', false, null],
    ['git@gitlab.com:acme/data.git', 'git@gitlab.com:acme/data.git', 'https://github.com/acme/toml.git', false, null],
    ['/home/me/data', '/home/me/data', '/home/me/project', true, null],
    ['ext::sh -c touch% /tmp/pwned', 'ext::sh -c touch% /tmp/pwned', '/home/me/project', true, 'a remote helper runs commands'],
  ])('%s (as %s) of %s, a local repo: %s, is refused for: %s', (declared, url, parent, local, expected) => {
    expect(submoduleUrlRefusal(declared, url, parent, local)).toBe(expected);
  });
});

describe('submoduleUrl', () => {
  it.each([
    ['../cases.git', 'https://github.com/acme/toml.git', 'https://github.com', 'https://github.com/acme/cases.git'],
    ['../../other/x', 'file:///srv/git/acme/toml.git', 'file:///srv/git', 'file:///srv/git/other/x'],
    ['./sub', 'https://github.com/acme/toml.git', 'https://github.com', 'https://github.com/acme/toml.git/sub'],
    ['../data', '/home/me/project', 'https://github.com', '/home/me/data'],
    ['https://github.com/toml-lang/toml-test', 'x', 'file:///srv/git/', 'file:///srv/git/toml-lang/toml-test.git'],
    ['git@github.com:html5lib/html5lib-tests.git', 'x', 'file:///srv/git', 'file:///srv/git/html5lib/html5lib-tests.git'],
    ['https://gitlab.com/acme/data.git', 'x', 'file:///srv/git', 'https://gitlab.com/acme/data.git'],
  ])('%s of %s (GitHub base %s) is %s', (url, parent, githubBase, expected) => {
    expect(submoduleUrl(url, parent, githubBase)).toBe(expected);
  });
});

describe('acquireRepo: local directories', () => {
  const home = join(root, 'home-local');

  it('uses a local git repo in place, notes uncommitted changes and leaves the repo untouched', async () => {
    const { work, second } = makeUpstream(join(root, 'unused'), 'x', 'y');
    writeFileSync(join(work, 'pkg', '__init__.py'), 'VALUE = 99\n');
    const gitDir = join(work, '.git');
    const before = directoryState(gitDir);
    const indexBefore = readFileSync(join(gitDir, 'index'));
    const repo = await acquireRepo(parseRepoSpec(work), { home });
    expect(repo).toMatchObject({ owner: 'local', commit: second, mirror: work });
    expect(repo.notes[0]).toContain('uncommitted change');
    const worktree = await createWorktree(repo, { home });
    expect(readFileSync(join(worktree.path, 'pkg', '__init__.py'), 'utf8')).toBe('VALUE = 2\n');
    await worktree.remove();
    expect(directoryState(gitDir)).toBe(before);
    expect(readFileSync(join(gitDir, 'index'))).toEqual(indexBefore);
  });

  it('snapshots a plain tree deterministically, keeping symlinks, modes and ignored files', async () => {
    const files = { 'm.py': 'x = 1\n', 'test_m.py': 'def test_x(): pass\n', '.gitignore': '*.py\n', 'sub/.git/HEAD': 'junk\n', 'sub/run.sh': 'echo\n' };
    const first = join(root, 'plain-a');
    const second = join(root, 'plain-b');
    for (const dir of [first, second]) {
      writeTree(dir, files);
      chmodSync(join(dir, 'sub', 'run.sh'), 0o755);
      symlinkSync('m.py', join(dir, 'link.py'));
    }
    const a = await acquireRepo(parseRepoSpec(first), { home });
    const again = await acquireRepo(parseRepoSpec(first), { home });
    const b = await acquireRepo(parseRepoSpec(second), { home });
    expect(a.commit).toBe(again.commit);
    expect(b.commit).toBe(a.commit);
    expect(a.mirror).not.toBe(first);
    const listing = git(a.mirror, 'ls-tree', '-r', a.commit);
    expect(listing).toContain('120000 blob');
    expect(listing).toMatch(/100755 blob \w+\tsub\/run\.sh/);
    expect(listing).toContain('\tm.py');
    expect(listing).not.toContain('.git/HEAD');
    writeFileSync(join(first, 'm.py'), 'x = 2\n');
    expect((await acquireRepo(parseRepoSpec(first), { home })).commit).not.toBe(a.commit);
    const worktree = await createWorktree(a, { home });
    expect(readlinkSync(join(worktree.path, 'link.py'))).toBe('m.py');
    await worktree.remove();
  });
});
