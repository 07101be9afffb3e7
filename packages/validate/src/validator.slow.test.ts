import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Candidate, Verdict } from '@envgen/core';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import type { SandboxProvider } from '@envgen/sandbox';
import { buildBaseline, buildPytestArgv, buildPytestEnv, openPytestSandbox } from '@envgen/testrun';
import type { Baseline } from '@envgen/testrun';
import { validateReference } from './reference.js';
import type { ValidationInput, ValidationOutcome, Validator } from './types.js';
import { createValidator } from './validator.js';
import { sameVerdict } from './verdict.js';
import type { CandidateLimits } from './verdict.js';
import { writesTreeConftest } from '../../../test/support/writes-tree-conftest.js';

const CALC = `import os


def add(a, b):
    return a + b


def mul(a, b):
    total = 0
    for _ in range(b):
        total = add(total, a)
    return total


def spin(n):
    while n > 0:
        n -= 1
    return n


def make_table():
    return {"one": 1, "two": 2}


def registry_name(x):
    return "reg-" + x


REGISTERED = registry_name("base")


def save(path, text):
    with open(path, "w") as handle:
        handle.write(text)


class Counter:
    step = 1

    def bump(self, value):
        return value + self.step


_PARSED = {}


def parse(text):
    if text not in _PARSED:
        _PARSED[text] = _parse(text)
    return _PARSED[text]


def _parse(text):
    return text.upper()
`;

const FILES: Record<string, string> = {
  'pkg/__init__.py': '',
  'pkg/calc.py': CALC,
  'tests/conftest.py': `import pytest
from pkg import calc


@pytest.fixture(scope="session")
def table():
    return calc.make_table()
`,
  'tests/test_calc.py': `import os
from pkg import calc


def test_add():
    assert calc.add(2, 3) == 5


def test_mul():
    assert calc.mul(3, 4) == 12


def test_spin():
    assert calc.spin(3) == 0


def test_table_one(table):
    assert table["one"] == 1


def test_table_two(table):
    assert table["two"] == 2


def test_registered():
    assert calc.REGISTERED == "reg-base"


def test_registry_name():
    assert calc.registry_name("x") == "reg-x"


def test_counter():
    assert calc.Counter().bump(1) == 2


def test_save(tmp_path):
    calc.save(str(tmp_path / "f.txt"), "hi")
    assert (tmp_path / "f.txt").read_text() == "hi"


def test_tree_is_clean():
    assert not os.path.exists("leak.txt")


def test_parse():
    assert calc.parse("ab") == "AB"


def test_parse_again():
    # Reads what test_parse left in the cache: never runs _parse itself.
    assert calc.parse("ab") == "AB"
`,
};

const ALL_TESTS = [
  'test_add', 'test_mul', 'test_spin', 'test_table_one', 'test_table_two', 'test_registered',
  'test_registry_name', 'test_counter', 'test_save', 'test_tree_is_clean', 'test_parse', 'test_parse_again',
].map((name) => `tests/test_calc.py::${name}`);

function mutate(name: string, from: string, to: string, path = 'pkg/calc.py'): ValidationInput {
  if (!CALC.includes(from)) throw new Error(`fixture lacks ${from}`);
  const candidate: Candidate = { strategy: name, family: 'procedural', seed: 1, patch: '', entities: [], description: name };
  return { candidate, files: [{ path, after: CALC.replace(from, to) }] };
}

const CANDIDATES: Record<string, ValidationInput> = {
  operator: mutate('operator', 'return a + b', 'return a - b'),
  methodBody: mutate('method body', 'return value + self.step', 'return value - self.step'),
  cached: mutate('cached', 'return text.upper()', 'return text.lower()'),
  sharedFixture: mutate('shared fixture', '"two": 2', '"two": 3'),
  importTime: mutate('import time', '"reg-" + x', '"reg+" + x'),
  hang: mutate('hang', 'n -= 1', 'n += 1'),
  // A failure whose report takes pytest longer than the test's limit to build, in code that
  // lets the alarm's exception through (Infinidat/munch: a RecursionError in
  // `DefaultMunch.__setattr__`, seconds to format its chain): here a cause that was never raised,
  // which pytest formats with Python's traceback module, reading its slow `__notes__`.
  slowReport: mutate('slow report', 'return a + b', 'raise ValueError("slow") from type("SlowToSay", (Exception,), {"__notes__": property(lambda self: __import__("time").sleep(5) or [])})()'),
  classLevel: mutate('class level', 'step = 1', 'step = 2'),
  leaksIntoTree: mutate('leak', 'open(path, "w")', 'open("leak.txt", "w")'),
  brokenImport: mutate('broken import', 'import os', 'import os_missing'),
  unused: mutate('harmless', 'total = 0\n', 'total = 0\n    unused = 1\n'),
  // An edit inside _parse's body whose new text ends the function and redefines add at
  // module level: test_add, long before the first test that runs _parse, now fails.
  bodyEscapes: mutate('body escapes', '    return text.upper()\n', '    return text.upper()\n\n\ndef add(a, b):\n    return a * b\n'),
  escapes: mutate('escape', 'return a + b', 'return a - b', '../outside.py'),
  // Writes to the captured stdout and closes it (PyCQA/bandit's formatters): every later test
  // errors, and pytest, its session over, fails to restore the capture and lets the error out.
  closesStdout: mutate('closes stdout', 'with open(path, "w") as handle:', 'with __import__("sys").stdout as handle:'),
};

