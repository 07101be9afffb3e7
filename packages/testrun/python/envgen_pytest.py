"""envgen's pytest plugin: per-test outcomes and (optionally) which functions each test ran.

Loaded with ``-p envgen_pytest`` (the directory of this file on PYTHONPATH). Inert unless
the environment names a results file:

- ``ENVGEN_RESULTS``: path of the JSON file written (atomically) at the end of the session.
- ``ENVGEN_COVERAGE=1``: also record, per test, the code objects that started executing.
- ``ENVGEN_LINES``: path of a JSON list of repo-relative source files; the session also
  records which of their lines ran (in any test, at collection or in threads), as the
  ``lines`` key, and which of them had run when the first test began, as
  ``collectionLines``; both left out when something else displaced the trace function
  before the end.
- ``ENVGEN_TEST_TIMEOUT``: seconds one test may take (setup + call + teardown); past it the
  test is stopped with an exception (SIGALRM, main thread only), fails, is marked
  ``"timedOut": true``, and the run goes on.
- ``ENVGEN_SCRIPTS``: a directory relative to where pytest was started (the repo root) that
  holds the project's console scripts, made by its install step; put first on PATH (even
  without a results file), as an environment the project is installed in has them.
- ``ENVGEN_IMPORT_PATH``: the project's import path (``:``-separated, relative to where pytest
  was started, the repo root; may be empty). Set, the Python processes the tests start import
  the project as ``pip install -e .`` makes them (even without a results file): at import,
  a ``.pth`` in a user site directory of the process's own (``PYTHONUSERBASE``, removed at
  exit) names these directories and the root, absolute, so a child started in another
  directory or with ``PYTHONPATH`` replaced (a dev server's) imports the same code and finds
  the same metadata.
- ``ENVGEN_TEST_LIMITS``: path of a JSON file ``{nodeid: seconds}``, each test's own limit
  (derived from its clean duration). A test named there that runs past its limit also ends
  the session: the run is a timeout whatever the later tests do. Such a test that goes on a
  second after its alarm (it caught the exception) ends the run there, results written, and
  a run that stopped at such a test exits without waiting for threads the test left running.
  Such a test that spends its limit and the grace again in processor time without returning
  to the interpreter (a built-in looping in C, ``sum(range(10**12))``, which never hears the
  alarm) is ended by the kernel: SIGPROF, at its default action, from the process's profiling
  timer, unless the suite uses that timer or signal itself. The run then has no results; the
  running-test mark (``ENVGEN_RUNNING``) names the test, past its limit.
- ``ENVGEN_NO_SHRINK=1``: Hypothesis stops at the first failing example it finds instead of
  shrinking it (read each time a property test starts). The test fails either way; only the
  example its report shows differs, and shrinking runs the test body hundreds of times more
  than a clean pass does, past a limit derived from the clean duration.

Whatever the environment: Hypothesis draws the same examples in every run, as with
``--hypothesis-seed=0``, unless the project passes a seed of its own (so the verdict, the
bundle's test_script.sh, which pins the same seed, and any later run agree on a bug only some
examples find; a seeded run also neither reads nor writes Hypothesis's example database).

Works on Python 3.8-3.13 with the standard library only. PYTEST_DONT_REWRITE: pytest must
not try to rewrite this module's asserts (a warm server imports it before pytest marks
``-p`` plugins for rewriting, and the "already imported" warning that pytest would issue
about it is an error under a project's ``filterwarnings = error``). The JSON file holds::

    {"version": 1, "exitstatus": int, "interrupted": bool,
     "results": {nodeid: {"outcome": "passed|failed|error|skipped", "duration": float,
                          "wall": float,     # wall: the whole run protocol, reports included
                          "reason": str}},   # reason: a failed or erroring test's exception line
     "collectionErrors": [{"nodeid": str, "message": str}],
     "coverage": {nodeid: {relpath: [co_firstlineno, ...]}},   # only with ENVGEN_COVERAGE=1
     "untraced": [nodeid, ...],     # with coverage: tests that took the profile hook (a
                                    # profiler of their own), whose coverage is partial
     "imported": {name: path},      # with coverage: top-level modules the session imported
                                    # from outside the rootdir, the standard library aside
     "collection": {relpath: [co_firstlineno, ...]},  # with coverage: what ran before the
                                    # first test (collection: the imports of test modules)
     "lines": {relpath: [lineno, ...]},                        # only with ENVGEN_LINES
     "collectionLines": {relpath: [lineno, ...]}}   # with "lines": those that had run when
                                    # the first test began (collection), none seen since
"""

import atexit
import fcntl
import functools
import json
import os
import resource
import signal
import sys
import sysconfig
import threading
import time
import traceback

import pytest
from _pytest.config import ConftestImportFailure

from envgen_project import collect_failure_garbage, install_project, pin_hypothesis_seed

_RESULTS_ENV = "ENVGEN_RESULTS"
_COVERAGE_ENV = "ENVGEN_COVERAGE"
_TEST_TIMEOUT_ENV = "ENVGEN_TEST_TIMEOUT"
_TEST_LIMITS_ENV = "ENVGEN_TEST_LIMITS"
_LINES_ENV = "ENVGEN_LINES"
_SCRIPTS_ENV = "ENVGEN_SCRIPTS"
_NO_SHRINK_ENV = "ENVGEN_NO_SHRINK"
_RUN_LIMIT_ENV = "ENVGEN_RUN_LIMIT"
_RUNNING_ENV = "ENVGEN_RUNNING"
_IMPORT_PATH_ENV = "ENVGEN_IMPORT_PATH"
_MESSAGE_LIMIT = 500
# Seconds a test with a limit of its own may go on after its alarm before the run ends.
_ABANDON_GRACE = 1.0
# Processor seconds such a test may use past its limit and the grace before the kernel ends
# the run (see ``_Watchdog``): the alarm and the grace come first in wall time.
_WATCHDOG_MARGIN = 2 * _ABANDON_GRACE
_PLUGIN_NAME = "envgen-recorder"
# A run stopped at a test past its own limit ends at pytest_unconfigure (see there). A warm
# server ends its forked runs itself, once they have written what they analysed: it turns
# this off and asks stopped_at_limit() (envgen_warm.runs._exit_run).
EXIT_AT_UNCONFIGURE = True
# The latest session's recorder.
_recorder = None


