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

The server never imports the project's own modules, so every child imports the files as
they are on disk when it starts.
"""

import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

import pytest

_LINE_LIMIT = 1 << 20
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

    def __init__(self, per_test):
        import _lsprof

        self.per_test = per_test
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

    def switch(self, key):
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
        shared = getattr(fixturedef, "scope", "function") != "function"
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
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    answer = _wait(pid, float(request["timeout"]))
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _kill_others()
    return answer


def _kill_others():
    """In a bubblewrap jail of its own (the server is pid 2 under bwrap's init), kills every
    other process: nothing a run started (grandchildren, daemons that left the child's
    group) outlives it to touch the tree while the host restores it. Elsewhere (docker,
    no sandbox) only the child's process group is killed."""
    if not _OWN_PID_NAMESPACE or os.getpid() != 2 or os.getppid() != 1:
        return
    keep = {1, os.getpid()}
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


def _install_code_cache():
    """Serves the code of unchanged source files from the server's cache."""
    from importlib import machinery

    original = machinery.SourceFileLoader.source_to_code

    def source_to_code(self, data, path, *, _optimize=-1):
        entry = _COMPILED.get(path)
        if entry is not None and _optimize == -1 and bytes(data) == entry[0]:
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
            answer = _run(request, root)
            _scratch_cleanup()
        elif op == "preload":
            answer = _preload(request, root)
        else:
            break
        answer["id"] = request.get("id")
        connection.sendall((json.dumps(answer) + "\n").encode("utf-8"))
    connection.close()


if __name__ == "__main__":
    main()
