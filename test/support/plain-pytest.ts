import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { TestOutcome } from '@envgen/testrun';

/**
 * A report-log plugin of this module's own (nothing of envgen's): the collected node ids,
 * then every phase report, as JSON lines. Verbosity options in a project's addopts (`-v`)
 * change pytest's text output, never this. The log is opened once, when pytest loads the
 * plugin, and written through what the plugin took then: a test that patches `builtins.open`
 * or `json.dumps` until its teardown (cmd2's `mocker.patch('builtins.open')`) cannot make the
 * report of its call fail, which ended the session there (its later tests came out skipped).
 */
const REPORT_LOG = `import json, os

_handle = open(os.environ["PLAIN_PYTEST_LOG"], "a", encoding="utf-8")
_dumps = json.dumps


def _write(entry):
    _handle.write(_dumps(entry) + "\\n")
    _handle.flush()


def pytest_collection_finish(session):
    _write({"rootdir": str(session.config.rootpath)})
    for item in session.items:
        _write({"collected": item.nodeid})


def pytest_runtest_logreport(report):
    _write({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome})
`;

/** Options of {@link plainPytest}. */
export interface PlainPytestOptions {
  /** Paths or node ids to run (the profile's test selection); default none: pytest's own discovery. */
  args?: readonly string[];
  /** Extra environment (the profile's PYTHONPATH, say). */
  env?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  /**
   * Install the project first, as its developers do: \`pip install -e .\` with Debian's own
   * build backend (no dependencies, no index, no build isolation) into a prefix of its own.
   */
  install?: boolean;
  /** A command its developers run before installing (a make target that generates sources: `cython3 …`), argv. */
  prepare?: readonly string[];
  /** The directory of a project nested in the repo (\`libs/core\`): pytest runs (and pip installs) there. */
  project?: string;
  /** Directories of the repo first on PATH (where an install put the project's scripts). */
  path?: readonly string[];
}

/** A Debian machine's PATH, not this process's (whose tools, a pyenv's shims say, are no project's). */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * What a user's login shell has of this process's environment: the rest is the machine's own
 * set-up (CA bundles for its tools, `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`, pip's and pyenv's
 * settings), which a suite reads as a user's choice (pyopenssl's fallback CA paths are taken
 * only where `SSL_CERT_FILE` is unset; responses' `verify` becomes `REQUESTS_CA_BUNDLE`).
 */