def _short_message(report):
    """The most telling line of a failed collection report (the exception line)."""
    text = getattr(report, "longreprtext", None) or str(report.longrepr or "")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    exception_lines = [line[1:].strip() for line in lines if line.startswith("E ")]
    if exception_lines:
        # Prefer the last "Error:" line (the exception raised), else the last E line.
        for line in reversed(exception_lines):
            if "Error" in line or "Exception" in line:
                return line[:_MESSAGE_LIMIT]
        return exception_lines[-1][:_MESSAGE_LIMIT]
    return (lines[-1] if lines else "collection failed")[:_MESSAGE_LIMIT]


def _crash_line(report):
    """The exception a failed test ends with, on one line (``locale.Error: unsupported
    locale setting``), or None: read off the report pytest made anyway, never formatted."""
    message = getattr(getattr(report.longrepr, "reprcrash", None), "message", None)
    if not isinstance(message, str):
        return None
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[0][:_MESSAGE_LIMIT] if lines else None


_THREADS = getattr(threading, "_active", {})

# The hook functions as Python has them, before envgen hides its own hooks behind them.
_SYS_GETPROFILE, _SYS_SETPROFILE = sys.getprofile, sys.setprofile
_SYS_GETTRACE, _SYS_SETTRACE = sys.gettrace, sys.settrace
_THREADING_GETTRACE, _THREADING_SETTRACE = getattr(threading, "gettrace", None), threading.settrace
# envgen's own profilers and trace functions while they are installed.
_OWN_HOOKS = []
# The set functions (sys.settrace...) the suite itself called with a hook of its own.
_SUITE_HOOKS = set()


def _own(hook):
    return hook is not None and any(hook is own for own in _OWN_HOOKS)


def _hiding(get, set_):
    """A get and a set function over a hook that read None where the hook is envgen's, and
    leave envgen's hook in place when asked to clear it: a suite that asserts no profiler or
    tracer runs (pyinstrument's autouse fixture asserts ``sys.getprofile() is None`` around
    every test), or clears one of its own that it has not started, behaves as in a plain run."""

    def hidden_get():
        hook = get()
        return None if _own(hook) else hook

    def hidden_set(hook, *args, **kwargs):
        if hook is None and _own(get()):
            return None
        if hook is not None and not _own(hook):
            _SUITE_HOOKS.add(set_)
        return set_(hook, *args, **kwargs)

    hidden_get.__name__, hidden_get.__doc__ = get.__name__, get.__doc__
    hidden_set.__name__, hidden_set.__doc__ = set_.__name__, set_.__doc__
    return hidden_get, hidden_set


def _thread_trace_hook():
    return getattr(threading, "_trace_hook", None)


def _hide_hook(hook):
    """Makes ``hook`` (a profiler object or trace function of envgen's) invisible to the suite
    until :func:`_show_hook`: ``sys.getprofile``, ``sys.gettrace`` and ``threading.gettrace``
    read None for it, and their set functions with None leave it in place."""
    if not _OWN_HOOKS:
        sys.getprofile, sys.setprofile = _hiding(_SYS_GETPROFILE, _SYS_SETPROFILE)
        sys.gettrace, sys.settrace = _hiding(_SYS_GETTRACE, _SYS_SETTRACE)
        get, threading.settrace = _hiding(_thread_trace_hook, _THREADING_SETTRACE)
        if _THREADING_GETTRACE is not None:
            threading.gettrace = get
    _OWN_HOOKS.append(hook)


def _show_hook(hook):
    """Undoes :func:`_hide_hook` for ``hook``; the last one puts Python's functions back."""
    _OWN_HOOKS[:] = [own for own in _OWN_HOOKS if own is not hook]
    if not _OWN_HOOKS:
        sys.getprofile, sys.setprofile = _SYS_GETPROFILE, _SYS_SETPROFILE
        sys.gettrace, sys.settrace = _SYS_GETTRACE, _SYS_SETTRACE
        threading.settrace = _THREADING_SETTRACE
        if _THREADING_GETTRACE is not None:
            threading.gettrace = _THREADING_GETTRACE


def _stamp_threads(box):
    """Makes each thread a test's own body starts record into that test's set (a thread
    started by such a thread, into its starter's), read by ``_owner``: a thread a test leaves
    running goes on crediting that test, whichever test is running when it gets the
    processor, so coverage does not depend on thread timing. Threads started elsewhere (a
    fixture's server, the project at import) credit the test running at each moment, the one
    whose requests they serve. ``box``: [the current test's set, whether its call runs]."""
    original = threading.Thread.start

    def start(thread, *args, **kwargs):
        owner = _owner()
        if owner is None and box[1]:
            owner = box[0]
        if owner is not None:
            try:
                thread._envgen_codes = owner
            except AttributeError:  # a thread class without a __dict__: it records as before
                pass
        return original(thread, *args, **kwargs)

    threading.Thread.start = start
    return original