/** pytest's FAILURES section of a run's output (up to the summary, which holds the run's seconds). */
function failures(output: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((line) => /^=+ FAILURES =+$/.test(line));
  if (start === -1) throw new Error(`no FAILURES section in:\n${output}`);
  const end = lines.findIndex((line, index) => index > start && /^(=+ .* =+|\d+ failed\b.*)$/.test(line));
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** A cold `pytest --tb=short <nodeIds>` in a fresh sandbox over a copy of `tree` with the candidate's files written. */
async function coldOutput(tree: string, profile: Profile, input: ValidationInput, nodeIds: readonly string[]): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'envgen-cold-report-'));
  try {
    await cp(tree, copy, { recursive: true });
    for (const file of input.files) await writeFile(join(copy, file.path), file.after);
    const target = await openPytestSandbox(createSandboxProvider('local'), { worktree: copy });
    try {
      const argv = [...buildPytestArgv(profile, target.sandbox.workdir, nodeIds), '--tb=short'];
      return (await target.sandbox.exec(argv, { env: buildPytestEnv(profile, `${target.outTarget}/results.json`, false), limits: { timeoutMs: 60_000 } })).stdout;
    } finally {
      await target.close();
    }
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

const f2p = (...names: string[]): string[] => names.map((name) => `tests/test_calc.py::${name}`).sort();

/** The fixture's tree written under `root`/tree, its profile and its baseline (the home under `root`). */
async function writeFixture(root: string, env: Record<string, string>, extra: Record<string, string> = {}): Promise<{ profile: Profile; baseline: Baseline }> {
  const tree = join(root, 'tree');
  for (const [path, content] of Object.entries({ ...FILES, ...extra })) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), content);
  }
  const profile: Profile = {
    python: '/usr/bin/python3', env, aptPackages: [], install: [], testArgs: ['tests'], testGlobs: ['tests/**'],
    sourceFiles: ['pkg/__init__.py', 'pkg/calc.py'], testFiles: ['tests/conftest.py', 'tests/test_calc.py'],
    deselect: [], timeoutMs: 60_000, testTimeoutMs: 60_000, provenance: {},
  };
  const baseline = await buildBaseline({ worktree: tree, commit: 'f'.repeat(40), profile, sandboxProvider: createSandboxProvider('local'), home: join(root, 'home') });
  return { profile, baseline };
}

// A random hash seed makes the validator trace what each test ran itself; a pinned one takes it from the baseline.
const SEEDS: { seed: string; env: Record<string, string> }[] = [
  { seed: 'a random hash seed', env: {} },
  { seed: 'a pinned hash seed', env: { PYTHONHASHSEED: '0' } },
];

