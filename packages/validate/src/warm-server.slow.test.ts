import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import type { SandboxProvider } from '@envgen/sandbox';
import { openPytestSandbox, runPytest } from '@envgen/testrun';
import { WARM_SUPPORT_DIR, startWarmServer } from './warm-server.js';
import type { WarmServer } from './warm-server.js';
import { HYPOTHESIS_DRAWS } from '../../../test/support/hypothesis-draws.js';

const SHAPES = `import functools


def deco(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)

    return wrapper


class Shape:
    def __init__(self, sides):
        self.sides = sides

    def __repr__(self):
        return "Shape(%d)" % self.sides

    @deco
    def area(self, size):
        try:
            if self.sides < 3:
                raise ValueError(
                    "not a polygon: %d sides"
                    % self.sides
                )
        finally:
            size = size + 0
        return size * size
`;

const TESTS = `import pytest

from shapes import Shape


def test_line():
    line = Shape(2)
    assert line.area(
        3,
    ) == 9


class TestShapes:
    @pytest.mark.parametrize("sides", [1, 2])
    def test_degenerate(self, sides):
        assert Shape(sides).area(2) == 4

    def test_compare(self):
        expected = {"sides": 4, "name": "square", "corners": [1, 2, 3, 4]}
        assert {"sides": 4, "name": "square", "corners": [1, 2, 3, 5]} == expected

    def test_ok(self):
        assert Shape(4).area(2) == 4


def test_nested():
    def inner(value):
        if value:
            return Shape(value).area(1)
        else:
            return None

    for value in (4, 1):
        try:
            inner(value)
        except KeyError:
            pass
`;

/** Compares pytest's statement lookup with the server's on every line of large real modules. */
const SAME_STATEMENTS = `
import ast, inspect, unittest.case
from _pytest import python as pytest_python
from _pytest._code import source
from envgen_warm import caches

original = source.get_statement_startend2
caches._install_statement_cache()
assert caches._MIRRORED, "this pytest's statement lookup is not mirrored"
checked = 0
for module in (unittest.case, pytest_python):
    text = inspect.getsource(module)
    tree = ast.parse(text)
    for lineno in range(len(text.splitlines())):
        try:
            expected = original(lineno, tree)
        except IndexError:
            continue
        assert source.get_statement_startend2(lineno, tree) == expected, (module.__name__, lineno)
        checked += 1
print(checked)
`;

/**
 * The last 3000 characters of pytest's output (both sides keep a tail of it) without what
 * differs run to run: timings and object addresses.
 */
function normalize(output: string): string {
  return output.replace(/ in \d+\.\d+s/g, ' in Ns').replace(/0x[0-9a-f]+/g, '0x').trimEnd().slice(-3000);
}

/** A profile that runs `testFile`, whose code under test is shapes.py. */
function shapesProfile(testFile: string): Profile {
  return {
    python: '/usr/bin/python3', env: { PYTHONHASHSEED: '0' }, aptPackages: [], install: [], testArgs: [testFile], testGlobs: ['test_*.py'],
    sourceFiles: ['shapes.py'], testFiles: [testFile], deselect: [], timeoutMs: 60_000, testTimeoutMs: 60_000, provenance: {},
  };
}

/** A warm server over shapes.py and `files` in a fresh directory, its profile running `testFile`: started before a describe's tests, closed after them. */
interface ShapesFixture {
  readonly provider: SandboxProvider;
  readonly profile: Profile;
  root: string;
  server: WarmServer;
  /** Runs `body` with `from` replaced by `to` in shapes.py, then puts shapes.py back. */
  mutated<T>(from: string, to: string, body: () => Promise<T>): Promise<T>;
}

function serveShapes(testFile: string, files: Record<string, string>, options: { prepare?: (root: string) => Promise<void>; preload?: boolean } = {}): ShapesFixture {
  const fixture: ShapesFixture = {
    provider: createSandboxProvider('local'),
    profile: shapesProfile(testFile),
    root: '',
    server: undefined as unknown as WarmServer,
    async mutated(from, to, body) {
      await writeFile(join(fixture.root, 'shapes.py'), SHAPES.replace(from, to));
      try {
        return await body();
      } finally {
        await writeFile(join(fixture.root, 'shapes.py'), SHAPES);
      }
    },
  };
  beforeAll(async () => {
    fixture.root = await mkdtemp(join(tmpdir(), 'envgen-warm-'));
    for (const [path, content] of Object.entries({ 'shapes.py': SHAPES, ...files })) {
      await writeFile(join(fixture.root, path), content);
    }
    await options.prepare?.(fixture.root);
    fixture.server = await startWarmServer({ provider: fixture.provider, worktree: fixture.root, profile: fixture.profile });
    // As the validator starts one: its first request, before any of the project's code runs, holds the code cache.
    if (options.preload) await fixture.server.preload([]);
  });
  afterAll(async () => {
    await fixture.server?.close();
    await rm(fixture.root, { recursive: true, force: true });
  });
  return fixture;
}