def _owner():
    """The set the current thread records into, or None for the main thread and threads
    started outside tests' bodies (they record into the current test's). Reads threading's
    registry without ``current_thread()``, which would register a thread ``_thread`` started."""
    return getattr(_THREADS.get(threading.get_ident()), "_envgen_codes", None)


def _functions(codes):
    """The code objects of functions among ``codes``: a module's own code runs at every import,
    and its first line may be a function's (``def`` on line 1), which it must not count for."""
    return {code for code in codes if code.co_name != "<module>"}


class _ProfilerTracer:
    """Python <= 3.11: which code objects each test called.

    The main thread uses cProfile's C profiler (``_lsprof``) without builtins: its per-call
    cost is in C, far below a Python trace function, and its stats name every code object
    called. Threads started by tests get a global trace function that notes each new
    frame's code in their owner's set (see ``_stamp_threads``) and hands the frame to the
    line recorder, if any (else no line events).
    """

    def __init__(self, lines):
        import _lsprof

        self._box = [set(), False]
        self._profiler = _lsprof.Profiler()
        self._start = None
        self._thread_tracer = None
        self._lines = lines
        # What ran from the start of the session to the first test (set by begin).
        self.collection = None

    def start(self):
        box = self._box
        lines = self._lines.trace if self._lines is not None else None

        def tracer(frame, event, arg):
            owner = _owner()
            (owner if owner is not None else box[0]).add(frame.f_code)
            return lines(frame, event, arg) if lines is not None else None

        self._start = _stamp_threads(box)
        _THREADING_SETTRACE(tracer)
        self._thread_tracer = tracer
        _hide_hook(tracer)
        _hide_hook(self._profiler)
        # Collection (the test modules and what they import) runs under it until the first test.
        self._profiler.enable(subcalls=False, builtins=False)

    def begin(self):
        if self.collection is None:
            self._profiler.disable()
            self.collection = _functions(self._box[0] | {entry.code for entry in self._profiler.getstats() if not isinstance(entry.code, str)})
        self._box[:] = [set(), False]
        self._profiler.clear()
        self._profiler.enable(subcalls=False, builtins=False)

    def calling(self, running):
        self._box[1] = running

    def intact(self):
        """Whether the main thread's profile hook is still this tracer's: a test that started
        a profiler of its own (cProfile, a sampling profiler) took it, and what it ran from
        then on went unseen."""
        return _SYS_GETPROFILE() is self._profiler

    def end(self):
        """The set of the test that ends: its threads may add to it later."""
        self._profiler.disable()
        codes = self._box[0]
        self._box[:] = [set(), False]
        codes.update(entry.code for entry in self._profiler.getstats() if not isinstance(entry.code, str))
        self._profiler.clear()
        return codes

    def stop(self):
        self._profiler.disable()
        _THREADING_SETTRACE(None)
        _show_hook(self._profiler)
        _show_hook(self._thread_tracer)
        if self._start is not None:
            threading.Thread.start = self._start


class _MonitoringTracer:
    """Python >= 3.12: sys.monitoring PY_START events, disabled per code object after the
    first sighting and re-armed between tests, so each function costs one callback per test.
    A thread recording into another test's set (see ``_stamp_threads``) does not disable the
    event: the current test must still see its own first call."""

    def __init__(self):
        self._box = [set(), False]
        self._tool = None
        self._start = None
        # What ran from the start of the session to the first test.
        self.collection = None

    def start(self):
        monitoring = sys.monitoring
        for tool in (monitoring.COVERAGE_ID, 2, 3, 4):
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, "envgen")
                self._tool = tool
                break
        if self._tool is None:
            return
        disable = monitoring.DISABLE
        box = self._box

        def on_start(code, offset):
            owner = _owner()
            if owner is None or owner is box[0]:
                box[0].add(code)
                return disable
            owner.add(code)
            return None

        self._start = _stamp_threads(box)
        monitoring.register_callback(self._tool, monitoring.events.PY_START, on_start)
        monitoring.set_events(self._tool, monitoring.events.PY_START)

    def begin(self):
        if self._tool is None:
            return
        if self.collection is None:
            self.collection = _functions(self._box[0])
        self._box[:] = [set(), False]
        sys.monitoring.restart_events()

    def calling(self, running):
        self._box[1] = running

    def intact(self):
        """Always: a tool of its own, which profilers (``sys.setprofile``) do not take."""
        return True

    def end(self):
        """The set of the test that ends: its threads may add to it later."""
        if self._tool is None:
            return set()
        codes = self._box[0]
        self._box[:] = [set(), False]
        return codes

    def stop(self):
        if self._start is not None:
            threading.Thread.start = self._start
        if self._tool is None:
            return
        monitoring = sys.monitoring
        monitoring.set_events(self._tool, 0)
        monitoring.register_callback(self._tool, monitoring.events.PY_START, None)
        monitoring.free_tool_id(self._tool)
        self._tool = None