describe.each(SEEDS)('fast validation agrees with the reference on a fixture full of traps, with $seed', ({ env }) => {
  let root: string;
  let validator: Validator;
  let baseline: Baseline;
  let profile: Profile;
  const provider = createSandboxProvider('local');
  // Every stable test gets 2 s of its own (a hang ends the run there); the others 20 s.
  const limits = { timeoutMs: 30_000, testTimeoutMs: 20_000, perTestSeconds: Object.fromEntries(ALL_TESTS.map((id) => [id, 2])) };
  const fast = new Map<string, ValidationOutcome>();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-validate-fixture-'));
    const tree = join(root, 'tree');
    ({ profile, baseline } = await writeFixture(root, env));
    validator = await createValidator({ worktree: tree, profile, baseline, sandboxProvider: provider, concurrency: 2, limits });
    const names = Object.keys(CANDIDATES);
    const outcomes = await Promise.all(names.map((name) => validator.validateWithDetails(CANDIDATES[name] as ValidationInput)));
    names.forEach((name, index) => fast.set(name, outcomes[index] as ValidationOutcome));
  });

  afterAll(async () => {
    await validator.close();
    await rm(root, { recursive: true, force: true });
  });

  it('starts from a clean baseline where every test passes', () => {
    expect(Object.keys(baseline.results).sort()).toEqual([...ALL_TESTS].sort());
    expect(baseline.coverage['pkg/calc.py:make_table']).toEqual(['tests/test_calc.py::test_table_one']);
  });

  it('goes on from the checkpoint at the first test that runs a changed body, through every later test', () => {
    expect(baseline.coverage['pkg/calc.py:Counter.bump']).toEqual(['tests/test_calc.py::test_counter']);
    const outcome = fast.get('methodBody');
    expect(outcome).toMatchObject({
      mode: 'resumed',
      resumedFrom: 'tests/test_calc.py::test_counter',
      testsRun: ALL_TESTS.length - ALL_TESTS.indexOf('tests/test_calc.py::test_counter'),
      verdict: { kind: 'instance', failToPass: f2p('test_counter') },
    });
    expect(outcome?.verdict.kind === 'instance' && outcome.verdict.passToPass.length).toBe(ALL_TESTS.length - 1);
    expect(fast.get('operator')).toMatchObject({ mode: 'resumed', testsRun: ALL_TESTS.length, verdict: { kind: 'instance', failToPass: f2p('test_add', 'test_mul') } });
    expect(fast.get('unused')).toMatchObject({ mode: 'resumed', verdict: { kind: 'rejected', reason: 'no-failing-test' } });
  });

  it('fails a later test that reads what the changed body left in a cache, though it never runs that body', () => {
    expect(baseline.coverage['pkg/calc.py:_parse']).toEqual(['tests/test_calc.py::test_parse']);
    expect(fast.get('cached')).toMatchObject({ mode: 'resumed', verdict: { kind: 'instance', failToPass: f2p('test_parse', 'test_parse_again') } });
  });

  it('runs the suite when the changed code runs at import time or at class level', () => {
    // A shared fixture's set-up runs outside every test under a random seed; under a pinned
    // one it counts for the test that sets it up, as in the baseline's coverage.
    const shared = env.PYTHONHASHSEED === undefined ? { mode: 'suite' } : { mode: 'resumed', resumedFrom: 'tests/test_calc.py::test_table_one' };
    expect(fast.get('sharedFixture')).toMatchObject({ ...shared, verdict: { kind: 'instance', failToPass: f2p('test_table_two') } });
    // conftest.py imports pkg.calc before collection: a changed function that had not run by
    // then takes its new code in the checkpoint there; one that ran (at import) cannot.
    if (env.PYTHONHASHSEED === undefined) expect(fast.get('sharedFixture')).toMatchObject({ resumedFrom: 'collection' });
    expect(fast.get('sharedFixture')?.declined).toBeUndefined();
    expect(fast.get('importTime')).toMatchObject({ mode: 'suite', declined: ['pkg/calc.py:registry_name ran before collection'], verdict: { kind: 'instance', failToPass: f2p('test_registered', 'test_registry_name') } });
    expect(fast.get('importTime')?.resumedFrom).toBeUndefined();
    expect(fast.get('classLevel')).toMatchObject({ mode: 'suite', declined: ['module- or class-level code differs'], verdict: { kind: 'instance', failToPass: f2p('test_counter') } });
    expect(fast.get('bodyEscapes')).toMatchObject({ mode: 'suite', verdict: { kind: 'instance', failToPass: f2p('test_add', 'test_mul') } });
    expect(fast.get('bodyEscapes')?.declined).toContain('module- or class-level code differs');
    // conftest.py imports the module, so pytest stops before running anything: judged by its
    // results (every test fails), as the reference judges it, never 'crashed'.
    expect(fast.get('brokenImport')).toMatchObject({ mode: 'suite', verdict: { kind: 'rejected', reason: 'no-passing-test' } });
  });

  it("rejects a hanging test as a timeout at the test's own limit, ending the run there", () => {
    const outcome = fast.get('hang');
    expect(outcome).toMatchObject({ mode: 'resumed', verdict: { kind: 'rejected', reason: 'timeout' } });
    expect(outcome?.seconds).toBeLessThan(10);
  });

  it('sees files a changed body leaves in the tree in later tests, and cleans the tree', () => {
    expect(fast.get('leaksIntoTree')).toMatchObject({ mode: 'resumed', verdict: { kind: 'instance', failToPass: f2p('test_save', 'test_tree_is_clean') } });
  });

  it("judges a run that pytest ends with an error after its session by its results, as a fresh `python -m pytest` exits 1 with them (a test closed the captured stdout)", () => {
    expect(fast.get('closesStdout')).toMatchObject({ mode: 'resumed', verdict: { kind: 'instance', failToPass: f2p('test_parse', 'test_parse_again', 'test_save', 'test_tree_is_clean') } });
  });

  it('collects only the selected test files, with a weakened test file and the bug written in, and runs the named tests still there', async () => {
    const weakened = (FILES['tests/test_calc.py'] as string).replace('def test_add():\n    assert calc.add(2, 3) == 5\n\n\n', '');
    const files = [...(CANDIDATES['operator'] as ValidationInput).files, { path: 'tests/test_calc.py', after: weakened }];
    const run = await validator.runSelected(files, ['tests/test_calc.py'], f2p('test_add', 'test_mul'));
    if (!run.ok) throw new Error(run.reason);
    expect(run.results).toEqual({ 'tests/test_calc.py::test_mul': expect.objectContaining({ outcome: 'failed' }) });
  });

  it("runs a named test that is still collected with pytest's assertion rewriting, which a test reading an assertion's message needs", async () => {
    const reading = `${FILES['tests/test_calc.py'] as string}\n\ndef test_reads_message():\n    import pytest\n    value = 3\n    with pytest.raises(AssertionError, match="assert 3 == 4"):\n        assert value == 4\n`;
    const run = await validator.runSelected([{ path: 'tests/test_calc.py', after: reading }], ['tests/test_calc.py'], ['tests/test_calc.py::test_reads_message']);
    if (!run.ok) throw new Error(run.reason);
    expect(run.results).toEqual({ 'tests/test_calc.py::test_reads_message': expect.objectContaining({ outcome: 'passed' }) });
  });

  it('prints the same failure reports as a cold `pytest --tb=short` of the same tests with the bug written in', async () => {
    for (const name of ['operator', 'classLevel']) {
      const input = CANDIDATES[name] as ValidationInput;
      const verdict = fast.get(name)?.verdict;
      if (verdict?.kind !== 'instance') throw new Error(`${name} is not an instance`);
      const warm = await validator.failureOutput(input.files, verdict.failToPass);
      if (warm === null) throw new Error(`no warm failure output for ${name}`);
      const cold = await coldOutput(join(root, 'tree'), profile, input, verdict.failToPass);
      expect(failures(warm)).toMatch(/^E .*assert -?\d+ == \d+$/m);
      // Object addresses differ from one run to the next, cold or warm.
      const comparable = (output: string): string => failures(output).replace(/ at 0x[0-9a-f]+/g, ' at 0x…');
      expect({ name, warm: comparable(warm) }).toEqual({ name, warm: comparable(cold) });
    }
  });

  it('gives no warm failure output for tests that do not fail there (they run cold instead)', async () => {
    const input = CANDIDATES['operator'] as ValidationInput;
    const verdict = fast.get('operator')?.verdict;
    if (verdict?.kind !== 'instance') throw new Error('operator is not an instance');
    const passing = verdict.passToPass.slice(0, 1);
    expect(await validator.failureOutput(input.files, [...verdict.failToPass, ...passing])).toBeNull();
    expect(await validator.failureOutput(input.files, ['tests/test_nowhere.py::test_missing'])).toBeNull();
  });

  it('rejects files outside the repo', () => {
    expect(fast.get('escapes')?.verdict).toMatchObject({ kind: 'rejected', reason: 'apply-failed' });
  });

  it('reaches the same verdict and F2P/P2P sets as the reference for every candidate', async () => {
    for (const [name, input] of Object.entries(CANDIDATES)) {
      const reference = await validateReference({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: provider, limits, ...input });
      expect({ name, same: sameVerdict(fast.get(name)?.verdict ?? reference, reference), reference }).toMatchObject({ name, same: true });
    }
  });
});

