"""envgen's warm pytest server: imports pytest (and the suite's outside modules) once, then
forks one child per run, so each run skips interpreter start-up and those imports.

Started inside the sandbox as ``python -m envgen_warm SOCKET [--own-pid-namespace]`` with the worktree as the
working directory (so ``sys.path`` is exactly that of ``python -m pytest``). It listens on a
Unix socket in a read-write mount and answers JSON lines, one request at a time:

- ``{"op": "preload", "modules": [name, ...], "rewrite": [relpath, ...], "compile":
  [relpath, ...]}`` imports those modules in the server itself, compiles pytest's assertion
  rewrite of the ``rewrite`` test files and the ``compile`` source files (compiled, never
  executed; a child uses a compiled object only when the file's bytes are still exactly
  those compiled, so a mutated file is compiled afresh; rewriting and compiling are most of
  a small run's cost, since no bytecode is written), then answers ``{"ok": true, "failed": [...], "inside":
  [...]}``; ``inside`` lists modules whose file lies in the worktree (the caller must then
  restart without a preload, or children would see stale project code).
- ``{"op": "run", "args": [...], "env": {...}, "timeout": seconds, "log": path,
  "analysis": path-or-null, "per_test": bool}`` forks a child that runs ``pytest.main(args)`` with ``env``
  added to its environment, stdout/stderr to ``log``, in its own process group and its own
  temporary directory; answers ``{"status": "exited"|"timeout"|"signaled", "code": int|null,
  "seconds": float}``. With ``analysis``, the child also writes there
  ``{"modules": [...], "outside": {relpath: [co_firstlineno, ...]}, "coverage": {nodeid:
  {relpath: [...]}}, "spawning": [nodeid, ...]}``: the modules imported from outside the
  worktree; the code objects of worktree files that ran outside any test's own protocol
  (imports, collection, hooks) or while setting up a fixture shared by several tests
  (class, module, package or session scope); with ``per_test``, those each test ran (else
  ``coverage`` is empty, and the run costs far less); and the tests that started processes
  (code run there is invisible to the tracer).

- ``{"op": "collect", "args": [...], "env": {...}, "timeout": seconds, "log": path,
  "results": path, "analysis": path-or-null, "checkpoints": [nodeid, ...]}`` forks a
  collector that runs the clean suite once and leaves checkpoints (see "checkpoints of the
  clean suite" below): one before collection and one at the start of each test named;
  writes the clean run's results to ``results`` (and, with ``analysis``, what a ``run``
  with ``analysis`` writes, except that a shared fixture's set-up counts for the test that
  needs it first) and answers ``{"ok": bool, "why": str, "digest": sha256 of the collected node
  ids joined by newlines, "ran": bool, "collection": status, "checkpoints": [status, ...]}``
  (a status is "ok" or why there is no such checkpoint).
- A ``run`` request with ``"precollected": {"changed": [relpath, ...], "checkpoint": i}``
  runs the whole suite from the latest checkpoint at or before ``i`` (-1: the one before
  collection) and answers as above plus ``"checkpoint"`` (the one used) or, when none could,
  runs it from scratch and says why in ``"declined"``.

The server never imports the project's own modules, so every child imports the files as
they are on disk when it starts.
"""

import json
import marshal
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import types

import pytest

_LINE_LIMIT = 1 << 20
# How long past a run's own deadline the server waits for a checkpoint's answer.
_COLLECTED_GRACE = 20.0
# Set by ``--own-pid-namespace``: the host knows the sandbox is a bubblewrap jail.
_OWN_PID_NAMESPACE = False


def _inside(path, root):
    if not path or path.startswith("<"):
        return False
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _module_file(module):
    return getattr(module, "__file__", None) or ""