class _LineRecorder:
    """Which lines of the named source files ran in the session: a trace function (main
    thread and threads) that traces lines only in the code objects of those files, and only
    while some line of the code object has not been seen yet, so code that has run whole
    costs one call per frame and nothing per line. Lines that ran in child processes are not
    seen. Works beside ``_lsprof`` (the profile hook) and sys.monitoring."""

    def __init__(self, file_key, files):
        self._file_key = file_key
        self._files = files
        # code object -> its local trace function while some line of it was not seen, else None
        self._tracing = {}
        # code object of a source file -> (all its lines, the lines not seen yet)
        self._seen = {}
        self._threads = False
        # (code object, the lines of it that had run) when the first test began (see mark_collection)
        self._collection = None
        self.trace = self._make_trace()

    def start(self, threads):
        """Traces the main thread, and with ``threads`` the threads started from now on
        (without it, the coverage tracer's thread function hands frames to :attr:`trace`)."""
        self._threads = threads
        _SYS_SETTRACE(self.trace)
        if threads:
            _THREADING_SETTRACE(self.trace)
        _hide_hook(self.trace)

    def _watch(self, code):
        """The local trace function of a code object seen for the first time, or None."""
        key = self._file_key(code.co_filename)
        if key is None or key not in self._files:
            self._tracing[code] = None
            return None
        if hasattr(code, "co_lines"):
            lines = frozenset(line for _, _, line in code.co_lines() if line)
        else:  # Python < 3.10
            import dis

            lines = frozenset(line for _, line in dis.findlinestarts(code) if line)
        pending = set(lines)
        discard = pending.discard
        tracing = self._tracing

        def local(frame, event, arg):
            # Line, return and exception events all name a line that ran.
            discard(frame.f_lineno)
            if not pending:
                tracing[code] = None
                frame.f_trace_lines = False
            return local

        self._seen[code] = (lines, pending)
        tracing[code] = local if pending else None
        return tracing[code]

    def _make_trace(self):
        # The fewest operations per call: this runs for every Python frame of the session.
        tracing = self._tracing
        watch = self._watch

        def trace(frame, event, arg):
            try:
                return tracing[frame.f_code]
            except KeyError:
                return watch(frame.f_code)

        return trace

    def resume(self):
        """Puts the recorder back where Python dropped it, between tests: a trace function
        that raises is removed, as one does in a test that provokes a RecursionError (tomli's
        and sqlparse's recursion-limit tests), and the rest of the session ran unseen. That
        test's lines may be missing (fewer sites, never a line that did not run). Where the
        suite set a trace function of its own, nothing is put back (:meth:`intact` says so)."""
        if _SYS_GETTRACE() is None and _SYS_SETTRACE not in _SUITE_HOOKS:
            _SYS_SETTRACE(self.trace)

    def intact(self):
        """Whether the main thread's trace function is still this recorder's."""
        return _SYS_GETTRACE() is self.trace

    def stop(self):
        _show_hook(self.trace)
        if self.intact():
            _SYS_SETTRACE(None)
        if self._threads:
            _THREADING_SETTRACE(None)

    def mark_collection(self):
        """Notes the lines that have run so far, once: what collection ran (the test modules'
        imports and what they called) before the first test."""
        if self._collection is None:
            self._collection = [(code, lines - pending) for code, (lines, pending) in list(self._seen.items())]

    def lines(self):
        return self._per_file((code, lines - pending) for code, (lines, pending) in list(self._seen.items()))

    def collection_lines(self):
        """The lines that had run when the first test began, or None when no test began."""
        return None if self._collection is None else self._per_file(self._collection)

    def _per_file(self, ran_by_code):
        per_file = {}
        for code, ran in ran_by_code:
            if ran:
                per_file.setdefault(self._file_key(code.co_filename), set()).update(ran)
        return {path: sorted(lines) for path, lines in sorted(per_file.items())}


class TestTimeout(Exception):
    """Raised inside a test that ran past ENVGEN_TEST_TIMEOUT."""

    __test__ = False


def _run_ends():
    """When the session stops between two tests: its run's soft limit (seconds after the session
    starts, which is after the limit's clock started) has passed. That limit's SIGTERM stops a
    run anyway, unless a test took SIGTERM for a handler of its own (a server's), which leaves
    the run to be killed at its hard limit without results."""
    try:
        seconds = float(os.environ.get(_RUN_LIMIT_ENV, ""))
    except ValueError:
        return None
    return time.monotonic() + seconds if seconds > 0 else None


def _descriptor_floor():
    """The lowest number envgen's own descriptors in a test process take, or None where the
    process may open too few files to leave them room: far above the lowest free numbers,
    which pytest's capture and the suite get, so those are the numbers a plain pytest gives."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    floor = min(soft, 1024) - 128
    return floor if floor >= 128 else None


def high_descriptor(fd):
    """``fd`` moved to a number at or above ``_descriptor_floor()`` (close-on-exec), the old
    number closed; ``fd`` itself where there is no such room. A suite that writes to or closes
    a descriptor by its number (argcomplete's 8 and 9, a shell's conventions) then meets what
    it would in a plain pytest, never one of envgen's."""
    floor = _descriptor_floor()
    if floor is None or fd >= floor:
        return fd
    try:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor)
    except OSError:
        return fd
    os.close(fd)
    return moved


class _RunningMark:
    """The test running now, in a small file the host reads when the run was killed without
    results (a test that took SIGTERM, its results never written): which test to deselect.
    Its descriptor is one of envgen's own (see high_descriptor); a test that closes it anyway
    (``os.closerange``) costs the run its mark, never its results."""

    def __init__(self, path):
        self.fd = high_descriptor(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644))

    def set(self, nodeid):
        if self.fd is None:
            return
        text = json.dumps({"nodeid": nodeid, "started": time.time()}).encode("utf-8") if nodeid else b"{}"
        try:
            os.pwrite(self.fd, text, 0)
            os.ftruncate(self.fd, len(text))
        except OSError:
            self.fd = None


def _test_timeout():
    """The per-test limit in seconds, or None where it cannot be enforced."""
    try:
        seconds = float(os.environ.get(_TEST_TIMEOUT_ENV, ""))
    except ValueError:
        return None
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    return seconds