describe('a resumed run that passes a limit', () => {
  let root: string;
  let validator: Validator;
  let profile: Profile;
  let baseline: Baseline;
  const limits = { timeoutMs: 6_000, testTimeoutMs: 6_000, perTestSeconds: Object.fromEntries(ALL_TESTS.map((id) => [id, 2])) };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-validate-limit-'));
    ({ profile, baseline } = await writeFixture(root, {}));
    // The hang's 2 s pass a quarter of the run's 6 s, past which a resumed run that completes runs again from scratch.
    validator = await createValidator({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: createSandboxProvider('local'), concurrency: 1, limits });
  });

  afterAll(async () => {
    await validator?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('is a timeout at once, not run again from scratch: that run, the same tests and more, would pass it too', async () => {
    const outcome = await validator.validateWithDetails(CANDIDATES['hang'] as ValidationInput);
    expect(outcome).toMatchObject({ mode: 'resumed', verdict: { kind: 'rejected', reason: 'timeout' } });
    expect(outcome.declined).toBeUndefined();
  });

  it("is a timeout, not a crash, where the limit passes while pytest builds a failure's report, on both paths", async () => {
    const input = CANDIDATES['slowReport'] as ValidationInput;
    const outcome = await validator.validateWithDetails(input);
    expect(outcome).toMatchObject({ mode: 'resumed', verdict: { kind: 'rejected', reason: 'timeout', detail: expect.stringContaining('tests/test_calc.py::test_add') } });
    const reference = await validateReference({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: createSandboxProvider('local'), limits, ...input });
    expect(reference).toMatchObject({ kind: 'rejected', reason: 'timeout', detail: expect.stringContaining('tests/test_calc.py::test_add') });
  });
});

/**
 * A test that fails in a warm interpreter's clean run, never in the baseline's: in the first
 * `times` (each leaves a mark where it fails), as a test that times itself fails under load.
 * The runs share the host's file system (the `none` sandbox).
 */
function warmFailure(marks: string, times: number): string {
  return `import os
import sys
import uuid


def test_warm():
    if "envgen_warm" in sys.modules and len(os.listdir(${JSON.stringify(marks)})) < ${times}:
        open(os.path.join(${JSON.stringify(marks)}, uuid.uuid4().hex), "w").close()
        raise AssertionError("failed warm")
`;
}

describe.each<{ failing: string; times: number; mode: string; env: Record<string, string> }>([
  { failing: 'in one warm clean run of three', times: 1, mode: 'resumed', env: {} },
  { failing: 'in every warm clean run', times: 1000, mode: 'reference', env: {} },
  // The two workers' clean runs under a pinned seed, at once, are the only ones: before, the test behaved otherwise warm.
  { failing: 'in both warm clean runs, so the suite runs once more', times: 2, mode: 'resumed', env: { PYTHONHASHSEED: '0' } },
])('a stable test that fails $failing', ({ times, mode, env }) => {
  let root: string;
  let validator: Validator;
  const once = mode === 'resumed';

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-validate-warm-flip-'));
    await mkdir(join(root, 'failed'));
    const { profile, baseline } = await writeFixture(root, env, { 'tests/test_warm.py': warmFailure(join(root, 'failed'), times) });
    validator = await createValidator({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: createSandboxProvider('none'), concurrency: 2 });
  });

  afterAll(async () => {
    await validator?.close();
    await rm(root, { recursive: true, force: true });
  });

  it(`validates candidates ${mode === 'resumed' ? 'warm (the test flips between warm runs of one tree: flaky)' : 'the reference way (the test behaves otherwise warm)'}`, async () => {
    const outcome = await validator.validateWithDetails(CANDIDATES['methodBody'] as ValidationInput);
    expect(outcome.mode).toBe(mode);
    expect(outcome.verdict.kind).toBe('instance');
    if (outcome.verdict.kind === 'instance') expect([...outcome.verdict.failToPass, ...outcome.verdict.passToPass].includes('tests/test_warm.py::test_warm')).toBe(!once);
    expect(validator.warmFlaky).toEqual(once ? ['tests/test_warm.py::test_warm'] : []);
  });
});

/**
 * A stable test that hangs the first time a warm interpreter runs it (as a multiprocessing
 * pool may under load): in a module collected before the others, the warm clean run that
 * meets it ends at its limit, before every later test; in one collected last, after them all.
 */
function warmHang(mark: string): string {
  return `import os
import sys
import time


def test_hang():
    if "envgen_warm" in sys.modules and not os.path.exists(${JSON.stringify(mark)}):
        open(${JSON.stringify(mark)}, "w").close()
        time.sleep(120)
`;
}

const HANGS = SEEDS.flatMap((seed) => [
  { ...seed, module: 'test_a_hang', where: 'first' },
  { ...seed, module: 'test_z_hang', where: 'last' },
]);