const LOGIN_VARIABLES = ['HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'TERM'];

function loginEnvironment(): Record<string, string> {
  return Object.fromEntries(LOGIN_VARIABLES.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
}

/**
 * Plain pytest's outcomes on a fresh copy of `repo`, by repo-relative node id: Debian's python3
 * -m pytest from the repo root (or the nested `project`'s directory) with nothing but the project's own configuration (no envgen plugin, no rootdir, no
 * option of envgen's) and a report-log plugin of its own. Outcomes as envgen states them: a
 * failed call is `failed`, a failed setup or teardown `error` (a failed call stays failed),
 * skips and xfails `skipped`, xpasses `passed` (strict ones fail). The Python processes the
 * tests start import the project from any directory, as after an editable install: a user site
 * of the run's own (`PYTHONUSERBASE`) holds a `.pth` of it. The tests run unsandboxed, in a
 * login shell's environment ({@link LOGIN_VARIABLES}): use it on projects whose clean suite
 * you trust, as you would run it yourself.
 */
export function plainPytest(repo: string, options: PlainPytestOptions = {}): Record<string, TestOutcome> {
  const scratch = mkdtempSync(join(tmpdir(), 'envgen-plain-'));
  const copy = join(scratch, 'repo');
  cpSync(repo, copy, { recursive: true });
  const log = join(scratch, 'log.jsonl');
  const cwd = join(copy, options.project ?? '');
  try {
    writeFileSync(join(scratch, 'plain_report_log.py'), REPORT_LOG);
    writeFileSync(log, '');
    const path = (options.path ?? []).map((dir) => join(copy, dir));
    let installed: string[] | undefined;
    if (options.prepare !== undefined) {
      const [command = '', ...args] = options.prepare;
      const prepared = spawnSync(command, args, { cwd, encoding: 'utf8' });
      if (prepared.status !== 0) throw new Error(`${options.prepare.join(' ')} failed in ${repo}:\n${prepared.stderr}`);
    }
    if (options.install) {
      const prefix = join(scratch, 'prefix');
      const pip = spawnSync('/usr/bin/python3', ['-m', 'pip', 'install', '--quiet', '--no-deps', '--no-index', '--no-build-isolation', '--prefix', prefix, '-e', '.'], { cwd, encoding: 'utf8' });
      if (pip.status !== 0) throw new Error(`pip install -e . failed in ${repo}:\n${pip.stderr}`);
      // Where pip put it: Debian's python3 installs under <prefix>/local/lib/python3.X/dist-packages.
      const [found = '', scripts = ''] = spawnSync('/usr/bin/python3', ['-c', 'import sys, sysconfig; print(sysconfig.get_path("purelib", vars={"base": sys.argv[1]})); print(sysconfig.get_path("scripts", vars={"base": sys.argv[1]}))', prefix], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n');
      // Its console scripts, as an activated environment has them: a legacy `setup.py develop` (a
      // pbr project's) writes them to <prefix>/bin, not to Debian's <prefix>/local/bin.
      path.push(scripts, join(prefix, 'bin'));
      // A legacy install links the tree by an .egg-link, which its site directory's easy-install.pth
      // would put on the path.
      const eggLinks = readdirSync(prefix, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.egg-link'));
      installed = [`import site; site.addsitedir(${JSON.stringify(found)})`, ...eggLinks.map((file) => readFileSync(join(prefix, file), 'utf8').split('\n')[0] ?? '')];
    }
    // A user site of the run's own, which the Python processes the tests start inherit: the
    // install's prefix as a site directory (its .pth files, the editable finder, take effect) and
    // the trees its .egg-links name, or without an install the profile's import path and the
    // root, absolute, as an editable install of a setuptools project names them.
    const userSite = spawnSync('/usr/bin/python3', ['-c', 'import os, sys, sysconfig; print(sysconfig.get_path("purelib", os.name + "_user", {"userbase": sys.argv[1]}))', join(scratch, 'user')], { encoding: 'utf8' }).stdout.trim();
    mkdirSync(userSite, { recursive: true });
    const importPath = [...(options.env?.['PYTHONPATH'] ?? '').split(':').filter((entry) => entry !== ''), '.'].map((entry) => join(cwd, entry));
    writeFileSync(join(userSite, 'plain-project.pth'), `${(installed ?? importPath).join('\n')}\n`);
    spawnSync('/usr/bin/python3', ['-m', 'pytest', '-p', 'plain_report_log', ...(options.args ?? [])], {
      cwd,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 ** 2,
      timeout: options.timeoutMs ?? 600_000,
      env: {
        ...loginEnvironment(),
        PATH: [...path, SYSTEM_PATH].join(':'),
        PYTHONDONTWRITEBYTECODE: '1',
        ...options.env,
        PYTHONPATH: [options.env?.['PYTHONPATH'], scratch].filter((part) => part !== undefined && part !== '').join(':'),
        PYTHONUSERBASE: join(scratch, 'user'),
        PLAIN_PYTEST_LOG: log,
      },
    });
    const outcomes: Record<string, TestOutcome> = {};
    // Node ids are relative to pytest's rootdir (a nested project's own directory): made repo-relative.
    let prefix = '';
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      if (line === '') continue;
      const entry = JSON.parse(line) as { rootdir?: string; collected?: string; nodeid?: string; when?: string; outcome?: string };
      if (entry.rootdir !== undefined) {
        const dir = relative(realpathSync(copy), entry.rootdir);
        prefix = dir === '' ? '' : `${dir}/`;
        continue;
      }
      if (entry.collected !== undefined) {
        outcomes[`${prefix}${entry.collected}`] ??= 'skipped';
        continue;
      }
      const id = `${prefix}${entry.nodeid ?? ''}`;
      if (entry.when === 'call') {
        // An xfail reports `skipped`, an xpass `passed` (`failed` when strict).
        outcomes[id] = entry.outcome === 'failed' ? 'failed' : entry.outcome === 'skipped' ? 'skipped' : 'passed';
      } else if (entry.outcome === 'failed' && outcomes[id] !== 'failed') {
        outcomes[id] = 'error';
      } else if (entry.outcome === 'skipped' && entry.when === 'setup') {
        outcomes[id] = 'skipped';
      }
    }
    return outcomes;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