/** Outcome by node id. */
function outcomes(results: Record<string, { outcome: string }>): Record<string, string> {
  return Object.fromEntries(Object.entries(results).map(([nodeId, result]) => [nodeId, result.outcome]));
}

const SQUARE = '        return size * size';

describe('the warm server', () => {
  const fixture = serveShapes('test_shapes.py', { 'test_shapes.py': TESTS });

  it('finds the same statement bounds as pytest on every line of real modules', async () => {
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', SAME_STATEMENTS], { env: { ...process.env, PYTHONPATH: WARM_SUPPORT_DIR } });
    expect(Number(stdout.trim())).toBeGreaterThan(2_000);
  });

  it('prints what a fresh pytest with the same arguments (no failure reports) prints, with its caches warm', async () => {
    const { provider, profile, root, server } = fixture;
    const target = await openPytestSandbox(provider, { worktree: root });
    let plain: string;
    try {
      plain = (await runPytest(target, { ...profile, testArgs: [...profile.testArgs, '--tb=no'] }, { timeoutMs: 60_000 })).output;
    } finally {
      await target.close();
    }
    expect(await server.preload(['pytest'])).toEqual({ failed: [], inside: [], startup: [], cache: { hits: 0, added: 0 } });
    // Twice: the second run reads the trees the first one parsed.
    for (let round = 0; round < 2; round++) {
      const warm = await server.run({ timeoutMs: 60_000 });
      expect(Object.values(warm.results).filter((result) => result.outcome === 'failed')).toHaveLength(5);
      expect(normalize(warm.output)).toBe(normalize(plain));
    }
    expect(normalize(plain)).toContain('5 failed, 1 passed');
    expect(normalize(plain)).not.toContain('def test_nested():');
  });

  it('goes on from checkpoints of the clean suite with the results a fresh run has', async () => {
    const { server } = fixture;
    const collected = await server.collect({ checkpoints: ['test_shapes.py::TestShapes::test_compare', 'test_shapes.py::test_missing'], timeoutMs: 60_000, analyze: true });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: ['ok', 'not reached'] });
    expect(collected.ok && Object.keys(collected.clean ?? {})).toHaveLength(6);
    expect(collected.ok && collected.analysis?.outside).toHaveProperty(['shapes.py']);
    const fresh = async (): Promise<Record<string, string>> => outcomes((await server.run({ timeoutMs: 60_000 })).results);
    // A body change of a decorated method: the wrapper made at import keeps calling it.
    // Its lines move, so the code of every function after it is swapped too.
    await fixture.mutated(SQUARE, `        size = size + 1\n${SQUARE}`, async () => {
      const resumed = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect(resumed.declined).toBeUndefined();
      expect(resumed.checkpoint).toBe(0);
      expect(outcomes(resumed.results)).toEqual(await fresh());
      expect(outcomes(resumed.results)['test_shapes.py::TestShapes::test_ok']).toBe('failed');
    });
    // A class-level change cannot be swapped in: the whole suite runs from before collection.
    await fixture.mutated('class Shape:', 'class Shape(object):', async () => {
      const declined = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect(declined).toMatchObject({ checkpoint: -1, declined: 'module- or class-level code differs' });
      expect(outcomes(declined.results)).toEqual(await fresh());
    });
  });
});

/**
 * The failure reason `nodeId` reports in a fresh pytest, in a warm run from scratch, and in a
 * warm run resumed from a checkpoint at `checkpoint` with SQUARE's line of shapes.py replaced by
 * `changed`; with the collect that left the checkpoint and where the resumed run went on from.
 */
async function reasonsEverywhere(fixture: ShapesFixture, nodeId: string, checkpoint: string, changed: string) {
  const { provider, profile, root, server } = fixture;
  const reason = (run: { results: Record<string, { reason?: string }> }) => run.results[nodeId]?.reason;
  const target = await openPytestSandbox(provider, { worktree: root });
  let fresh: string | undefined;
  try {
    fresh = reason(await runPytest(target, profile, { timeoutMs: 60_000 }));
  } finally {
    await target.close();
  }
  const scratch = reason(await server.run({ timeoutMs: 60_000 }));
  const collected = await server.collect({ checkpoints: [checkpoint], timeoutMs: 60_000 });
  const resumed = await fixture.mutated(SQUARE, changed, () => server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } }));
  return { fresh, scratch, collected, resumedFrom: resumed.checkpoint, resumed: reason(resumed) };
}