describe.each(HANGS)('a stable test run $where that hangs in the first warm clean run to reach it, with $seed', ({ env, module }) => {
  let root: string;
  let validator: Validator;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-validate-warm-hang-'));
    const { profile, baseline } = await writeFixture(root, env, { [`tests/${module}.py`]: warmHang(join(root, 'hung')) });
    // One worker: its first clean run (the traced one) is the run that meets the hang.
    validator = await createValidator({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: createSandboxProvider('none'), concurrency: 1 });
  }, 120_000);

  afterAll(async () => {
    await validator?.close();
    await rm(root, { recursive: true, force: true });
  });

  // Before, a hang in the suite's last test was not run again: the test behaved otherwise warm, and every candidate went the reference way.
  it('runs that clean run again, so the tests after the hang keep their checkpoints and the warm path (the hang is flaky)', async () => {
    const outcome = await validator.validateWithDetails(CANDIDATES['methodBody'] as ValidationInput);
    expect(outcome.mode).toBe('resumed');
    expect(outcome.verdict.kind).toBe('instance');
    expect(validator.warmFlaky).toEqual([`tests/${module}.py::test_hang`]);
  });
});

/**
 * A validator over the fixture with `extra` files, made before the describe block's tests;
 * `reference` validates the reference way; both with `limits`, when given, in sandboxes of
 * `memoryBytes` (the baseline in the default's).
 */
function fixtureValidator(env: Record<string, string>, extra: Record<string, string>, limits?: CandidateLimits, memoryBytes?: number) {
  const context = {} as { validator: Validator; baseline: Baseline; reference: (input: ValidationInput) => Promise<Verdict> };
  let root: string;
  const local = createSandboxProvider('local');
  const provider: SandboxProvider =
    memoryBytes === undefined ? local : { kind: local.kind, ensureAvailable: () => local.ensureAvailable(), open: (options) => local.open({ ...options, limits: { ...options.limits, memoryBytes } }) };
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-validate-extra-'));
    const { profile, baseline } = await writeFixture(root, env, extra);
    context.baseline = baseline;
    const given = limits === undefined ? {} : { limits };
    context.validator = await createValidator({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: provider, concurrency: 1, ...given });
    context.reference = (input) => validateReference({ worktree: join(root, 'tree'), profile, baseline, sandboxProvider: provider, ...given, ...input });
  });
  afterAll(async () => {
    await context.validator?.close();
    await rm(root, { recursive: true, force: true });
  });
  return context;
}

/** A test that runs calc's code under a profiler of its own, before test_mul runs it. */
const PROFILED = `import cProfile
from pkg import calc


def test_profiled():
    profiler = cProfile.Profile()
    profiler.enable()
    profiler.disable()
    # The profile hook is gone: the baseline's tracer no longer sees what runs from here.
    assert calc.mul(2, 3) == 6
`;

describe.each(SEEDS)('a test that takes the profile hook, with $seed', ({ env }) => {
  const context = fixtureValidator(env, { 'tests/test_a_profiled.py': PROFILED });

  it('is untraced in the baseline, and every candidate runs it: its failure is in FAIL_TO_PASS, as in the reference', async () => {
    expect(context.baseline.untraced).toEqual(['tests/test_a_profiled.py::test_profiled']);
    const input = mutate('profiled', 'total = 0\n', 'total = 1\n');
    const outcome = await context.validator.validateWithDetails(input);
    const reference = await context.reference(input);
    expect(reference).toMatchObject({ kind: 'instance', failToPass: ['tests/test_a_profiled.py::test_profiled', 'tests/test_calc.py::test_mul'] });
    expect(sameVerdict(outcome.verdict, reference)).toBe(true);
  });
});

/** The fixture's conftest with an autouse fixture that asserts no profiler or tracer runs around each test. */
const NO_TRACERS_CONFTEST = `${FILES['tests/conftest.py'] ?? ''}

@pytest.fixture(autouse=True)
def no_tracers():
    import sys

    assert sys.getprofile() is None and sys.gettrace() is None
    yield
    assert sys.getprofile() is None
    sys.setprofile(None)
`;

describe.each(SEEDS)('a suite that asserts no profiler runs, with $seed', ({ env }) => {
  const context = fixtureValidator(env, { 'tests/conftest.py': NO_TRACERS_CONFTEST });

  it("sees none of envgen's tracers: no test is flaky or untraced, and candidates resume inside the suite with the reference's verdict", async () => {
    expect(context.baseline.flaky).toEqual([]);
    expect(context.baseline.untraced).toEqual([]);
    const input = CANDIDATES['methodBody'] as ValidationInput;
    const outcome = await context.validator.validateWithDetails(input);
    expect(outcome.mode).toBe('resumed');
    expect(sameVerdict(outcome.verdict, await context.reference(input))).toBe(true);
  });
});

/** The fixture's conftest, writing into the tree before collection and keeping a log file there open (see writesTreeConftest). */
const WRITES_TREE_CONFTEST = `${FILES['tests/conftest.py'] ?? ''}\n${writesTreeConftest('3 4')}`;

const READS_WRITTEN = `import os

from pkg import calc

HERE = os.path.dirname(__file__)


def test_generated():
    with open(os.path.join(HERE, "generated.txt")) as handle:
        a, b = (int(x) for x in handle.read().split())
    assert calc.mul(a, b) == 12


def test_log():
    with open(os.path.join(HERE, "session.log")) as handle:
        lines = handle.read().splitlines()
    assert lines[-1] == "start test_log"
    assert len(lines) == len(set(lines)) == 14
`;

