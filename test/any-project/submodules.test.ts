import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '@envgen/config';
import { silentLogger } from '@envgen/core';
import { createProgress, formatEnvReport, runEnv, runInject } from '@envgen/cli';
import { openPool } from '@envgen/pool';
import { materializeInstance } from '@envgen/tasks';
import { writeFixtureRepo } from '../support/fixture-repo.js';
import { plainPytest } from '../support/plain-pytest.js';

const quiet = createProgress({ quiet: true });
const scratch = mkdtempSync(join(tmpdir(), 'envgen-submodules-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The cases a toml-test-like repository holds: each `.toml` with the `.json` it decodes to. */
const CASES: Record<string, string> = {
  'tests/valid/int.toml': 'answer = 42\n',
  'tests/valid/int.json': '{"answer": 42}\n',
  'tests/valid/negative.toml': 'cold = -7\n',
  'tests/valid/negative.json': '{"cold": -7}\n',
  'tests/valid/bool.toml': 'on = true\noff = false\n',
  'tests/valid/bool.json': '{"on": true, "off": false}\n',
  'tests/valid/string.toml': 'name = "envgen"\n',
  'tests/valid/string.json': '{"name": "envgen"}\n',
  'tests/valid/comment.toml': '# nothing\nx = 1 # one\n',
  'tests/valid/comment.json': '{"x": 1}\n',
  'tests/invalid/no-value.toml': 'x =\n',
  'tests/invalid/no-equals.toml': 'x 1\n',
  'tests/invalid/bad-string.toml': 'x = "open\n',
};

const PARSER = `"""A tiny TOML subset: key = int | bool | string, with comments."""


class DecodeError(ValueError):
    pass


def strip_comment(line):
    in_string = False
    for index, char in enumerate(line):
        if char == '"':
            in_string = not in_string
        elif char == "#" and not in_string:
            return line[:index]
    return line


def parse_value(text):
    text = text.strip()
    if text == "true":
        return True
    if text == "false":
        return False
    if len(text) >= 2 and text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if text.lstrip("-").isdigit():
        return int(text)
    raise DecodeError("bad value: %r" % text)


def loads(source):
    table = {}
    for number, raw in enumerate(source.splitlines(), start=1):
        line = strip_comment(raw).strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise DecodeError("line %d: expected '='" % number)
        table[key.strip()] = parse_value(value)
    return table
`;

/** As tomlkit's and html5lib's: the cases are collected from the submodule's files. */
const TESTS = `import json
import os

import pytest

from minitoml import DecodeError, loads

CASES = os.path.join(os.path.dirname(__file__), "toml-test", "tests")


def cases(kind, suffix):
    return sorted(name[: -len(suffix)] for name in os.listdir(os.path.join(CASES, kind)) if name.endswith(suffix))


@pytest.mark.parametrize("name", cases("valid", ".toml"))
def test_valid(name):
    with open(os.path.join(CASES, "valid", name + ".toml")) as toml, open(os.path.join(CASES, "valid", name + ".json")) as expected:
        assert loads(toml.read()) == json.load(expected)


@pytest.mark.parametrize("name", cases("invalid", ".toml"))
def test_invalid(name):
    with open(os.path.join(CASES, "invalid", name + ".toml")) as toml:
        with pytest.raises(DecodeError):
            loads(toml.read())
`;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=fixture', '-c', 'user.email=fixture@example.invalid', '-c', 'protocol.file.allow=always', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** The project, its cases in a submodule added from a repo of its own (`data`). */
function submoduleProject(): { data: string; repo: string } {
  const data = writeFixtureRepo(CASES, { git: true, name: 'toml-test' });
  const repo = writeFixtureRepo({ 'minitoml.py': PARSER, 'tests/test_cases.py': TESTS }, { git: true, name: 'minitoml' });
  git(repo, 'submodule', 'add', '--quiet', data, 'tests/toml-test');
  git(repo, 'commit', '--quiet', '-m', 'the toml-test cases');
  return { data, repo };
}

describe('a project whose tests read their cases from a git submodule (tomlkit, html5lib, tinycss2)', () => {
  it('gets the submodule in every checkout: clean outcomes are plain pytest of a recursive clone, bugs are kept, environments hold the cases', async () => {
    const { data, repo } = submoduleProject();
    const home = join(scratch, 'home');
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });

    const env = await runEnv({ repo }, settings, silentLogger, quiet);
    expect(env.profile.submodules).toEqual([{ path: 'tests/toml-test', commit: git(data, 'rev-parse', 'HEAD') }]);
    expect(formatEnvReport(env)).toMatch(/ submodule {2}tests\/toml-test @ [0-9a-f]{8} \(checked out with the repo\)\n/);
    expect(env.tests.passed).toBe(8);

    const report = await runInject({ repo, count: 12, seed: 11, combine: 0, tasks: { statement: 'tests' } }, settings, silentLogger, quiet);
    // Before, the suite collected nothing (every parametrization listed an empty directory) and inject stopped.
    expect(report.rejected['crashed'] ?? 0).toBe(0);
    expect(report.afterVerdict).toEqual([]);
    expect(report.replay).toMatchObject({ agreed: true });
    // Half: the rest are bugs eight cases do not see or that break them all (no-failing-test, no-passing-test).
    expect(report.kept).toBeGreaterThanOrEqual(report.tried / 2);
    expect(report.tasks?.built).toBe(report.kept);

    const pool = openPool(home);
    try {
      const plain = plainPytest(repo);
      expect(Object.keys(plain)).toHaveLength(8);
      const instances = report.instanceIds.map((id) => pool.getInstance(id));
      for (const instance of instances) {
        for (const id of [...(instance?.FAIL_TO_PASS ?? []), ...(instance?.PASS_TO_PASS ?? [])]) expect(plain[id], id).toBe('passed');
        // No bug goes into another project's files.
        expect(instance?.patch).not.toContain('toml-test/');
      }
      // The agent's checkout has the cases as plain files, and its suite runs them.
      const task = pool.getTask(report.instanceIds[0] ?? '');
      if (task === undefined) throw new Error('no task was built');
      const checkout = join(scratch, 'checkout');
      await materializeInstance(task, checkout);
      expect(readFileSync(join(checkout, 'tests', 'toml-test', 'tests', 'valid', 'int.toml'), 'utf8')).toBe('answer = 42\n');
      const outcomes = plainPytest(checkout);
      expect(Object.keys(outcomes).sort()).toEqual(Object.keys(plain).sort());
      const failing = Object.entries(outcomes).filter(([, outcome]) => outcome !== 'passed');
      expect(failing.map(([id]) => id).sort()).toEqual([...(instances[0]?.FAIL_TO_PASS ?? [])].sort());
    } finally {
      pool.close();
    }
  });

  it('does not reuse a baseline made while the submodule could not be fetched', async () => {
    const { data, repo } = submoduleProject();
    // A clone that did not initialize it, and its URL gone: the submodule cannot be fetched.
    const clone = join(scratch, 'clone-unfetched');
    git(scratch, 'clone', '--quiet', repo, clone);
    renameSync(data, `${data}.away`);
    const home = join(scratch, 'home-unfetched');
    const settings = resolveConfig({ env: { ENVGEN_HOME: home }, cwd: home });
    const without = await runEnv({ repo: clone }, settings, silentLogger, quiet);
    expect(without.profile.submodules).toBeUndefined();
    expect(without.notes.some((note) => note.startsWith('its git submodule tests/toml-test ('))).toBe(true);
    expect(without.tests.passed).toBe(0);

    renameSync(`${data}.away`, data);
    const fetched = await runEnv({ repo: clone }, settings, silentLogger, quiet);
    // Before, the cached baseline of the tree without its cases answered: 0 tests.
    expect(fetched.fromCache).toBe(false);
    expect(fetched.tests.passed).toBe(8);
  });
});