describe('a warm server over Hypothesis property tests', () => {
  const fixture = serveShapes('test_draws.py', { 'test_draws.py': HYPOTHESIS_DRAWS });

  it('draws the examples a fresh pytest draws, from scratch and from a checkpoint (before, each run its own)', async () => {
    const reasons = await reasonsEverywhere(fixture, 'test_draws.py::test_seen', 'test_draws.py::test_draw', `        size = size + 1\n${SQUARE}`);
    expect(reasons.fresh).toMatch(/^AssertionError: drew \d+: [0-9a-f]{40}/);
    expect(reasons.scratch).toBe(reasons.fresh);
    expect(reasons.collected).toMatchObject({ ok: true, checkpoints: ['ok'] });
    expect(reasons.resumedFrom).toBe(0);
    expect(reasons.resumed).toBe(reasons.fresh);
  });
});

/** Tests that report how deep they may still recurse before Python's recursion limit. */
const HEADROOM = `import sys

from shapes import Shape


def headroom():
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return sys.getrecursionlimit() - depth


def test_first():
    assert headroom() > 0


def test_headroom():
    assert Shape(4).area(2) == 4
    assert False, "headroom %d" % headroom()
`;

describe('a warm server over tests that recurse to the recursion limit', () => {
  const fixture = serveShapes('test_headroom.py', { 'test_headroom.py': HEADROOM }, { preload: true });

  it('gives each test the recursion headroom of a fresh pytest, from scratch and from a checkpoint (before, less by its own frames)', async () => {
    const reasons = await reasonsEverywhere(fixture, 'test_headroom.py::test_headroom', 'test_headroom.py::test_headroom', `        size = size + 0\n${SQUARE}`);
    expect(reasons.fresh).toMatch(/^AssertionError: headroom \d+/);
    expect(reasons.scratch).toBe(reasons.fresh);
    expect(reasons.collected).toMatchObject({ ok: true, checkpoints: ['ok'] });
    expect(reasons.resumedFrom).toBe(0);
    expect(reasons.resumed).toBe(reasons.fresh);
  });
});

/** A test that reports the numbers of the descriptors below 128 it sees (envgen's mark of the running test named): what a test that writes to or closes one by its number meets. */
const DESCRIPTORS = `import os

from shapes import Shape


def opened():
    kinds = []
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            continue
        if fd < 128:
            kinds.append("%d:envgen" % fd if "running-" in target else str(fd))
    return " ".join(kinds)


def test_first():
    assert Shape(4).area(2) == 4


def test_descriptors():
    assert Shape(4).area(2) == 4
    assert False, "descriptors " + opened()
`;

describe('a warm server over a suite that uses descriptors by their numbers (argcomplete writes to 8 and 9 and closes them)', () => {
  const fixture = serveShapes('test_descriptors.py', { 'test_descriptors.py': DESCRIPTORS }, { preload: true });

  it("shows each test the descriptors a fresh pytest's test has, none of envgen's among them, from scratch and from a checkpoint", async () => {
    const reasons = await reasonsEverywhere(fixture, 'test_descriptors.py::test_descriptors', 'test_descriptors.py::test_descriptors', `        size = size + 0\n${SQUARE}`);
    expect(reasons.fresh).toMatch(/^AssertionError: descriptors 0 1 2 /);
    // envgen's own (the plugin's mark of the running test, the server's sockets) sit far above.
    expect(reasons.fresh).not.toMatch(/envgen/);
    expect(reasons.scratch).toBe(reasons.fresh);
    expect(reasons.collected).toMatchObject({ ok: true, checkpoints: ['ok'] });
    expect(reasons.resumedFrom).toBe(0);
    expect(reasons.resumed).toBe(reasons.fresh);
  });
});