describe('a suite whose conftest writes into the tree before collection and keeps a file there open', () => {
  const context = fixtureValidator({}, { 'tests/conftest.py': WRITES_TREE_CONFTEST, 'tests/test_written.py': READS_WRITTEN });

  it("resumes from checkpoints that hold the file open (each run opens it anew where the checkpoint had it) and sees what the conftest wrote: the reference's verdicts", async () => {
    expect(Object.values(context.baseline.results).every((result) => result.outcome === 'passed')).toBe(true);
    const expected: Record<string, string[]> = {
      operator: ['tests/test_calc.py::test_add', 'tests/test_calc.py::test_mul', 'tests/test_written.py::test_generated'],
      cached: f2p('test_parse', 'test_parse_again'),
    };
    for (const [name, failToPass] of Object.entries(expected)) {
      const input = CANDIDATES[name] as ValidationInput;
      const outcome = await context.validator.validateWithDetails(input);
      // Before, every checkpoint was declined ("file descriptor N is open (…/session.log)"), and
      // a run from one saw no generated.txt: the host puts the clean tree back after each run.
      expect({ name, mode: outcome.mode, declined: outcome.declined }).toEqual({ name, mode: 'resumed', declined: undefined });
      const reference = await context.reference(input);
      expect(reference).toMatchObject({ kind: 'instance', failToPass });
      expect({ name, same: sameVerdict(outcome.verdict, reference) }).toEqual({ name, same: true });
    }
  });
});

/** Handles only the cyclic collector frees (each refers to itself, as a connection to its cursors), dropped with their files open in the tests' temporary directory. */
const DROPPED_HANDLES = `class Store:
    def __init__(self, path):
        self.file = open(path, "a")
        self.me = self


def test_store(tmp_path):
    for n in range(3):
        Store(tmp_path / ("db%d" % n))
`;

describe("a suite that drops handles on files in the tests' temporary directory that only the cyclic collector frees (sqlite-utils' connections)", () => {
  const context = fixtureValidator({}, { 'tests/test_a_store.py': DROPPED_HANDLES });

  it('resumes from checkpoints where the files were open: the collector does not close them in a checkpoint between its runs', async () => {
    for (const name of ['operator', 'methodBody', 'cached', 'sharedFixture'] as const) {
      const input = CANDIDATES[name] as ValidationInput;
      const outcome = await context.validator.validateWithDetails(input);
      // Before, a checkpoint's own work between runs let the collector finalize the handles,
      // and its children, finding the files' descriptors closed, declined: "the child could not take the checkpoint over".
      expect({ name, declined: outcome.declined }).toEqual({ name, declined: undefined });
      expect({ name, same: sameVerdict(outcome.verdict, await context.reference(input)) }).toEqual({ name, same: true });
    }
  });
});

/** calc with a function a property test checks; its mutants below make that test fail. */
const CALC_WITH_TOTAL = `${CALC}

def total(xs):
    return sum(xs)
`;

/** Ten examples of 50 ms each (its examples are fixed: the digest of this source seeds them). */
const PROPERTY_TEST = `import time

from hypothesis import given, settings, strategies as st

from pkg import calc


@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers()))
def test_total(xs):
    time.sleep(0.05)
    assert calc.total(xs) == sum(xs)
`;

function mutateTotal(name: string, bug: string): ValidationInput {
  const candidate: Candidate = { strategy: name, family: 'procedural', seed: 1, patch: '', entities: [], description: name };
  return { candidate, files: [{ path: 'pkg/calc.py', after: CALC_WITH_TOTAL.replace('return sum(xs)', `return sum(xs) + (1 if ${bug} else 0)`) }] };
}

/** A bug Hypothesis finds at its 8th example here, then shrinks in about 130 more runs of the test's body (7 s). */
const HARD_TO_SHRINK = 'len(set(xs)) >= 3 and any(x < -3 for x in xs) and any(x > 3 for x in xs)';

describe('a property-based test a bug makes fail', () => {
  // The property test's own limit: 3 s, six times its clean pass.
  const limits = { timeoutMs: 60_000, testTimeoutMs: 30_000, perTestSeconds: { 'tests/test_property.py::test_total': 3 } };
  const context = fixtureValidator({}, { 'pkg/calc.py': CALC_WITH_TOTAL, 'tests/test_property.py': PROPERTY_TEST }, limits);

  it('fails at the first failing example Hypothesis finds, on both paths: shrinking it would run the test past its limit', async () => {
    // Before, the verdict was a timeout on both paths.
    const input = mutateTotal('hard to shrink', HARD_TO_SHRINK);
    const outcome = await context.validator.validateWithDetails(input);
    expect(outcome.verdict, JSON.stringify(outcome.verdict)).toMatchObject({ kind: 'instance', failToPass: ['tests/test_property.py::test_total'] });
    expect(sameVerdict(outcome.verdict, await context.reference(input))).toBe(true);
  });

  it("shows the shrunk example in a failure report, as the user's pytest does", async () => {
    const input = mutateTotal('easy to shrink', 'len(xs) >= 1');
    const output = await context.validator.failureOutput(input.files, ['tests/test_property.py::test_total']);
    expect(output).toContain('xs=[0]');
  });

  it("shows the first failing example Hypothesis finds where shrinking it would run past the test's limit", async () => {
    const input = mutateTotal('hard to shrink', HARD_TO_SHRINK);
    const output = await context.validator.failureOutput(input.files, ['tests/test_property.py::test_total']);
    // Before, the report was envgen's timeout, or none.
    expect(output).toContain('Falsifying example');
    expect(output).not.toContain('exceeded its');
  });
});

