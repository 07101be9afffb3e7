import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Profile } from '@envgen/repo';
import { createSandboxProvider } from '@envgen/sandbox';
import { openPytestSandbox, runPytest } from '@envgen/testrun';
import { WARM_SUPPORT_DIR, startWarmServer } from './warm-server.js';
import type { WarmServer } from './warm-server.js';

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

describe('the warm server', () => {
  let root: string;
  let server: WarmServer;
  const provider = createSandboxProvider('local');
  const profile = shapesProfile('test_shapes.py');

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-warm-reports-'));
    for (const [path, content] of Object.entries({ 'shapes.py': SHAPES, 'test_shapes.py': TESTS })) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), content);
    }
    server = await startWarmServer({ provider, worktree: root, profile });
  });

  afterAll(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  it('finds the same statement bounds as pytest on every line of real modules', async () => {
    const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', SAME_STATEMENTS], { env: { ...process.env, PYTHONPATH: WARM_SUPPORT_DIR } });
    expect(Number(stdout.trim())).toBeGreaterThan(2_000);
  });

  it('prints what a fresh pytest with the same arguments (no failure reports) prints, with its caches warm', async () => {
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
    const outcomes = (results: Record<string, { outcome: string }>): Record<string, string> =>
      Object.fromEntries(Object.entries(results).map(([nodeId, result]) => [nodeId, result.outcome]));
    const collected = await server.collect({ checkpoints: ['test_shapes.py::TestShapes::test_compare', 'test_shapes.py::test_missing'], timeoutMs: 60_000, analyze: true });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: ['ok', 'not reached'] });
    expect(collected.ok && Object.keys(collected.clean ?? {})).toHaveLength(6);
    expect(collected.ok && collected.analysis?.outside).toHaveProperty(['shapes.py']);
    const fresh = async (): Promise<Record<string, string>> => outcomes((await server.run({ timeoutMs: 60_000 })).results);
    try {
      // A body change of a decorated method: the wrapper made at import keeps calling it.
      // Its lines move, so the code of every function after it is swapped too.
      await writeFile(join(root, 'shapes.py'), SHAPES.replace('        return size * size', '        size = size + 1\n        return size * size'));
      const resumed = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect(resumed.declined).toBeUndefined();
      expect(resumed.checkpoint).toBe(0);
      expect(outcomes(resumed.results)).toEqual(await fresh());
      expect(outcomes(resumed.results)['test_shapes.py::TestShapes::test_ok']).toBe('failed');
      // A class-level change cannot be swapped in: the whole suite runs from before collection.
      await writeFile(join(root, 'shapes.py'), SHAPES.replace('class Shape:', 'class Shape(object):'));
      const declined = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect(declined).toMatchObject({ checkpoint: -1, declined: 'module- or class-level code differs' });
      expect(outcomes(declined.results)).toEqual(await fresh());
    } finally {
      await writeFile(join(root, 'shapes.py'), SHAPES);
    }
  });
});

describe('a warm server over tests that leave named pipes and sockets in their temporary directories', () => {
  let root: string;
  let server: WarmServer;
  const provider = createSandboxProvider('local');
  const profile = shapesProfile('test_pipes.py');
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

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-warm-pipes-'));
    await writeFile(join(root, 'shapes.py'), SHAPES);
    await writeFile(join(root, 'test_pipes.py'), PIPES);
    server = await startWarmServer({ provider, worktree: root, profile });
    // As the validator starts one: its first request, before any of the project's code runs, holds the code cache.
    await server.preload([]);
  });

  afterAll(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  it('keeps its checkpoints after them and its whole clean run, and goes on from them as a fresh run does', async () => {
    const collected = await server.collect({ checkpoints: ['test_pipes.py::test_after'], timeoutMs: 60_000, analyze: true });
    expect(collected).toMatchObject({ ok: true, collection: 'ok', checkpoints: ['ok'] });
    expect(collected.ok && Object.values(collected.clean ?? {}).map((result) => result.outcome)).toEqual(['passed', 'passed', 'passed']);
    try {
      await writeFile(join(root, 'shapes.py'), SHAPES.replace('        return size * size', '        return size * size + 1'));
      const resumed = await server.run({ timeoutMs: 60_000, resume: { changed: ['shapes.py'], checkpoint: 0 } });
      expect({ checkpoint: resumed.checkpoint, declined: resumed.declined }).toEqual({ checkpoint: 0, declined: undefined });
      expect(resumed.declined).toBeUndefined();
      expect(Object.fromEntries(Object.entries(resumed.results).map(([nodeId, result]) => [nodeId, result.outcome]))).toEqual({
        'test_pipes.py::test_fifo': 'passed',
        'test_pipes.py::test_socket': 'passed',
        'test_pipes.py::test_after': 'failed',
      });
    } finally {
      await writeFile(join(root, 'shapes.py'), SHAPES);
    }
  });
});

describe('a warm server over a test whose thread a bug leaves blocked', () => {
  let root: string;
  let server: WarmServer;
  const provider = createSandboxProvider('local');
  const profile = shapesProfile('test_waits.py');
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

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'envgen-warm-waits-'));
    await writeFile(join(root, 'shapes.py'), SHAPES);
    await writeFile(join(root, 'test_waits.py'), WAITS);
    server = await startWarmServer({ provider, worktree: root, profile });
  });

  afterAll(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
  });

  it('ends its run as a fresh pytest does: a timeout, since the interpreter waits for the thread', async () => {
    expect((await server.run({ timeoutMs: 30_000 })).status).toBe('completed');
    try {
      await writeFile(join(root, 'shapes.py'), SHAPES.replace('        return size * size', '        return size * size + 1'));
      const target = await openPytestSandbox(provider, { worktree: root });
      try {
        expect((await runPytest(target, profile, { timeoutMs: 4_000 })).status).toBe('timeout');
      } finally {
        await target.close();
      }
      expect((await server.run({ timeoutMs: 4_000 })).status).toBe('timeout');
    } finally {
      await writeFile(join(root, 'shapes.py'), SHAPES);
    }
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