describe('a warm server over tests that leave named pipes and sockets in their temporary directories', () => {
  const PIPES = `import os
import socket

from shapes import Shape


def test_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe")


def test_socket(tmp_path):
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(tmp_path / "sock"))


def test_after(tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    assert {path.name for path in base.glob("*/*")} == {"pipe", "sock"}
    assert Shape(4).area(2) == 4
`;
  const fixture = serveShapes('test_pipes.py', { 'test_pipes.py': PIPES }, { preload: true });

  it('keeps its checkpoints after them and its whole clean run, and goes on from them as a fresh run does', async () => {
    const { server } = fixture;
    const collected = await server.collect({ checkpoints: ['test_pipes.py::test_after'], timeoutMs: 60_000, analyze: true });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: ['ok'] });
    expect(collected.ok && Object.values(collected.clean ?? {}).map((result) => result.outcome)).toEqual(['passed', 'passed', 'passed']);
    await fixture.mutated(SQUARE, `${SQUARE} + 1`, async () => {
      const resumed = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect({ checkpoint: resumed.checkpoint, declined: resumed.declined }).toEqual({ checkpoint: 0, declined: undefined });
      expect(outcomes(resumed.results)).toEqual({
        'test_pipes.py::test_fifo': 'passed',
        'test_pipes.py::test_socket': 'passed',
        'test_pipes.py::test_after': 'failed',
      });
    });
  });
});

describe('a warm server over a suite that holds a lock through a file it keeps open', () => {
  const LOCKED = `import fcntl

import pytest

from shapes import Shape


@pytest.fixture(scope="session")
def lock(tmp_path_factory):
    with open(tmp_path_factory.getbasetemp() / "held.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield handle


def test_first(lock):
    assert Shape(4).area(2) == 4


def test_second(lock):
    fcntl.flock(lock, fcntl.LOCK_UN)
    assert Shape(4).area(2) == 4
`;
  const fixture = serveShapes('test_locked.py', { 'test_locked.py': LOCKED }, { preload: true });

  it('declines a checkpoint there, with why: a file opened anew in each run would not hold the lock', async () => {
    const collected = await fixture.server.collect({ checkpoints: ['test_locked.py::test_second'], timeoutMs: 60_000 });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: [expect.stringMatching(/^file descriptor \d+ holds a lock on \/.*\/held\.lock$/)] });
  });
});

describe('a warm server over a test whose thread a bug leaves blocked', () => {
  const WAITS = `import concurrent.futures
import threading

from shapes import Shape


POOLS = []


def test_leaves_its_pool():
    # Its idle worker is woken at exit by the hook concurrent.futures registers with threading.
    POOLS.append(concurrent.futures.ThreadPoolExecutor(1))
    assert POOLS[0].submit(len, "ab").result() == 2


def test_waits():
    done = threading.Event()
    worker = threading.Thread(target=done.wait)
    worker.start()
    if Shape(4).area(2) == 4:
        done.set()
    worker.join(timeout=0.1)
`;
  const fixture = serveShapes('test_waits.py', { 'test_waits.py': WAITS });

  it('ends its run as a fresh pytest does: a timeout, since the interpreter waits for the thread', async () => {
    const { provider, profile, root, server } = fixture;
    expect((await server.run({ timeoutMs: 30_000 })).status).toBe('completed');
    await fixture.mutated(SQUARE, `${SQUARE} + 1`, async () => {
      const target = await openPytestSandbox(provider, { worktree: root });
      try {
        expect((await runPytest(target, profile, { timeoutMs: 4_000 })).status).toBe('timeout');
      } finally {
        await target.close();
      }
      expect((await server.run({ timeoutMs: 4_000 })).status).toBe('timeout');
    });
  });
});

/**
 * A library with a thread pool of its own, started outside Python (as OpenBLAS, the BLAS of
 * numpy's wheels, starts one at import): `use(stops_at_fork)` starts its idle worker when
 * none runs, and the first call with 1 registers a pthread_atfork handler that stops it
 * before each fork, as OpenBLAS's does; the worker starts again at the next use.
 */
const POOL_C = `#include <pthread.h>

static pthread_t worker;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int running, stopping, registered;

static void *idle(void *unused) {
  pthread_mutex_lock(&lock);
  while (!stopping) pthread_cond_wait(&wake, &lock);
  pthread_mutex_unlock(&lock);
  return unused;
}

static void stop(void) {
  if (!running) return;
  pthread_mutex_lock(&lock);
  stopping = 1;
  pthread_cond_signal(&wake);
  pthread_mutex_unlock(&lock);
  pthread_join(worker, 0);
  running = stopping = 0;
}

int use(int stops_at_fork) {
  if (stops_at_fork && !registered) registered = !pthread_atfork(stop, 0, 0);
  if (running) return 0;
  running = 1;
  return pthread_create(&worker, 0, idle, 0);
}
`;