/** calc with a retry loop that swallows every exception, as clients of flaky services have. */
const CALC_WITH_RETRY = `${CALC}

def retried(attempt):
    while True:
        try:
            return attempt()
        except Exception:
            pass


def head(text):
    return text[0]


def countdown(n):
    while n > 0:
        n = n - 1
    return n


def total(n):
    return sum(range(n))
`;

/** Tests a bug makes hang where envgen's per-test alarm cannot stop them. */
const HANGING_TESTS = `import queue
import threading

from pkg import calc


def test_retried():
    assert calc.retried(lambda: calc.head("ab")) == "a"


def test_count_in_thread():
    results = queue.Queue()
    threading.Thread(target=lambda: results.put(calc.countdown(3))).start()
    assert results.get() == 0


def test_total():
    assert calc.total(4) == 6
`;

describe('a bug that makes a test hang past its limit where the alarm cannot stop it', () => {
  // The tests that run the mutated functions get 1 s of their own; the run 20 s.
  const own = ['tests/test_hangs.py::test_retried', 'tests/test_hangs.py::test_count_in_thread', 'tests/test_hangs.py::test_total'];
  const limits = { timeoutMs: 20_000, testTimeoutMs: 20_000, perTestSeconds: Object.fromEntries(own.map((id) => [id, 1])) };
  const context = fixtureValidator({}, { 'pkg/calc.py': CALC_WITH_RETRY, 'tests/test_hangs.py': HANGING_TESTS }, limits);
  const hang = (name: string, from: string, to: string): ValidationInput => {
    const candidate: Candidate = { strategy: name, family: 'procedural', seed: 1, patch: '', entities: [], description: name };
    return { candidate, files: [{ path: 'pkg/calc.py', after: CALC_WITH_RETRY.replace(from, to) }] };
  };

  it.each([
    ['a retry loop swallows the alarm', hang('swallowed', 'return text[0]', 'return text[9]')],
    ['a thread the test started spins on after it', hang('thread', 'n = n - 1', 'n = n - 0')],
    // sum() over a range loops in C and never hears the alarm: the plugin's watchdog ends it.
    ['a built-in loops in C without returning to the interpreter', hang('builtin', 'sum(range(n))', 'sum(range(n * 10 ** 12))')],
  ])('is a timeout at the test limit, not the run limit, on both paths: %s', async (_, input) => {
    const started = performance.now();
    const reference = await context.reference(input);
    const referenceSeconds = (performance.now() - started) / 1000;
    const outcome = await context.validator.validateWithDetails(input);
    for (const verdict of [outcome.verdict, reference]) {
      expect(verdict).toMatchObject({ kind: 'rejected', reason: 'timeout', detail: expect.stringContaining('ran past the per-test limit') });
    }
    // Far below the run's limit of 20 s (before, the hang cost all of it on each path).
    expect(referenceSeconds).toBeLessThan(10);
    expect(outcome.seconds).toBeLessThan(10);
  });
});

const GROWING = `def chunks(n):
    items = []
    while len(items) < n:
        items.append(b"x" * (1 << 20))
    return len(items)
`;

const GROWING_TESTS = `from pkg import calc


def test_chunks():
    assert calc.chunks(3) == 3
`;

describe('a bug that makes a test allocate without end', () => {
  // Sandboxes of 384 MiB: the mutant's list reaches it in well under a second.
  const grown = `${CALC}\n\n${GROWING}`;
  const context = fixtureValidator({}, { 'pkg/calc.py': grown, 'tests/test_grow.py': GROWING_TESTS }, undefined, 384 * 1024 ** 2);
  const candidate: Candidate = { strategy: 'grow', family: 'procedural', seed: 1, patch: '', entities: [], description: 'grow' };
  const input: ValidationInput = { candidate, files: [{ path: 'pkg/calc.py', after: grown.replace('len(items) < n', 'len(items) > -1') }] };

  it("is stopped by the sandbox's memory limit on both paths, and said so (before, `crashed` both ways)", async () => {
    const reference = await context.reference(input);
    const outcome = await context.validator.validateWithDetails(input);
    expect(outcome.mode).toBe('resumed');
    for (const verdict of [outcome.verdict, reference]) {
      expect(verdict).toMatchObject({ kind: 'rejected', reason: 'resource-limit', detail: expect.stringContaining("the sandbox's memory limit") });
    }
  });

  it('keeps its warm server for the next candidate', async () => {
    const outcome = await context.validator.validateWithDetails({ candidate, files: [{ path: 'pkg/calc.py', after: grown.replace('return len(items)', 'return len(items) + 1') }] });
    expect(outcome.mode).toBe('resumed');
    expect(outcome.verdict).toMatchObject({ kind: 'instance', failToPass: ['tests/test_grow.py::test_chunks'] });
  });
});

/** Debian's attrs (python3-pytest depends on it): pytest imports it and runs its code when it starts. */
const ATTRS_DIR = '/usr/lib/python3/dist-packages/attr';

const ATTRS_TESTS = `import attr
from attr.validators import instance_of


def test_instance_of_rejects():
    @attr.s
    class Point:
        x = attr.ib(validator=instance_of(int))

    try:
        Point("1")
    except TypeError:
        return
    raise AssertionError("no TypeError")


def test_instance_of_accepts():
    @attr.s
    class Point:
        x = attr.ib(validator=instance_of(int))

    assert Point(1).x == 1


def test_init_and_eq():
    @attr.s
    class Pair:
        a = attr.ib()
        b = attr.ib(default=2)

    assert Pair(1) == Pair(1, 2)


def test_asdict():
    @attr.s
    class Pair:
        a = attr.ib()
        b = attr.ib()

    assert attr.asdict(Pair(1, 2)) == {"a": 1, "b": 2}
`;

