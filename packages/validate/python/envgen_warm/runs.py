"""Forked runs: a child per run request in its own process group, waited for with a deadline,
and whatever it left running killed afterwards (live checkpoints excepted)."""

import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

import pytest

import envgen_pytest
from envgen_warm import watchdog
from envgen_warm.caches import _import_changed_plain
from envgen_warm.tracing import _SuiteTracer, _write_analysis


# Set by ``--own-pid-namespace``: the host knows the sandbox is a bubblewrap jail.
_OWN_PID_NAMESPACE = False


_CHECKPOINTS = []


def _high_socket(sock):
    """``sock`` at a descriptor number of envgen's own, far above those pytest and the suite
    get (see ``envgen_pytest.high_descriptor``): every run this server forks inherits it, and a
    test that writes to or closes a descriptor by its number must not meet it."""
    return socket.socket(fileno=envgen_pytest.high_descriptor(sock.detach()))


class _Only:
    """Of the collected tests, keeps only the named ones; the others are deselected, as
    ``--deselect`` would (a named test that is not collected is simply not run)."""

    def __init__(self, nodeids):
        self.nodeids = frozenset(nodeids)

    def pytest_collection_modifyitems(self, config, items):
        dropped = [item for item in items if item.nodeid not in self.nodeids]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if item.nodeid in self.nodeids]


# The caller of ``pytest.main`` and the frames below it in a fresh ``python -m pytest``: runpy's
# two, pytest's ``__main__`` module and its ``console_main``.
_FRESH_CALLER_DEPTH = 4


def _fresh_headroom():
    """Raises the recursion limit by the frames the caller of ``pytest.main`` sits above where a
    fresh ``python -m pytest`` calls it (the server's own), so a test may recurse as deep as
    there: one that recurses to the limit (a parser's recursion guard), or a RecursionError whose
    traceback pytest then formats, ends as in a fresh run."""
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    if depth > _FRESH_CALLER_DEPTH:
        sys.setrecursionlimit(sys.getrecursionlimit() + depth - _FRESH_CALLER_DEPTH)


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
    if request.get("only") is not None:
        plugins.append(_Only(request["only"]))
    if request.get("plain"):
        _import_changed_plain()
    code = _pytest_main(list(request["args"]), plugins)
    if tracer is not None:
        _write_analysis(request["analysis"], tracer, root)
    _exit_run(code)


def _exit_run(code):
    """Ends a forked run as the interpreter ends ``python -m pytest``: its threading shutdown
    runs the exit hooks registered with threading (concurrent.futures wakes its idle workers
    there), then waits for every thread that is not a daemon. A test's thread left blocked (a
    writer waiting for a pipe's reader that a bug removed) keeps a fresh pytest from exiting
    until its limit, so it keeps this run too; the server's wait then calls it a timeout, as
    the reference does. A run stopped at a test past its own limit is a timeout already, and
    ends at once, as envgen's plugin ends a fresh one."""
    import threading

    import envgen_pytest

    _flush_standard_streams()
    if not envgen_pytest.stopped_at_limit():
        threading._shutdown()
    os._exit(int(code))


def _pytest_main(args, plugins):
    """``pytest.main``'s exit status, as a fresh ``python -m pytest`` exits with it: pytest lets
    out what fails once its session is over (a test closed the captured stdout, which pytest
    then fails to restore), its results written; the interpreter prints the traceback and
    exits 1, or with a SystemExit's status. Tests get a fresh run's recursion headroom."""
    _fresh_headroom()
    try:
        return pytest.main(args, plugins=plugins)
    except SystemExit as stop:
        return _exit_status(stop)
    except Exception:  # noqa: BLE001 - as the interpreter meets one that leaves `python -m pytest`
        sys.excepthook(*sys.exc_info())
        return 1


def _exit_status(stop):
    """The status the interpreter exits with for a SystemExit it meets: its code, 0 for none,
    1 for any other value, which it prints."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _flush_standard_streams():
    """Flushes stdout and stderr as the interpreter does at exit: a stream a test closed is left."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (ValueError, OSError, AttributeError):
            pass


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
    if os.WTERMSIG(status) == signal.SIGPROF:
        # The plugin's watchdog: a test ran past its own limit without returning to the
        # interpreter (see envgen_pytest._Watchdog), a timeout as the alarm's would be.
        return {"status": "timeout", "code": None, "seconds": seconds, "watchdog": True}
    return {"status": "signaled", "code": None, "signal": os.WTERMSIG(status), "seconds": seconds}


# (file, index in _limit_counts' answer, key) of each counter file the sandbox names, read once.
_COUNTER_FILES = [
    (path, *((1, "max") if os.path.basename(path).startswith("pids") else (0, "oom_kill")))
    for path in os.environ.get("ENVGEN_LIMIT_COUNTERS", "").split(":")
    if path
]


def _limit_counts():
    """How often the sandbox's limits stopped something so far: (processes its memory limit
    killed, forks its process limit refused), from the counter files the sandbox names in
    ``ENVGEN_LIMIT_COUNTERS`` (a cgroup's ``key value`` lines: ``oom_kill`` in the memory
    controller's, ``max`` in the pids controller's); None without them."""
    if not _COUNTER_FILES:
        return None
    counts = [0, 0]
    for path, index, key in _COUNTER_FILES:
        try:
            with open(path) as counters:
                for line in counters:
                    name, _, value = line.partition(" ")
                    if name == key:
                        counts[index] += int(value)
        except (OSError, ValueError):
            pass
    return tuple(counts)


def _run(request, root):
    pid = watchdog.fork()
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
    before = _limit_counts()
    answer = _wait(pid, timeout)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    after = _limit_counts()
    # A run the memory limit killed, or whose forks the process limit refused, is stopped by
    # the sandbox, as the reference's run is (its exec's status): not the run's own crash.
    if before is not None and after is not None:
        if after[0] > before[0]:
            answer["limit"] = "memory"
        elif after[1] > before[1]:
            answer["limit"] = "processes"
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


def _scratch_cleanup():
    for entry in os.listdir(tempfile.gettempdir()):
        if entry.startswith("envgen-run-"):
            shutil.rmtree(os.path.join(tempfile.gettempdir(), entry), ignore_errors=True)