const NATIVE = (stopsAtFork: boolean): string => `import ctypes
import os

from shapes import Shape

POOL = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libpool.so"))
POOL.use(${stopsAtFork ? 1 : 0})


def test_first():
    assert POOL.use(${stopsAtFork ? 1 : 0}) == 0


def test_area():
    assert POOL.use(${stopsAtFork ? 1 : 0}) == 0
    assert Shape(4).area(2) == 4
`;

async function buildPool(root: string): Promise<void> {
  await writeFile(join(root, 'pool.c'), POOL_C);
  await promisify(execFile)('cc', ['-shared', '-fPIC', '-pthread', '-o', join(root, 'libpool.so'), join(root, 'pool.c')]);
}

describe('a warm server over a suite whose library runs threads started outside Python', () => {
  const stopping = serveShapes('test_native.py', { 'test_native.py': NATIVE(true) }, { prepare: buildPool, preload: true });
  const staying = serveShapes('test_native.py', { 'test_native.py': NATIVE(false) }, { prepare: buildPool, preload: true });

  it('keeps its checkpoints where the library stops its threads at fork, and goes on from them as a fresh run does', async () => {
    const { server } = stopping;
    const collected = await server.collect({ checkpoints: ['test_native.py::test_area'], timeoutMs: 60_000, analyze: true });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: ['ok'] });
    await stopping.mutated(SQUARE, `${SQUARE} + 1`, async () => {
      const resumed = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect({ checkpoint: resumed.checkpoint, declined: resumed.declined }).toEqual({ checkpoint: 0, declined: undefined });
      expect(outcomes(resumed.results)).toEqual({ 'test_native.py::test_first': 'passed', 'test_native.py::test_area': 'failed' });
    });
  });

  it('declines them, with why, where a thread the library started would be copied into the fork', async () => {
    const collected = await staying.server.collect({ checkpoints: ['test_native.py::test_area'], timeoutMs: 60_000, analyze: true });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: ['a thread started outside Python is running (its library does not stop it at fork)'] });
  });
});

describe("the warm servers' code cache", () => {
  const provider = createSandboxProvider('local');
  const profile = shapesProfile('test_shapes.py');
  let root: string;
  let cache: string;
  let plain: string;
  const servers: WarmServer[] = [];
  const start = async (): Promise<WarmServer> => {
    const server = await startWarmServer({ provider, worktree: root, profile, codeCache: cache });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-warm-cache-'));
    cache = join(await mkdtemp(join(tmpdir(), 'envgen-code-cache-')), 'cache');
    await writeFile(join(root, 'shapes.py'), SHAPES);
    await writeFile(join(root, 'test_shapes.py'), TESTS);
    const target = await openPytestSandbox(provider, { worktree: root });
    try {
      plain = (await runPytest(target, { ...profile, testArgs: [...profile.testArgs, '--tb=no'] }, { timeoutMs: 60_000 })).output;
    } finally {
      await target.close();
    }
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await rm(root, { recursive: true, force: true });
    await rm(dirname(cache), { recursive: true, force: true });
  });

  it("keeps a server's assertion rewrites for the next, whose runs are a fresh pytest's", async () => {
    const first = await start();
    expect(await first.preload([])).toMatchObject({ cache: { hits: 0, added: 1 } });
    expect(await readdir(cache)).toHaveLength(1);
    const second = await start();
    expect(await second.preload([])).toMatchObject({ cache: { hits: 1, added: 0 } });
    const warm = await second.run({ timeoutMs: 60_000 });
    expect(Object.values(warm.results).filter((result) => result.outcome === 'failed')).toHaveLength(5);
    expect(normalize(warm.output)).toBe(normalize(plain));
  });

  it("takes rewrites only from a server's first request, before any of the project's code ran", async () => {
    await rm(cache, { recursive: true, force: true });
    const server = await start();
    await server.run({ timeoutMs: 60_000 });
    expect(await server.preload([])).toMatchObject({ cache: { hits: 0, added: 0 } });
    expect(await readdir(cache)).toEqual([]);
  });

  it('rewrites again where an entry is not marshalled code, and replaces it', async () => {
    const first = await start();
    await first.preload([]);
    const [key] = await readdir(cache);
    await writeFile(join(cache, key as string), 'not marshal data');
    const second = await start();
    expect(await second.preload([])).toMatchObject({ cache: { hits: 0, added: 1 } });
    expect(normalize((await second.run({ timeoutMs: 60_000 })).output)).toBe(normalize(plain));
    const third = await start();
    expect(await third.preload([])).toMatchObject({ cache: { hits: 1, added: 0 } });
  });
});