def _test_limits():
    """Each named test's own limit in seconds (``ENVGEN_TEST_LIMITS``), or {}."""
    path = os.environ.get(_TEST_LIMITS_ENV)
    if not path or not hasattr(signal, "setitimer"):
        return {}
    with open(path, encoding="utf-8") as handle:
        limits = json.load(handle)
    return {str(nodeid): float(seconds) for nodeid, seconds in limits.items() if float(seconds) > 0}


def _without_shrink(settings):
    """Hypothesis ``settings`` without the shrink phase (the same object when it has none)."""
    from hypothesis import Phase
    from hypothesis import settings as Settings

    phases = tuple(phase for phase in settings.phases if phase is not Phase.shrink)
    return settings if len(phases) == len(settings.phases) else Settings(settings, phases=phases)


def _skip_shrinking():
    """Once Hypothesis is imported, its engine runs without shrinking while
    ``ENVGEN_NO_SHRINK=1``. Without the shrink phase the engine also stops generating at the
    first failing example (Hypothesis's own rule), and the test reports that example."""
    engine = sys.modules.get("hypothesis.internal.conjecture.engine")
    runner = getattr(engine, "ConjectureRunner", None)
    if runner is None or getattr(runner, "_envgen_no_shrink", False):
        return
    original = runner.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if os.environ.get(_NO_SHRINK_ENV) != "1":
            return
        try:
            self.settings = _without_shrink(self.settings)
        except Exception:  # noqa: BLE001 - a Hypothesis this does not know shrinks as before
            pass

    runner.__init__ = __init__
    runner._envgen_no_shrink = True


class _Alarm:
    """One test's SIGALRM: envgen's limit for it and, while pytest-timeout's signal method
    times the test (the project's own ``timeout``), that timeout too, whichever is due first.
    Both use the one real-time timer a process has; pytest-timeout alone would replace
    envgen's handler and cancel its timer for the test."""

    def __init__(self, recorder, nodeid, seconds, own):
        self.recorder = recorder
        self.nodeid = nodeid
        self.seconds = seconds
        self.own = own
        self.deadline = time.monotonic() + seconds
        # pytest-timeout's (deadline, handler) while it times the test.
        self.project = None

    def arm(self):
        due = self.deadline if self.project is None else min(self.deadline, self.project[0])
        signal.signal(signal.SIGALRM, self.fire)
        signal.setitimer(signal.ITIMER_REAL, 0 if due == float("inf") else max(due - time.monotonic(), 0.001))

    def fire(self, signum, frame):
        now = time.monotonic()
        project = self.project
        if project is not None and project[0] <= now and project[0] < self.deadline:
            self.project = None
            self.arm()
            project[1]()
            return
        if now < self.deadline:
            self.arm()
            return
        recorder = self.recorder
        if self.nodeid in recorder.timed_out:
            recorder.abandon(self.nodeid, self.seconds)
        recorder.timed_out.add(self.nodeid)
        # A test with a limit of its own hears the alarm again after a grace.
        self.deadline = now + _ABANDON_GRACE if self.own else float("inf")
        self.arm()
        raise TestTimeout("envgen: test exceeded its %.1f s limit" % self.seconds)


class _Watchdog:
    """The process's profiling timer (ITIMER_PROF, processor time) for a test with a limit of its
    own: SIGPROF at its default action ends the process, from the kernel, where the test runs on
    in code that never returns to the interpreter, so neither the alarm's exception nor the
    grace after it can stop it. Left alone where the suite has a SIGPROF handler of its own or
    the timer runs (a sampling profiler)."""

    def __init__(self):
        self.armed = False

    def arm(self, seconds):
        if not hasattr(signal, "ITIMER_PROF") or signal.getsignal(signal.SIGPROF) != signal.SIG_DFL:
            return
        if signal.getitimer(signal.ITIMER_PROF) != (0.0, 0.0):
            return
        signal.setitimer(signal.ITIMER_PROF, seconds + _ABANDON_GRACE + _WATCHDOG_MARGIN)
        self.armed = True

    def disarm(self):
        # A test that took SIGPROF for a handler of its own keeps what it set.
        if self.armed and signal.getsignal(signal.SIGPROF) == signal.SIG_DFL:
            signal.setitimer(signal.ITIMER_PROF, 0)
        self.armed = False


class _TimeoutPlugin:
    """Times tests for pytest-timeout's signal method through envgen's alarm (see
    ``_Alarm``); its thread method, and tests envgen does not time, are left to it."""

    def __init__(self, recorder, timeout_module):
        self.recorder = recorder
        self.timeout_module = timeout_module

    @pytest.hookimpl(tryfirst=True)
    def pytest_timeout_set_timer(self, item, settings):
        alarm = self.recorder.alarm
        if alarm is None or settings.method != "signal":
            return None
        fail = getattr(self.timeout_module, "timeout_sigalrm", None)
        if fail is None:
            return None
        alarm.project = (time.monotonic() + settings.timeout, lambda: fail(item, settings.timeout))
        alarm.arm()
        return True

    @pytest.hookimpl(tryfirst=True)
    def pytest_timeout_cancel_timer(self, item):
        alarm = self.recorder.alarm
        if alarm is None or alarm.project is None:
            return None
        alarm.project = None
        alarm.arm()
        return True