class _SuiteTracer:
    """Which code objects run where: outside (imports, collection, hooks, and the set-up of
    fixtures shared by several tests) and, with ``per_test``, in each test's own protocol.
    One C profiler; with ``per_test`` it runs throughout and at each boundary its calls go
    to the current bucket (building its stats is most of the cost), else it runs only
    outside tests and its stats are read once. Also notes the tests that start processes,
    whose code the profiler cannot see."""

    def __init__(self, per_test, shared_outside=True):
        import _lsprof

        self.per_test = per_test
        # Whether the set-up of fixtures shared by several tests counts as outside them (else
        # it counts for the test whose set-up runs it).
        self.shared_outside = shared_outside
        self.active = True
        self.profiler = _lsprof.Profiler()
        self.current = None
        self.buckets = {None: set()}
        self.spawning = set()

    def start(self):
        import subprocess

        os.register_at_fork(before=self._note_spawn)
        original = subprocess.Popen._execute_child
        tracer = self

        def execute_child(self, *args, **kwargs):
            tracer._note_spawn()
            return original(self, *args, **kwargs)

        subprocess.Popen._execute_child = execute_child
        self.profiler.enable(subcalls=False, builtins=False)

    def _note_spawn(self):
        if self.current is not None:
            self.spawning.add(self.current)

    def silence(self):
        """Stops tracing for good (in a forked process that must run as if untraced)."""
        self.active = False
        self.profiler.disable()

    def switch(self, key):
        if not self.active:
            return
        self.profiler.disable()
        if self.per_test:
            self.collect()
        self.current = key
        if self.per_test or key is None:
            self.profiler.enable(subcalls=False, builtins=False)

    def collect(self):
        """Moves the calls profiled so far to the current bucket."""
        codes = self.buckets.setdefault(self.current, set())
        codes.update(entry.code for entry in self.profiler.getstats() if not isinstance(entry.code, str))
        self.profiler.clear()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.switch(item.nodeid)
        try:
            yield
        finally:
            self.switch(None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        shared = self.shared_outside and getattr(fixturedef, "scope", "function") != "function"
        previous = self.current
        if shared:
            self.switch(None)
        try:
            yield
        finally:
            if shared:
                self.switch(previous)


def _lines_by_file(codes, root):
    files = {}
    for code in codes:
        if _inside(code.co_filename, root):
            rel = os.path.relpath(os.path.realpath(code.co_filename), root).replace(os.sep, "/")
            files.setdefault(rel, set()).add(code.co_firstlineno)
    return {path: sorted(lines) for path, lines in sorted(files.items())}


def _write_analysis(path, tracer, root):
    tracer.switch(None)
    tracer.profiler.disable()
    tracer.collect()
    modules = sorted(
        name
        for name, module in list(sys.modules.items())
        if module is not None and not name.startswith("__") and not _inside(_module_file(module), root)
    )
    payload = {
        "modules": modules,
        "outside": _lines_by_file(tracer.buckets.get(None, ()), root),
        "coverage": {key: _lines_by_file(codes, root) for key, codes in tracer.buckets.items() if key is not None},
        "spawning": sorted(tracer.spawning),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)


def _run_child(request, root):
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    scratch = tempfile.mkdtemp(prefix="envgen-run-")
    os.environ.update(request.get("env") or {})
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = None
    sys.argv = ["pytest"] + list(request["args"])
    tracer = None
    plugins = []
    if request.get("analysis"):
        tracer = _SuiteTracer(bool(request.get("per_test")))
        plugins.append(tracer)
        tracer.start()
    code = pytest.main(list(request["args"]), plugins=plugins)
    if tracer is not None:
        _write_analysis(request["analysis"], tracer, root)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def _wait(pid, timeout):
    """Waits for the child; kills its process group at the deadline."""
    started = time.monotonic()
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
    finally:
        os.close(fd)
    timed_out = not ready
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    seconds = time.monotonic() - started
    if timed_out:
        return {"status": "timeout", "code": None, "seconds": seconds}
    if os.WIFEXITED(status):
        return {"status": "exited", "code": os.WEXITSTATUS(status), "seconds": seconds}
    return {"status": "signaled", "code": None, "signal": os.WTERMSIG(status), "seconds": seconds}


def _run(request, root):
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            _run_child(request, root)
        except BaseException:  # noqa: BLE001 - a child must never return into the server loop
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        os._exit(70)
    answer = _wait_group(pid, float(request["timeout"]))
    _kill_others()
    return answer


def _wait_group(pid, timeout):
    """Waits for a forked child (in a process group of its own) and kills what is left of
    its group."""
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    answer = _wait(pid, timeout)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return answer


def _kill_others():
    """In a bubblewrap jail of its own (the server is pid 2 under bwrap's init), kills every
    other process: nothing a run started (grandchildren, daemons that left the child's
    group) outlives it to touch the tree while the host restores it. Elsewhere (docker,
    no sandbox) only the child's process group is killed."""
    if not _OWN_PID_NAMESPACE or os.getpid() != 2 or os.getppid() != 1:
        return
    keep = {1, os.getpid()} | {checkpoint.pid for checkpoint in _CHECKPOINTS if checkpoint.ready}
    for _ in range(3):
        others = [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in keep]
        if not others:
            return
        for other in others:
            try:
                os.kill(other, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for other in others:
            try:
                os.waitpid(other, os.WNOHANG)
            except ChildProcessError:
                pass
        time.sleep(0.005)


_REWRITTEN = {}


def _install_rewrite_cache():
    """Serves pytest's assertion rewrite of unchanged test files from the server's cache."""
    from _pytest.assertion import rewrite

    original = rewrite._rewrite_test

    def cached_rewrite_test(fn, config):
        entry = _REWRITTEN.get(str(fn))
        if entry is not None and not config.getini("enable_assertion_pass_hook"):
            source, code = entry
            stat = os.stat(fn)
            if fn.read_bytes() == source:
                return stat, code
        return original(fn, config)

    rewrite._rewrite_test = cached_rewrite_test


_COMPILED = {}
# Loader paths whose module code came from ``_COMPILED`` in this process (the collector's
# functions then hold exactly those code objects).
_SERVED = set()


def _install_code_cache():
    """Serves the code of unchanged source files from the server's cache."""
    from importlib import machinery

    original = machinery.SourceFileLoader.source_to_code

    def source_to_code(self, data, path, *, _optimize=-1):
        entry = _COMPILED.get(path)
        if entry is not None and _optimize == -1 and bytes(data) == entry[0]:
            _SERVED.add(path)
            return entry[1]
        return original(self, data, path, _optimize=_optimize)

    machinery.SourceFileLoader.source_to_code = source_to_code


# sha256 of the text of ``_pytest._code.source.get_statement_startend2`` in the pytest
# versions whose logic ``_statement_starts`` mirrors (7.x).
_MIRRORED_STARTEND = {"798d87ef23329bbe8bad0555c7dd5f23df2eb73fcc43793fe7ef975e701319c8"}
_PARSED = {}
_WALKED = {}
_STARTS = {}
_MIRRORED = []


def _parse_cached(text, filename="<unknown>", mode="exec", *args, **kwargs):
    import ast

    if args or kwargs or not isinstance(text, str):
        return ast.parse(text, filename, mode, *args, **kwargs)
    key = (text, filename, mode)
    tree = _PARSED.get(key)
    if tree is None:
        tree = _PARSED[key] = ast.parse(text, filename, mode)
    return tree


def _walk_cached(node):
    import ast

    entry = _WALKED.get(id(node))
    if entry is None or entry[0] is not node:
        entry = _WALKED[id(node)] = (node, list(ast.walk(node)))
    return iter(entry[1])


def _statement_starts(node):
    """The sorted 0-based first lines of the statements, decorators, except handlers and
    ``finally``/``else`` parts of a tree, as pytest's ``get_statement_startend2`` computes
    them on each call; computed once per tree."""
    import ast

    entry = _STARTS.get(id(node))
    if entry is None or entry[0] is not node:
        values = []
        for x in ast.walk(node):
            if isinstance(x, (ast.stmt, ast.ExceptHandler)):
                if isinstance(x, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    values.extend(d.lineno - 1 for d in x.decorator_list)
                values.append(x.lineno - 1)
                for name in ("finalbody", "orelse"):
                    part = getattr(x, name, None)
                    if part:
                        values.append(part[0].lineno - 2)
        values.sort()
        entry = _STARTS[id(node)] = (node, values)
    return entry[1]


def _statement_startend(lineno, node):
    from bisect import bisect_right

    values = _statement_starts(node)
    index = bisect_right(values, lineno)
    return values[index - 1], values[index] if index < len(values) else None


def _install_statement_cache():
    """Makes pytest's failure reports cheap without changing a byte of them. For each
    traceback entry pytest parses the entry's whole file again and walks the whole tree
    (``_pytest._code.source``): on a bug that fails a hundred tests of a large test module
    that is seconds per run, most of a warm run. With this, each source text is parsed once
    and each tree walked once (the trees are only read; the server parses the clean files
    ahead, see ``_prepare_reports``), and where pytest's statement lookup is a version
    ``_statement_starts`` mirrors, its statement lines are computed once per tree. Only the
    ``ast`` that module sees is wrapped: the reports, with the reprs of locals and arguments
    in them, are unchanged."""
    import ast
    import hashlib
    import inspect
    import types

    from _pytest._code import source as pytest_source

    if getattr(pytest_source, "ast", None) is not ast:
        return
    cached = types.ModuleType("ast")
    cached.__dict__.update(ast.__dict__)
    cached.parse = _parse_cached
    cached.walk = _walk_cached
    pytest_source.ast = cached
    try:
        text = inspect.getsource(pytest_source.get_statement_startend2)
    except (AttributeError, OSError, TypeError):
        return
    if hashlib.sha256(text.encode("utf-8")).hexdigest() in _MIRRORED_STARTEND:
        pytest_source.get_statement_startend2 = _statement_startend
        _MIRRORED.append(True)


def _prepare_reports(paths, root):
    """Parses and walks the files as pytest's reports will read them (lines without trailing
    whitespace, see ``_pytest._code.source.findsource``), for every child to reuse while a
    file is unchanged (the cache is keyed by the whole text), and fills ``inspect``'s map of
    module files (which each report entry consults, and which a child would otherwise build
    from every module the server imported; it is refreshed for modules imported later)."""
    import inspect
    import tokenize

    inspect.getmodule(_prepare_reports.__code__)
    for rel in paths:
        try:
            with tokenize.open(os.path.join(root, rel)) as handle:
                text = "\n".join(line.rstrip() for line in handle.readlines())
            tree = _parse_cached(text, "source", "exec")
            if _MIRRORED:
                _statement_starts(tree)
            else:
                _walk_cached(tree)
        except (OSError, SyntaxError, ValueError):
            continue


def _sources(paths, root):
    """(relative path, absolute path, bytes) of each readable file."""
    for rel in paths:
        path = os.path.join(root, rel)
        try:
            with open(path, "rb") as handle:
                yield rel, path, handle.read()
        except OSError:
            continue


def _compile(paths, root):
    for rel, path, source in _sources(paths, root):
        # The loader names a module by the sys.path entry it was found through.
        for name in (path, rel):
            try:
                _COMPILED[name] = (source, compile(source, name, "exec", dont_inherit=True))
            except (SyntaxError, ValueError):  # the child compiles (and fails) on its own
                break


def _rewrite(paths, root):
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    for _, path, source in _sources(paths, root):
        try:
            tree = ast.parse(source, filename=path)
            rewrite_asserts(tree, source, path, None)
            _REWRITTEN[path] = (source, compile(tree, path, "exec", dont_inherit=True))
        except (SyntaxError, ValueError):  # pytest rewrites (and reports) it in the child
            continue


def _preload(request, root):
    _rewrite(request.get("rewrite") or [], root)
    _compile(request.get("compile") or [], root)
    failed = []
    for name in request.get("modules") or []:
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - a module that cannot load in the server loads in the child
            failed.append(name)
    inside = sorted(
        name for name, module in list(sys.modules.items()) if module is not None and _inside(_module_file(module), root)
    )
    _prepare_reports((request.get("rewrite") or []) + (request.get("compile") or []), root)
    return {"ok": True, "failed": failed, "inside": inside}


# -- checkpoints of the clean suite ------------------------------------------------------
#
# The collector (forked from the server) runs pytest over the clean suite once and leaves
# checkpoints on its way: processes paused with the state the clean run had there (its
# scratch directory copied aside), each serving runs by forking a child that goes on from
# that point. The first checkpoint is taken when configuration is done and collection is
# about to start: a child of it imports the files as they are on disk, collects and runs the
# whole suite, as a fresh pytest would, minus start-up and configuration. The others are
# taken at the start of chosen tests' protocols. A change inside function bodies that never
# run at import, during collection or in shared fixture set-up cannot show before the first
# test that runs one of those functions: every test before it runs exactly as on the clean
# tree. So a run resumes from the last checkpoint at or before that test: the child swaps
# the changed functions' code objects for those of the changed file compiled afresh
# (exactly the code an import of it would give) and lets pytest go on with that test and
# every later one, through its session finish, as the whole suite would; results of the
# tests before the checkpoint are the clean run's. Whatever a checkpoint cannot prove
# equivalent it declines, and the server runs the whole suite the ordinary way.

_EXIT_DECLINED = 75
_CO_NEWLOCALS = 0x0002


class _Decline(Exception):
    """A checkpoint cannot run this request exactly as a fresh pytest would."""


def _qualname(code):
    return getattr(code, "co_qualname", code.co_name)


def _code_nodes(code, path=(), import_time=True):
    """(position, code, import_time) of a module code and every code object nested in it;
    import-time codes are the module's and its class bodies' (what ran when it was imported)."""
    yield path, code, import_time
    children = [const for const in code.co_consts if isinstance(const, types.CodeType)]
    for index, child in enumerate(children):
        yield from _code_nodes(child, path + (index,), import_time and not child.co_flags & _CO_NEWLOCALS)


def _const_key(const):
    if isinstance(const, types.CodeType):
        return ("code", _qualname(const))
    try:
        return ("const", marshal.dumps(const))
    except ValueError:
        return ("repr", type(const).__name__, repr(const))


def _shape(code):
    """A code object without its positions: what it does, not where its lines are."""
    return (
        code.co_code,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_flags,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_stacksize,
        getattr(code, "co_exceptiontable", b""),
        tuple(_const_key(const) for const in code.co_consts),
    )


def _same_function_face(old, new):
    """True when a function object made from ``new`` would look like one made from ``old``
    (name, flags, closure, docstring), so swapping its code is all an import would change."""
    return (
        _qualname(old) == _qualname(new)
        and old.co_name == new.co_name
        and old.co_flags == new.co_flags
        and old.co_freevars == new.co_freevars
        and [_const_key(const) for const in old.co_consts[:1]] == [_const_key(const) for const in new.co_consts[:1]]
    )


def _changed_codes(old_tree, new_tree):
    """(old code, its counterpart or None) for every code object of the clean compile of a
    file that the changed compile does not reproduce exactly (behaviour or positions);
    declines when import-time code differs beyond line positions."""
    new_nodes = {path: code for path, code, _ in _code_nodes(new_tree)}
    changed = []
    for path, old, import_time in _code_nodes(old_tree):
        new = new_nodes.get(path)
        if import_time:
            if new is None or _qualname(new) != _qualname(old) or _shape(new) != _shape(old):
                raise _Decline("module- or class-level code differs")
        elif new != old:
            changed.append((old, new))
    return changed


def _plan_code_swap(changed):
    """(function, new code) for every live function that runs one of the ``changed`` codes;
    declines when one has no same-faced counterpart, or when anything but a function (a
    suspended generator, a container) holds such a code."""
    import gc

    counterparts = {id(old): new for old, new in changed}
    olds = [old for old, _ in changed]
    swaps = []
    for holder in gc.get_referrers(*olds):
        # Ours; the constants of an enclosing code object; a frame that finished (one kept
        # by a traceback: a running frame is not reported, a suspended one is its generator's).
        if holder is olds or holder is changed or isinstance(holder, (tuple, types.FrameType)):
            continue
        if type(holder) is not types.FunctionType:
            raise _Decline("a %s holds changed code" % type(holder).__name__)
        old = holder.__code__
        new = counterparts[id(old)]
        if new is None or not _same_function_face(old, new):
            raise _Decline("%s changed its name, flags, closure or docstring" % _qualname(old))
        swaps.append((holder, new))
    return swaps


def _open_fds():
    try:
        return {int(entry) for entry in os.listdir("/proc/self/fd")}
    except OSError:
        return set()


def _identity(fd_or_path):
    try:
        info = os.fstat(fd_or_path) if isinstance(fd_or_path, int) else os.stat(fd_or_path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _process_parents():
    """pid -> parent pid of every process this one can see."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as handle:
                parents[int(entry)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return parents


def _tree_state(root):
    """(path, size, mtime, inode, mode) of every entry under ``root``, links not followed."""
    entries = []
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            entries.append((path, info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode))
    return sorted(entries)


def _remove_tree(path):
    def writable(function, target, _):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        except OSError:
            pass
        function(target)

    if os.path.lexists(path):
        shutil.rmtree(path, onerror=writable)


class _Collector:
    """The collector's pytest plugin (see above). One object, three roles after forks: the
    ``runner`` of the clean suite, a ``checkpoint`` serving runs, and a ``child`` run."""

    def __init__(self, control, channels, checkpoints, root, scratch, vault, results):
        # channels[0] serves the checkpoint before collection, channels[1 + i] the one at
        # checkpoints[i].
        self.control = control
        self.channels = channels
        self.root = root
        self.scratch = scratch
        self.vault = vault
        self.results = results
        self.wanted = {nodeid: index + 1 for index, nodeid in enumerate(checkpoints)}
        self.statuses = ["not reached"] * (len(checkpoints) + 1)
        self.role = "runner"
        self.index = None
        self.session = None
        self.digest = None
        self.positions = {}
        self.tree = None
        self.forked = set()
        self.channel = None
        self.reader = None
        self.copy = None
        self.files = None
        self.inside_of = {}
        self.tracer = None
        self.analysis = None
        self.fds_before = _open_fds()
        self.allowed = {_identity(fd) for fd in (0, 1, 2)} | {_identity(os.devnull)}

    # -- the clean run ------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection(self, session):
        if self.role == "runner":
            self.session = session
            self.tree = _tree_state(self.root)
            self._checkpoint(0)
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session):
        if self.role == "runner":
            import hashlib

            self.digest = hashlib.sha256("\n".join(item.nodeid for item in session.items).encode("utf-8")).hexdigest()
            for module in list(sys.modules.values()):
                self._inside(_module_file(module))
            why = self._unshareable()
            if why is None and _tree_state(self.root) != self.tree:
                why = "collection changed the tree"
            if why is not None:
                for index in range(1, len(self.statuses)):
                    self.statuses[index] = why
                self._finish(ran=False)
            for item in session.items:
                index = self.wanted.get(item.nodeid)
                if index is not None:
                    self.positions[id(item)] = index
        yield
        if self.role == "runner":
            self._finish(ran=True)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if self.role == "runner":
            index = self.positions.get(id(item))
            if index is not None:
                self._checkpoint(index)
        yield

    def _finish(self, ran):
        """Reports the checkpoints and the clean run (its results written where the server
        asked, when it ran) and exits."""
        answer = {"ok": True, "digest": self.digest, "checkpoints": self.statuses, "ran": ran}
        if ran and self.tracer is not None:
            _write_analysis(self.analysis, self.tracer, self.root)
        if ran:
            plugin = self.session.config.pluginmanager.get_plugin("envgen-recorder")
            plugin.recorder.results_path = self.results
            plugin.recorder.write()
        sys.stdout.flush()
        sys.stderr.flush()
        self.control.sendall((json.dumps(answer) + "\n").encode("utf-8"))
        os._exit(0)

    def _capture_fds(self):
        """File descriptors of pytest's global capture (tmpfiles, saved originals)."""
        capman = self.session.config.pluginmanager.getplugin("capturemanager")
        multi = getattr(capman, "_global_capturing", None)
        fds = set()
        for capture in (getattr(multi, "in_", None), getattr(multi, "out", None), getattr(multi, "err", None)):
            for name in ("targetfd_save", "targetfd_invalid"):
                value = getattr(capture, name, None)
                if isinstance(value, int):
                    fds.add(value)
            try:
                fds.add(capture.tmpfile.fileno())
            except (AttributeError, OSError, ValueError):
                pass
        return fds

    def _unshareable(self):
        """Why the state here cannot be shared by forked children, or None."""
        import threading

        if threading.active_count() != 1:
            return "a thread is running"
        try:
            if len(os.listdir("/proc/self/task")) != 1:
                return "a thread is running"
        except OSError:
            pass
        parents = _process_parents()
        if any(parent == os.getpid() and pid not in self.forked for pid, parent in parents.items()):
            return "a process started by a test is running"
        if _OWN_PID_NAMESPACE and set(parents) - self.forked - {1, os.getpid(), os.getppid()}:
            return "a process started by a test is running"
        known = self._capture_fds()
        for fd in sorted(_open_fds() - self.fds_before - known):
            identity = _identity(fd)
            if identity is not None and identity not in self.allowed:
                try:
                    target = os.readlink("/proc/self/fd/%d" % fd)
                except OSError:
                    target = "?"
                return "file descriptor %d is open (%s)" % (fd, target)
        if self.session.shouldfail or self.session.shouldstop:
            return "the session is stopping"
        if self.session.config.pluginmanager.get_plugin("envgen-recorder") is None:
            return "envgen's results plugin is not active"
        return None

    def _checkpoint(self, index):
        why = self._unshareable()
        if why is None and _tree_state(self.root) != self.tree:
            why = "a test changed the tree"
            self.positions.clear()
            for later in range(index, len(self.statuses)):
                self.statuses[later] = why
        if why is not None:
            self.statuses[index] = why
            return
        copy = None
        if os.listdir(self.scratch):
            copy = os.path.join(self.vault, str(index))
            shutil.copytree(self.scratch, copy, symlinks=True)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.role = "checkpoint"
            self.index = index
            if self.tracer is not None:
                self.tracer.silence()
            self.channel = self.channels[index]
            self.copy = copy
            for other, channel in enumerate(self.channels):
                if other != index and channel is not None:
                    channel.close()
            self.control.close()
            self.reader = self.channel.makefile("rb")
            self._send({"ok": True, "pid": os.getpid()})
            self._serve()
            return  # a child: pytest goes on with this test and every later one
        self.forked.add(pid)
        self.channels[index].close()
        self.channels[index] = None
        self.statuses[index] = "ok"

    # -- a checkpoint -------------------------------------------------------------------

    def _send(self, answer):
        self.channel.sendall((json.dumps(answer) + "\n").encode("utf-8"))

    def _inside(self, filename):
        """The real path of a worktree file named by a module or code object, or None."""
        try:
            return self.inside_of[filename]
        except KeyError:
            pass
        real = os.path.realpath(os.path.join(self.root, filename)) if filename and not filename.startswith("<") else ""
        inside = real if real == self.root or real.startswith(self.root + os.sep) else None
        self.inside_of[filename] = inside
        return inside

    def _index_files(self):
        """Worktree files imported here: the warm code cache's keys their code came from, or
        why their code cannot be swapped (the module was loaded some other way)."""
        files = {}
        for key in _SERVED:
            real = self._inside(key)
            if real is not None:
                files.setdefault(real, {"keys": [], "unsafe": None})["keys"].append(key)
        for name, module in list(sys.modules.items()):
            real = self._inside(_module_file(module)) if module is not None else None
            if real is None:
                continue
            entry = files.setdefault(real, {"keys": [], "unsafe": None})
            if getattr(getattr(module, "__spec__", None), "origin", None) not in entry["keys"]:
                entry["unsafe"] = "%s was imported without the warm code cache" % name
        return files

    def _plan(self, changed):
        if self.files is None:
            self.files = self._index_files()
        swaps = []
        for rel in changed:
            real = os.path.realpath(os.path.join(self.root, rel))
            entry = self.files.get(real)
            if entry is None:
                continue  # never imported here: a child imports it from disk
            if self.index == 0:
                # Before collection only a conftest imports project files, and what ran then
                # ran unchanged: a child must import the changed file afresh.
                raise _Decline("%s was imported before collection" % rel)
            if entry["unsafe"]:
                raise _Decline(entry["unsafe"])
            try:
                with open(real, "rb") as handle:
                    data = handle.read()
            except OSError as error:
                raise _Decline("cannot read %s: %s" % (rel, error))
            for key in entry["keys"]:
                clean, old_tree = _COMPILED[key]
                if data == clean:
                    continue
                try:
                    new_tree = compile(data, key, "exec", dont_inherit=True)
                except (SyntaxError, ValueError):
                    raise _Decline("%s does not compile" % rel)
                changed_codes = _changed_codes(old_tree, new_tree)
                if changed_codes:
                    swaps.extend(_plan_code_swap(changed_codes))
        return swaps

    def _serve(self):
        """Answers run requests until the server goes; returns only in a forked child."""
        while True:
            line = self.reader.readline()
            if not line:
                os._exit(0)
            request = json.loads(line)
            try:
                swaps = self._plan(request.get("changed") or [])
            except _Decline as declined:
                self._send({"declined": str(declined)})
                continue
            try:
                _remove_tree(self.scratch)
                if self.copy is None:
                    os.mkdir(self.scratch, 0o700)
                else:
                    shutil.copytree(self.copy, self.scratch, symlinks=True)
            except OSError as error:
                self._send({"declined": "cannot restore the scratch directory: %s" % error, "retire": True})
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                self.role = "child"
                self._enter_child(request, swaps)
                return
            answer = _wait_group(pid, float(request["timeout"]))
            if answer.get("code") == _EXIT_DECLINED:
                answer = {"declined": "the child could not take the checkpoint over"}
            self._send(answer)

    def _enter_child(self, request, swaps):
        """Makes a forked child the run the request asks for; exits when it cannot."""
        try:
            os.setpgid(0, 0)
            self.reader.close()
            self.channel.close()
            config = self.session.config
            log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            targets = {1, 2}
            capman = config.pluginmanager.getplugin("capturemanager")
            multi = getattr(capman, "_global_capturing", None)
            for capture in (getattr(multi, "out", None), getattr(multi, "err", None)):
                saved = getattr(capture, "targetfd_save", None)
                if isinstance(saved, int):
                    targets.add(saved)
                tmpfile = getattr(capture, "tmpfile", None)
                if tmpfile is not None and hasattr(tmpfile, "truncate"):
                    tmpfile.seek(0)
                    tmpfile.truncate()
            for fd in targets:
                os.dup2(log, fd)
            os.close(log)
            os.environ.update(request.get("env") or {})
            plugin = config.pluginmanager.get_plugin("envgen-recorder")
            plugin.recorder.results_path = os.environ["ENVGEN_RESULTS"]
            for function, code in swaps:
                function.__code__ = code
            import linecache

            for rel in request.get("changed") or []:
                for key in (os.path.join(self.root, rel), os.path.realpath(os.path.join(self.root, rel))):
                    linecache.cache.pop(key, None)
        except BaseException:  # noqa: BLE001 - the server runs the request the ordinary way
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
            os._exit(_EXIT_DECLINED)


def _collector_main(control, channels, request, root, scratch, vault):
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.environ.update(request.get("env") or {})
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = None
    args = list(request["args"])
    sys.argv = ["pytest"] + args
    collector = _Collector(control, channels, request.get("checkpoints") or [], root, scratch, vault, request["results"])
    plugins = [collector]
    if request.get("analysis"):
        # The clean run is also the analysis run: what runs outside tests' own protocols (a
        # shared fixture's set-up runs in the test that needs it first, and the run goes on
        # from before that test anyway).
        collector.tracer = _SuiteTracer(False, shared_outside=False)
        collector.analysis = request["analysis"]
        plugins.append(collector.tracer)
        collector.tracer.start()
    code = pytest.main(args, plugins=plugins)
    sys.stdout.flush()
    sys.stderr.flush()
    if collector.role == "runner":
        why = "pytest ended (exit %d) before its test loop" % int(code)
        control.sendall((json.dumps({"ok": False, "why": why}) + "\n").encode("utf-8"))
    os._exit(int(code))


class _Peer:
    """The server's end of a socket to the collector or a checkpoint (JSON lines)."""

    def __init__(self, index, channel):
        self.index = index
        self.channel = channel
        self.buffer = b""
        self.pid = None
        self.ready = False

    def receive(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.channel], [], [], remaining)
            if not readable:
                return None
            try:
                chunk = self.channel.recv(1 << 16)
            except OSError:
                return None
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def ask(self, payload, timeout):
        """The answer, or None when the peer failed (it is then stopped)."""
        try:
            self.channel.sendall((json.dumps(payload) + "\n").encode("utf-8"))
        except OSError:
            self.stop()
            return None
        answer = self.receive(timeout)
        if answer is None:
            self.stop()
        return answer

    def stop(self):
        self.ready = False
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.channel.close()


_CHECKPOINTS = []
_COLLECTOR_DIRS = []


def _stop_checkpoints():
    for checkpoint in _CHECKPOINTS:
        checkpoint.stop()
    _CHECKPOINTS.clear()
    for path in _COLLECTOR_DIRS:
        _remove_tree(path)
    _COLLECTOR_DIRS.clear()


def _collect(request, root, connection):
    """Runs the clean suite in a collector that leaves checkpoints before collection and at
    the requested tests; answers ``{"ok", "why", "digest", "ran", "collection": status,
    "checkpoints": [status per requested test]}`` ("ok" or why there is none)."""
    _stop_checkpoints()
    nodeids = [None] + list(request.get("checkpoints") or [])
    scratch = tempfile.mkdtemp(prefix="envgen-collect-")
    vault = tempfile.mkdtemp(prefix="envgen-vault-")
    _COLLECTOR_DIRS.extend([scratch, vault])
    control, control_theirs = socket.socketpair()
    pairs = [socket.socketpair() for _ in nodeids]
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            control.close()
            for ours, _ in pairs:
                ours.close()
            os.close(connection.detach())
            os.setpgid(0, 0)
            _collector_main(control_theirs, [theirs for _, theirs in pairs], request, root, scratch, vault)
        except BaseException:  # noqa: BLE001 - never return into the server loop
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        os._exit(70)
    control_theirs.close()
    for _, theirs in pairs:
        theirs.close()
    runner = _Peer(None, control)
    answer = runner.receive(float(request["timeout"]))
    runner.pid = pid
    runner.stop()
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    checkpoints = [_Peer(index, ours) for index, (ours, _) in enumerate(pairs)]
    _CHECKPOINTS.extend(checkpoints)
    if answer is None or not answer.get("ok"):
        _stop_checkpoints()
        return {"ok": False, "why": (answer or {}).get("why") or "the collector did not answer"}
    statuses = list(answer.get("checkpoints") or [])
    for checkpoint, status in zip(checkpoints, statuses):
        if status != "ok":
            checkpoint.stop()
            continue
        hello = checkpoint.receive(_COLLECTED_GRACE)
        if hello is None or not hello.get("ok"):
            checkpoint.stop()
            statuses[checkpoint.index] = "did not answer"
            continue
        checkpoint.pid = int(hello["pid"])
        checkpoint.ready = True
    _CHECKPOINTS[:] = [checkpoint for checkpoint in checkpoints if checkpoint.ready]
    _kill_others()
    return {"ok": True, "digest": answer.get("digest"), "ran": bool(answer.get("ran")), "collection": statuses[0], "checkpoints": statuses[1:]}


def _run_collected(request):
    """A checkpoint's answer to a run request: from the latest at or before the one asked for
    (-1 is the one before collection, i the one at the i-th requested test), or when that
    one declines, from the one before collection; or (None, why) when the server must run
    the whole suite itself."""
    wanted = int(request["precollected"].get("checkpoint", -1)) + 1
    usable = [checkpoint for checkpoint in _CHECKPOINTS if checkpoint.ready and checkpoint.index <= wanted]
    if not usable:
        return None, "no checkpoint"
    latest = max(usable, key=lambda candidate: candidate.index)
    payload = {
        "changed": request["precollected"].get("changed") or [],
        "env": request.get("env") or {},
        "log": request["log"],
        "timeout": request["timeout"],
    }
    reasons = []
    for checkpoint in [latest] + [candidate for candidate in usable if candidate.index == 0 and candidate is not latest]:
        answer = checkpoint.ask(payload, float(request["timeout"]) + _COLLECTED_GRACE)
        if answer is None:
            reasons.append("the checkpoint failed")
            continue
        if answer.get("retire"):
            checkpoint.stop()
        if "declined" in answer:
            reasons.append(answer["declined"])
            continue
        answer["checkpoint"] = checkpoint.index - 1
        if reasons:
            answer["declined"] = "; ".join(reasons)
        return answer, None
    return None, "; ".join(reasons)

def _scratch_cleanup():
    for entry in os.listdir(tempfile.gettempdir()):
        if entry.startswith("envgen-run-"):
            shutil.rmtree(os.path.join(tempfile.gettempdir(), entry), ignore_errors=True)


def main():
    global _OWN_PID_NAMESPACE
    root = os.path.realpath(os.getcwd())
    path = sys.argv[1]
    _OWN_PID_NAMESPACE = "--own-pid-namespace" in sys.argv[2:]
    _install_rewrite_cache()
    _install_code_cache()
    _install_statement_cache()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(1)
    os.rename(path + ".tmp", path)
    connection, _ = listener.accept()
    listener.close()
    reader = connection.makefile("rb")
    for line in reader:
        if len(line) > _LINE_LIMIT:
            break
        request = json.loads(line)
        op = request.get("op")
        if op == "run":
            answer, declined = _run_collected(request) if request.get("precollected") else (None, None)
            if answer is not None:
                answer["precollected"] = True
                _kill_others()
            else:
                answer = _run(request, root)
                answer["precollected"] = False
                if declined:
                    answer["declined"] = declined
            _scratch_cleanup()
        elif op == "collect":
            answer = _collect(request, root, connection)
        elif op == "preload":
            answer = _preload(request, root)
        else:
            break
        answer["id"] = request.get("id")
        connection.sendall((json.dumps(answer) + "\n").encode("utf-8"))
    _stop_checkpoints()
    connection.close()


if __name__ == "__main__":
    main()
