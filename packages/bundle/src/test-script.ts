import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { quoteShellWord } from '@envgen/repo';
import type { Profile } from '@envgen/repo';
import { PYTEST_SUPPORT_DIR } from '@envgen/testrun';

/** Prefix of the one line test_script.sh prints per test; a JSON object follows it. */
export const RESULT_MARKER = 'ENVGEN-TEST ';

// What envgen's own runs do alike (the project importable in the processes the tests start, as
// an editable install makes it; Hypothesis's seed), from the module envgen's pytest plugin
// imports: the script runs without envgen, so it carries the module's text.
const PROJECT_SUPPORT = readFileSync(join(PYTEST_SUPPORT_DIR, 'envgen_project.py'), 'utf8').trimEnd();

// A pytest plugin passed to pytest.main: one marker line per test with its node id as JSON,
// so ids with spaces, brackets, " - " or non-ASCII survive. It writes to a duplicate of the
// original stdout, which pytest's output capturing does not redirect.
const REPORTER = `import json, os, sys
import pytest

_out = os.fdopen(os.dup(1), "w", encoding="utf-8")


${PROJECT_SUPPORT}


def _emit(nodeid, outcome):
    _out.write("\\n${RESULT_MARKER}" + json.dumps({"nodeid": nodeid, "outcome": outcome}) + "\\n")
    _out.flush()


class EnvgenReporter:
    def __init__(self):
        self.outcomes = {}

    # Hypothesis draws the same examples every run unless the project sets its own seed.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        pin_hypothesis_seed(item.config)

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            outcome = "failed" if report.failed else "skipped" if report.skipped else "passed"
        elif report.failed:
            outcome = "failed"
        elif report.skipped:
            outcome = "skipped"
        else:
            return
        if self.outcomes.get(report.nodeid) != "failed":
            self.outcomes[report.nodeid] = outcome

    # As envgen's runs do: a failure's garbage finalized within the test (envgen_project).
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield
        if self.outcomes.get(item.nodeid) == "failed":
            collect_failure_garbage()

    def pytest_runtest_logfinish(self, nodeid, location):
        outcome = self.outcomes.pop(nodeid, None)
        if outcome is not None:
            _emit(nodeid, outcome)

    def pytest_collectreport(self, report):
        if report.failed:
            _emit(report.nodeid, "failed")


install_project(os.environ.get("PYTHONPATH", "").split(os.pathsep))
sys.exit(pytest.main(sys.argv[1:], plugins=[EnvgenReporter()]))
`;

/**
 * test_script.sh for a profile. Run it with the repository root as the working directory (the
 * bundle lives outside the repo): `cd REPO && bash /path/to/test_script.sh`. It sets the
 * profile's environment, runs its install steps, then the profile's pytest command (its test
 * arguments and deselected tests, no cache, no tracebacks, the repository root as rootdir) with a small reporter plugin that
 * prints one line per test: `ENVGEN-TEST {"nodeid": "...", "outcome": "passed|failed|skipped"}`.
 * pytest's `-rA` summary is not used: its SKIPPED lines name `file:line`, not node ids, and its
 * ` - message` suffix is ambiguous with parameter ids holding " - ". Outcomes: a failure in
 * setup, call or teardown is `failed` (errors count as failed), skips and xfails are `skipped`
 * (as in envgen's baseline), an xpass is `passed` (or `failed` when strict), and a file that
 * cannot be collected is reported as `failed` under its own node id (its tests are gone).
 * Hypothesis runs as with `--hypothesis-seed=0` unless the project sets a seed (as envgen's own
 * runs do), so a bug only some examples find fails in every run of the script or in none.
 * The Python processes the tests start import the project as after `pip install -e .`, as in
 * envgen's runs: a `.pth` naming the root and the profile's PYTHONPATH, absolute, in a user
 * site directory of the run's own (`PYTHONUSERBASE`, removed at exit).
 */
export function makeTestScript(profile: Profile): string {
  const exports = Object.entries({ ...profile.env, PYTHONDONTWRITEBYTECODE: '1' }).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new EnvgenError(ERROR_CODES.configInvalid, `The profile's environment variable name ${JSON.stringify(name)} is not a shell name: fix the profile's env.`);
    }
    return `export ${name}=${quoteShellWord(value)}`;
  });
  const argv = [
    profile.python,
    '-c',
    '"$ENVGEN_REPORTER"',
    '-p',
    'no:cacheprovider',
    '-q',
    '--tb=no',
    '--color=no',
    // Node ids relative to the repository root, as envgen names them, wherever pytest finds the config.
    '--rootdir=.',
    '--continue-on-collection-errors',
    ...profile.deselect.map((nodeId) => `--deselect=${nodeId}`),
    ...profile.testArgs,
  ].map((word) => (word === '"$ENVGEN_REPORTER"' ? word : quoteShellWord(word)));
  return [
    '#!/bin/bash',
    '# Made by envgen. Runs the tests from the repository root: cd REPO && bash /path/to/test_script.sh',
    `# Prints one line per test: ${RESULT_MARKER}{"nodeid": "...", "outcome": "passed|failed|skipped"}`,
    'set -u',
    ...exports,
    ...profile.install,
    // The project's console scripts (made by the install step) first on PATH, as an environment it is installed in has them.
    ...(profile.env['ENVGEN_SCRIPTS'] === undefined ? [] : ['export PATH="$PWD/$ENVGEN_SCRIPTS:$PATH"']),
    "ENVGEN_REPORTER=$(cat <<'ENVGEN_REPORTER_EOF'",
    REPORTER.trimEnd(),
    'ENVGEN_REPORTER_EOF',
    ')',
    `exec ${argv.join(' ')}`,
    '',
  ].join('\n');
}

/**
 * test_parser.py: standalone (Python standard library only). Reads test_script.sh's output on
 * stdin and prints one JSON object `{"<node id>": "passed" | "failed" | "skipped"}` (keys sorted).
 * Only the marker lines count, wherever they sit in a line; anything else is ignored.
 */
export function makeTestParser(): string {
  return `#!/usr/bin/env python3
"""Made by envgen. Reads test_script.sh's output on stdin, prints {"<test id>": "passed" | "failed" | "skipped"}.

test_script.sh prints one line per test: ${RESULT_MARKER}{"nodeid": ..., "outcome": ...}. Errors are
already "failed", skips and xfails "skipped". A test reported twice keeps "failed" if either was.
"""
import json
import sys

MARKER = ${JSON.stringify(RESULT_MARKER)}
OUTCOMES = ("passed", "failed", "skipped")


def parse(text):
    results = {}
    for line in text.splitlines():
        at = line.find(MARKER)
        if at < 0:
            continue
        try:
            entry = json.loads(line[at + len(MARKER):])
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        nodeid, outcome = entry.get("nodeid"), entry.get("outcome")
        if isinstance(nodeid, str) and outcome in OUTCOMES and results.get(nodeid) != "failed":
            results[nodeid] = outcome
    return results


def main():
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    sys.stdout.write(json.dumps(parse(text), sort_keys=True) + "\\n")


if __name__ == "__main__":
    main()
`;
}