class _Recorder:
    def __init__(self, config, results_path, coverage):
        self.rootdir = os.path.realpath(str(getattr(config, "rootpath", None) or config.rootdir))
        self.cwd = os.getcwd()
        self.results_path = results_path
        self.results = {}
        self.collection_errors = []
        self.coverage = {} if coverage else None
        # Tests that took the tracer's hook: what they ran is only partly in their coverage.
        self.untraced = set()
        self.exitstatus = None
        self.interrupted = False
        self.written = False
        self._file_keys = {}
        self._plugin_dir = os.path.dirname(os.path.realpath(__file__))
        self.timed_out = set()
        # {"nodeid", "seconds"} of the test a KeyboardInterrupt (SIGTERM) stopped, if one did.
        self.stopped_in = None
        self.run_ends = _run_ends()
        running_path = os.environ.get(_RUNNING_ENV)
        self.running = _RunningMark(running_path) if running_path else None
        self.test_timeout = _test_timeout()
        self.test_limits = _test_limits() if self.test_timeout is not None else {}
        # The running test's alarm (see start_timer).
        self.alarm = None
        self.watchdog = _Watchdog()
        self.tracer = None
        self.line_recorder = None
        lines_path = os.environ.get(_LINES_ENV)
        if lines_path:
            with open(lines_path, encoding="utf-8") as handle:
                self.line_recorder = _LineRecorder(self._file_key, set(json.load(handle)))
        if coverage:
            self.tracer = _MonitoringTracer() if hasattr(sys, "monitoring") else _ProfilerTracer(self.line_recorder)
            self.tracer.start()
        if self.line_recorder is not None:
            # Under the profiler, threads reach the line recorder through its thread function.
            self.line_recorder.start(threads=not isinstance(self.tracer, _ProfilerTracer))

    # -- outcomes ---------------------------------------------------------------------

    def record_report(self, report):
        entry = self.results.get(report.nodeid)
        if entry is None:
            entry = {"outcome": None, "duration": 0.0}
            self.results[report.nodeid] = entry
        entry["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
        if report.when == "call":
            entry["outcome"] = "failed" if report.failed else "skipped" if report.skipped else "passed"
        elif report.failed:
            # Setup or teardown failure; a test that already failed in its call stays failed.
            if entry["outcome"] != "failed":
                entry["outcome"] = "error"
        elif report.skipped and report.when == "setup":
            entry["outcome"] = "skipped"
        if report.failed and "reason" not in entry:
            reason = _crash_line(report)
            if reason is not None:
                entry["reason"] = reason

    # -- per-test time limit ------------------------------------------------------------

    def start_timer(self, nodeid):
        if self.test_timeout is None:
            return
        own = nodeid in self.test_limits
        self.alarm = _Alarm(self, nodeid, self.test_limits.get(nodeid, self.test_timeout), own)
        self.alarm.arm()
        if own:
            self.watchdog.arm(self.alarm.seconds)

    def ends_session(self, nodeid):
        """Whether the run stops here: a test with its own limit ran past it."""
        return nodeid in self.timed_out and nodeid in self.test_limits

    def past_run_limit(self):
        """Whether the run's limit has passed, its SIGTERM unheard: the run stops before the next test."""
        return self.run_ends is not None and time.monotonic() >= self.run_ends

    def stopped_at_limit(self):
        """Whether a test with its own limit ran past it: the run is a timeout whatever follows."""
        return any(nodeid in self.test_limits for nodeid in self.timed_out)

    def abandon(self, nodeid, seconds):
        """Ends the run at once, results written: a test with its own limit went on past it and
        the grace after it (it caught the alarm's exception, as a retry loop that catches every
        exception does). The run is a timeout whatever follows, and a fresh pytest would go on
        until the run's own limit."""
        entry = self.results.setdefault(nodeid, {"outcome": None, "duration": 0.0})
        if entry["outcome"] in (None, "passed", "skipped"):
            entry["outcome"] = "failed"
        entry.setdefault("reason", "envgen: test went on past its %.1f s limit" % seconds)
        self.exitstatus = int(pytest.ExitCode.TESTS_FAILED)
        self.write()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(self.exitstatus)

    def stop_timer(self):
        if self.alarm is None:
            return
        self.alarm = None
        self.watchdog.disarm()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    def record_collect(self, report):
        if report.failed:
            self.collection_errors.append({"nodeid": report.nodeid, "message": _short_message(report)})

    # -- coverage ---------------------------------------------------------------------

    def _file_key(self, filename):
        """Repo-relative path of a code object's file, or None when it is outside the repo."""
        key = self._file_keys.get(filename, False)
        if key is not False:
            return key
        key = None
        if filename and not filename.startswith("<"):
            path = filename if os.path.isabs(filename) else os.path.join(self.cwd, filename)
            path = os.path.realpath(path)
            inside = path.startswith(self.rootdir + os.sep)
            vendored = "site-packages" in path or "dist-packages" in path
            if inside and not vendored and not path.startswith(self._plugin_dir + os.sep):
                key = os.path.relpath(path, self.rootdir).replace(os.sep, "/")
        self._file_keys[filename] = key
        return key

    def begin_test(self, nodeid):
        if self.running is not None:
            self.running.set(nodeid)
        if self.line_recorder is not None:
            self.line_recorder.mark_collection()
        if self.tracer is not None:
            self.tracer.begin()

    def calling(self, running):
        if self.tracer is not None:
            self.tracer.calling(running)

    def end_test(self, nodeid):
        if self.running is not None:
            self.running.set(None)
        if self.line_recorder is not None:
            self.line_recorder.resume()
        if self.tracer is None:
            return
        if not self.tracer.intact():
            self.untraced.add(nodeid)
        # Read when the results are written: threads the test left running add to it until then.
        self.coverage.setdefault(nodeid, []).append(self.tracer.end())

    def _lines(self, code_sets):
        per_file = {}
        for codes in code_sets:
            for code in codes.copy():
                key = self._file_key(code.co_filename)
                if key is not None:
                    per_file.setdefault(key, set()).add(code.co_firstlineno)
        return {path: sorted(lines) for path, lines in sorted(per_file.items())}

    def _imported_elsewhere(self):
        """Top-level modules imported from files outside the rootdir, the standard library aside.

        Where a package of the tree was imported from another copy (Debian's, an installed
        build), its tests ran none of the tree's code: envgen names that copy.
        """
        paths = sysconfig.get_paths()
        stdlib = {os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib") if key in paths}
        found = {}
        for name, module in list(sys.modules.items()):
            filename = getattr(module, "__file__", None)
            if "." in name or not isinstance(filename, str):
                continue
            path = os.path.realpath(filename)
            installed = "site-packages" in path or "dist-packages" in path
            if path.startswith(self.rootdir + os.sep) or (not installed and any(path.startswith(lib) for lib in stdlib)):
                continue
            found[name] = path
        return dict(sorted(found.items()))

    # -- output -----------------------------------------------------------------------

    def write(self):
        if self.written:
            return
        self.written = True
        lines = None
        collection_lines = None
        if self.line_recorder is not None:
            # A trace function the suite installed in ours' place would have hidden lines that ran.
            if self.line_recorder.intact():
                lines = self.line_recorder.lines()
                collection_lines = self.line_recorder.collection_lines()
            self.line_recorder.stop()
        if self.tracer is not None:
            self.tracer.stop()
        payload = {
            "version": 1,
            "exitstatus": self.exitstatus,
            "interrupted": self.interrupted,
            # A test interrupted before its call phase reported has no outcome.
            "results": {
                k: dict(v, timedOut=True) if k in self.timed_out else v
                for k, v in self.results.items()
                if v["outcome"] is not None
            },
            "collectionErrors": self.collection_errors,
        }
        if self.stopped_in is not None:
            payload["stoppedIn"] = self.stopped_in
        if self.coverage is not None:
            payload["coverage"] = {nodeid: self._lines(code_sets) for nodeid, code_sets in self.coverage.items()}
            payload["untraced"] = sorted(self.untraced)
            payload["imported"] = self._imported_elsewhere()
            if self.tracer.collection is not None:
                payload["collection"] = self._lines([self.tracer.collection])
        if lines is not None:
            payload["lines"] = lines
        if collection_lines is not None:
            payload["collectionLines"] = collection_lines
        temp = "%s.tmp%d" % (self.results_path, os.getpid())
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        os.replace(temp, self.results_path)


class _Plugin:
    def __init__(self, recorder):
        self.recorder = recorder

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        _skip_shrinking()
        self.recorder.begin_test(item.nodeid)
        self.recorder.start_timer(item.nodeid)
        started = time.perf_counter()
        try:
            outcome = yield
            excinfo = outcome.excinfo
            if excinfo is not None and issubclass(excinfo[0], KeyboardInterrupt) and self.recorder.stopped_in is None:
                # The test the run was stopped in (its limit, SIGTERM): it has no outcome.
                self.recorder.stopped_in = {"nodeid": item.nodeid, "seconds": round(time.perf_counter() - started, 3)}
            elif excinfo is not None and issubclass(excinfo[0], TestTimeout):
                # The alarm fired in pytest's own work for the test, outside the phases that
                # make it the test's failure: building the report of a failure (the chain of a
                # deep RecursionError; a cause never raised, which pytest formats with Python's
                # traceback module). The test failed past its limit, and the run goes on to
                # where that stops it, as from within a phase; else pytest ends with
                # INTERNALERROR, the test has no result, and the run reads as a crash of pytest.
                entry = self.recorder.results.setdefault(item.nodeid, {"outcome": None, "duration": 0.0})
                entry["outcome"] = "failed"
                entry.setdefault("reason", str(excinfo[1]))
                outcome.force_result(True)
        finally:
            entry = self.recorder.results.get(item.nodeid)
            if entry is not None:
                entry["wall"] = time.perf_counter() - started
            self.recorder.stop_timer()
            self.recorder.end_test(item.nodeid)
            if self.recorder.ends_session(item.nodeid):
                item.session.shouldstop = "envgen: %s ran past its limit" % item.nodeid
            elif self.recorder.past_run_limit():
                item.session.shouldstop = "envgen: the run's limit has passed"

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        self.recorder.calling(True)
        try:
            yield
        finally:
            self.recorder.calling(False)

    # Inside pytest's own wrapper of the phase, which reports a finalizer's exception as the
    # test's; after the fixtures' teardown, whether it raised or not.
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        yield
        if self.recorder.results.get(item.nodeid, {}).get("outcome") in ("failed", "error"):
            collect_failure_garbage()

    def pytest_runtest_logreport(self, report):
        self.recorder.record_report(report)

    def pytest_collectreport(self, report):
        self.recorder.record_collect(report)

    def pytest_keyboard_interrupt(self, excinfo):
        self.recorder.interrupted = True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self.recorder.exitstatus = int(exitstatus)
        self.recorder.write()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config):
        # The run is a timeout whatever follows (results written): a thread the bug left
        # running would keep the interpreter, and a fresh pytest, until the run's own limit.
        if EXIT_AT_UNCONFIGURE and self.recorder.stopped_at_limit():
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(self.recorder.exitstatus or int(pytest.ExitCode.TESTS_FAILED))


def stopped_at_limit():
    """Whether the latest session stopped at a test past its own limit: the run is a timeout."""
    return _recorder is not None and _recorder.stopped_at_limit()


def _interrupt_on_sigterm(signum, frame):
    # Turn a polite kill into KeyboardInterrupt so pytest unwinds and sessionfinish writes.
    raise KeyboardInterrupt("SIGTERM")


# The forking thread's SIGTERM was blocked by `_hold_sigterm_over_fork` (not blocked before).
_FORKING = threading.local()


def _hold_sigterm_over_fork():
    """SIGTERM stays pending, not handled, while a process forks: from fork() to
    `_sigterm_default_in_child` the child has the pytest process's handler, and Python drops
    the signals a child's handlers noted before it runs any code. A pool that terminated a
    worker still starting lost that SIGTERM, and then waited forever for the worker to exit."""
    if signal.getsignal(signal.SIGTERM) is _interrupt_on_sigterm:
        _FORKING.held = signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _release_sigterm():
    if getattr(_FORKING, "held", False):
        _FORKING.held = False
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _sigterm_default_in_child():
    """A process the suite forks (a multiprocessing worker) ends at SIGTERM, as without envgen:
    the handler is the pytest process's own. Raised in a worker, its KeyboardInterrupt ran the
    worker's exit handlers, which can wait forever (joining a queue's feeder thread blocked on a
    full pipe), so a pool's ``terminate()`` never returned (joblib's multiprocessing tests).
    A SIGTERM sent while it forked, held till now, ends it here."""
    if signal.getsignal(signal.SIGTERM) is _interrupt_on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _release_sigterm()


os.register_at_fork(before=_hold_sigterm_over_fork, after_in_parent=_release_sigterm, after_in_child=_sigterm_default_in_child)


def _put_scripts_on_path(config):
    """The project's console scripts first on PATH, for tests that run them by name."""
    scripts = os.environ.get(_SCRIPTS_ENV)
    if not scripts:
        return
    directory = os.path.join(str(config.invocation_params.dir), scripts)
    path = os.environ.get("PATH", os.defpath)
    # Once: a warm server configures a session per run.
    if path.split(os.pathsep)[0] != directory:
        os.environ["PATH"] = directory + os.pathsep + path


def _install_project():
    """The project importable in the processes its tests start, as an editable install makes it
    (``envgen_project.install_project``), where the environment names its import path.

    At import, from where pytest starts (the repo root): once per process tree, as a warm
    server imports this module before it forks its runs.
    """
    entries = os.environ.get(_IMPORT_PATH_ENV)
    if entries is not None:
        install_project(entries.split(os.pathsep))


_install_project()


def _tree_frame(tb, root):
    """The file of the deepest frame of a traceback that runs the tree's own code (under
    ``root``, outside installed packages), or None."""
    found = None
    for frame, _ in traceback.walk_tb(tb):
        path = os.path.abspath(frame.f_code.co_filename)
        if path.startswith(root + os.sep) and "-packages" + os.sep not in path:
            found = path
    return found


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """A plugin that runs the project's code when pytest starts (pytest-django's
    ``django.setup()`` imports the apps' models) and fails there stops the session as a
    conftest that fails to import does: pytest's usage error (exit 4), no test run, rather than
    an exception out of ``pytest.main``. Only where the failure is in the tree's own code."""
    outcome = yield
    error = outcome.excinfo
    if error is None or isinstance(error[1], (pytest.UsageError, ConftestImportFailure)):
        return
    path = _tree_frame(error[2], str(early_config.rootpath))
    if path is not None:
        details = "".join(traceback.format_exception(*error)).rstrip()
        raise pytest.UsageError(f"the project's code failed while pytest started ({os.path.relpath(path, str(early_config.rootpath))}):\n{details}")


# Before any fixture: a fixture may draw examples too.
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    pin_hypothesis_seed(item.config)


class _RerunFlag:
    """Puts pytest-rerunfailures' ``HAS_PYTEST_HANDLECRASHITEM`` back once its
    ``pytest_configure``, the one reader, has run: the tests see the module as it is
    (pytest-dev/pytest-rerunfailures' own suite skips its xdist tests where it reads false)."""

    def __init__(self, plugin):
        self.plugin = plugin

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session):
        self.plugin.HAS_PYTEST_HANDLECRASHITEM = True