describe('a project pytest itself imports and runs when it starts (attrs, first on the path)', () => {
  let root: string;
  let tree: string;
  let profile: Profile;
  let baseline: Baseline;
  let validator: Validator;
  const provider = createSandboxProvider('local');
  const sources: Record<string, string> = {};

  function mutateAttrs(name: string, path: string, from: string, to: string): ValidationInput {
    const source = sources[path] ?? '';
    if (!source.includes(from)) throw new Error(`${path} lacks ${from}`);
    const candidate: Candidate = { strategy: name, family: 'procedural', seed: 1, patch: '', entities: [], description: name };
    return { candidate, files: [{ path, after: source.replace(from, to) }] };
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-validate-attrs-'));
    tree = join(root, 'tree');
    await mkdir(join(tree, 'tests'), { recursive: true });
    await cp(ATTRS_DIR, join(tree, 'attr'), { recursive: true, filter: (path) => !path.includes('__pycache__') });
    const { readdir, readFile } = await import('node:fs/promises');
    for (const name of (await readdir(join(tree, 'attr'))).filter((file) => file.endsWith('.py'))) {
      sources[`attr/${name}`] = await readFile(join(tree, 'attr', name), 'utf8');
    }
    await writeFile(join(tree, 'tests/test_attrs.py'), ATTRS_TESTS);
    profile = {
      python: '/usr/bin/python3', env: {}, aptPackages: [], install: [], testArgs: ['tests'], testGlobs: ['tests/**'],
      sourceFiles: Object.keys(sources), testFiles: ['tests/test_attrs.py'],
      deselect: [], timeoutMs: 60_000, testTimeoutMs: 60_000, provenance: {},
    };
    baseline = await buildBaseline({ worktree: tree, commit: 'a'.repeat(40), profile, sandboxProvider: provider, home: join(root, 'home') });
    validator = await createValidator({ worktree: tree, profile, baseline, sandboxProvider: provider, concurrency: 1 });
  });

  afterAll(async () => {
    await validator?.close();
    await rm(root, { recursive: true, force: true });
  });

  const reference = (input: ValidationInput) => validateReference({ worktree: tree, profile, baseline, sandboxProvider: provider, ...input });

  it('validates a change inside a function only tests run warm, resumed inside the suite, with the reference verdict', async () => {
    const input = mutateAttrs('validator', 'attr/validators.py', 'if not isinstance(value, self.type):', 'if isinstance(value, self.type):');
    const outcome = await validator.validateWithDetails(input);
    const expected = await reference(input);
    expect(expected).toMatchObject({ kind: 'instance', failToPass: ['tests/test_attrs.py::test_instance_of_accepts', 'tests/test_attrs.py::test_instance_of_rejects'] });
    expect(outcome.mode).toBe('resumed');
    expect(sameVerdict(outcome.verdict, expected)).toBe(true);
  });

  it("sends a change to a function pytest ran when it started the reference way: a fork's pytest was built with the clean code", async () => {
    // pytest's own attrs classes (built when pytest is imported, and only then) get none of
    // their methods: a fresh pytest cannot run, while in a fork only the tests' classes would.
    const input = mutateAttrs('patch class', 'attr/_make.py', 'setattr(cls, name, value)', 'setattr(cls, name + "_", value)');
    const outcome = await validator.validateWithDetails(input);
    const expected = await reference(input);
    expect(expected.kind).toBe('rejected');
    expect(outcome.mode).toBe('reference');
    // The server's own start ran it, which no run's tracer sees: it counts as run outside tests.
    expect(outcome.why).toContain('attr/_make.py:_ClassBuilder._patch_original_class runs at import time');
    expect(sameVerdict(outcome.verdict, expected)).toBe(true);
  });

  it('runs selected tests from the checkpoint before collection with a changed function none of whose code ran yet, and declines one pytest ran when it started', async () => {
    const select = ['tests/test_attrs.py'];
    const only = ['tests/test_attrs.py::test_instance_of_accepts', 'tests/test_attrs.py::test_init_and_eq'];
    const validatorChange = mutateAttrs('validator', 'attr/validators.py', 'if not isinstance(value, self.type):', 'if isinstance(value, self.type):');
    const run = await validator.runSelected(validatorChange.files, select, only);
    if (!run.ok) throw new Error(run.reason);
    expect(Object.fromEntries(Object.entries(run.results).map(([id, result]) => [id, result.outcome]))).toEqual({
      'tests/test_attrs.py::test_instance_of_accepts': 'failed',
      'tests/test_attrs.py::test_init_and_eq': 'passed',
    });
    const classChange = mutateAttrs('patch class', 'attr/_make.py', 'setattr(cls, name, value)', 'setattr(cls, name + "_", value)');
    expect(await validator.runSelected(classChange.files, select, only)).toEqual({
      ok: false,
      reason: expect.stringContaining('attr/_make.py:_ClassBuilder._patch_original_class ran when pytest started'),
    });
  });

  it('sends a change to module-level code of such a file the reference way', async () => {
    const input = mutateAttrs('module level', 'attr/validators.py', '"instance_of",', '');
    const outcome = await validator.validateWithDetails(input);
    expect(outcome.mode).toBe('reference');
    expect(outcome.declined).toEqual(['attr/validators.py is imported by pytest itself when it starts']);
    expect(sameVerdict(outcome.verdict, await reference(input))).toBe(true);
  });
});