def _no_rerun_server(config):
    """pytest-rerunfailures, where pytest-xdist is installed too, starts a thread serving its
    rerun counts to xdist's workers in every session, distributed or not: a thread envgen's
    checkpoints cannot be forked beside (every one was declined). A run that does not
    distribute has no worker to ask it: the plugin then keeps its counts in its no-op store, as
    it does without xdist. Before its own ``pytest_configure`` (this hook runs first); the flag
    is put back before the session collects."""
    plugin = config.pluginmanager.get_plugin("rerunfailures")
    if getattr(plugin, "HAS_PYTEST_HANDLECRASHITEM", False) and not config.getoption("numprocesses", None) and config.getoption("dist", "no") == "no":
        plugin.HAS_PYTEST_HANDLECRASHITEM = False
        config.pluginmanager.register(_RerunFlag(plugin), "envgen-rerun-flag")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    _no_rerun_server(config)
    _put_scripts_on_path(config)
    results_path = os.environ.get(_RESULTS_ENV)
    if not results_path or config.pluginmanager.has_plugin(_PLUGIN_NAME):
        return
    # Only the main process of a session records (not pytest-xdist workers).
    if hasattr(config, "workerinput"):
        return
    global _recorder
    recorder = _recorder = _Recorder(config, results_path, os.environ.get(_COVERAGE_ENV) == "1")
    config.pluginmanager.register(_Plugin(recorder), _PLUGIN_NAME)
    timeout_module = config.pluginmanager.get_plugin("timeout")
    if timeout_module is not None and hasattr(config.pluginmanager.hook, "pytest_timeout_set_timer"):
        config.pluginmanager.register(_TimeoutPlugin(recorder, timeout_module), "envgen-timeout")
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    atexit.register(recorder.write)
