"""Checkpoints of the clean suite: the collector that runs it once and leaves paused forks on
its way, what each checkpoint must prove before it serves runs, and the server's side of
talking to them."""

import fcntl
import gc
import json
import os
import select
import signal
import socket
import stat
import sys
import tempfile
import time
import types

import pytest

from envgen_warm import runs, watchdog
from envgen_warm.caches import _import_changed_plain
from envgen_warm.runs import _CHECKPOINTS, _Only, _exit_run, _flush_standard_streams, _high_socket, _kill_others, _pytest_main, _wait_group
from envgen_warm.startup import _COMPILED, _RAN, _SERVED
from envgen_warm.swap import _Decline, _changed_codes, _function_index, _plan_code_swap, _qualname, _ran_before
from envgen_warm.tracing import _SuiteTracer, _inside, _module_file, _write_analysis
from envgen_warm.tree import _check_tree_delta, _copy_scratch, _remove_tree, _restore_tree_delta, _save_tree_delta, _tree_state


# -- checkpoints of the clean suite ------------------------------------------------------
#
# The collector (forked from the server) runs pytest over the clean suite once and leaves
# checkpoints on its way: processes paused with the state the clean run had there (its
# scratch directory copied aside), each serving runs by forking a child that goes on from
# that point. The first checkpoint is taken when configuration is done and collection is
# about to start: a child of it imports the files as they are on disk, collects and runs the
# whole suite, as a fresh pytest would, minus start-up and configuration. A file a conftest
# already imported there is not imported again: the child swaps in its changed functions'
# code (as below), provided its module- and class-level code is unchanged and none of the
# changed functions ran before collection (a profiler watches until then). The others are
# taken at the start of chosen tests' protocols. A change inside function bodies that never
# run at import, during collection or in shared fixture set-up cannot show before the first
# test that runs one of those functions: every test before it runs exactly as on the clean
# tree. So a run resumes from the last checkpoint at or before that test: the child swaps
# the changed functions' code objects for those of the changed file compiled afresh
# (exactly the code an import of it would give) and lets pytest go on with that test and
# every later one, through its session finish, as the whole suite would; results of the
# tests before the checkpoint are the clean run's. Whatever a checkpoint cannot prove
# equivalent it declines, and the server runs the whole suite the ordinary way.

# How long past a run's own deadline the server waits for a checkpoint's answer.
_COLLECTED_GRACE = 20.0


_EXIT_DECLINED = 75


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


def _native_threads():
    """How many threads this process has, those started outside Python included, faulthandler's
    watchdog excepted (the server's forks carry it over: see envgen_warm.watchdog)."""
    try:
        return len(os.listdir("/proc/self/task")) - watchdog.running()
    except OSError:
        return 1


def _native_threads_stop_at_fork():
    """Whether the threads a library started outside Python are gone when this process forks.

    A library that runs a thread pool of its own may stop it in a ``pthread_atfork`` prepare
    handler and start it again when next used, as OpenBLAS (the BLAS of numpy's wheels) does:
    then no thread of it is copied half-way into a fork, and what a forked child does is what
    a fresh process does. Probed with a fork whose child exits at once: after it, only this
    thread is left, until the library is next used."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    # A joined thread may stay listed for a moment after its exit.
    deadline = time.monotonic() + 0.05
    while _native_threads() != 1:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


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
        # The tree as the collector found it (what the host puts back after every run): what a
        # conftest or plugin writes into it before collection is part of each checkpoint's delta.
        self.tree = _tree_state(root)
        # Files open at this checkpoint that each child opens anew (``_reopenable``).
        self.reopen = []
        self.forked = set()
        # Whether the suite had the cyclic collector on when the latest checkpoint was taken.
        self.collecting = True
        self.channel = None
        self.reader = None
        self.copy = None
        # What the clean run had written into the tree when this checkpoint was taken.
        self.delta = None
        self.files = None
        self.functions = None
        self.inside_of = {}
        self.tracer = None
        self.analysis = None
        # Profiles what runs before collection when no tracer does (see ``_ran_so_far``).
        self.early = None
        # ids of the worktree code objects that ran before collection (conftests, plugins,
        # hooks), as the checkpoint before collection records them; None when unknown. Ids,
        # not the objects: a container holding a code object keeps its function from taking
        # new code, and a changed function's clean code lives as long as the server, so its
        # id is no other object's.
        self.ran_before = None
        # The collector's own descriptors, by what they are: a number the runner frees (each
        # checkpoint's channel, once forked) may be taken by a file a test opens later.
        self.fds_before = {fd: _identity(fd) for fd in _open_fds()}
        self.allowed = {_identity(fd) for fd in (0, 1, 2)} | {_identity(os.devnull)}

    # -- the clean run ------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_collection(self, session):
        if self.role == "runner":
            self.session = session
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
                try:
                    self._checkpoint(index)
                except Exception as error:
                    if self.role != "runner":
                        raise
                    # A checkpoint that fails is declined, with why; the clean run goes on.
                    self.positions.clear()
                    for later in range(index, len(self.statuses)):
                        self.statuses[later] = "the checkpoint failed (%s: %s)" % (type(error).__name__, error)
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
        if _native_threads() != 1 and not _native_threads_stop_at_fork():
            return "a thread started outside Python is running (its library does not stop it at fork)"
        parents = _process_parents()
        if any(parent == os.getpid() and pid not in self.forked for pid, parent in parents.items()):
            return "a process started by a test is running"
        if runs._OWN_PID_NAMESPACE and set(parents) - self.forked - {1, os.getpid(), os.getppid()}:
            return "a process started by a test is running"
        known = self._capture_fds()
        reopen = []
        for fd in sorted(_open_fds() - known):
            identity = _identity(fd)
            if identity is not None and identity not in self.allowed and identity != self.fds_before.get(fd):
                entry = self._reopenable(fd)
                if isinstance(entry, str):
                    return entry
                reopen.append(entry)
        self.reopen = reopen
        if self.session.shouldfail or self.session.shouldstop:
            return "the session is stopping"
        if self.session.config.pluginmanager.get_plugin("envgen-recorder") is None:
            return "envgen's results plugin is not active"
        return None

    def _reopenable(self, fd):
        """How a child opens ``fd`` anew, as ``(fd, path, flags, offset, inheritable)``, or why
        it cannot. A file the suite keeps open across tests (a log a conftest configures, a
        session fixture's file) shares its offset between every process forked with it: a
        child writing to it would move the checkpoint's and the next child's. A regular file
        can be opened again by each child at the offset the checkpoint had, provided its
        content there is what the checkpoint saw: a file read only, or one in the tree or the
        tests' temporary directory, which the checkpoint puts back before each child."""
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            target = "?"
        try:
            info = os.fstat(fd)
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            return "file descriptor %d is open (%s)" % (fd, target)
        if not stat.S_ISREG(info.st_mode):
            return "file descriptor %d is open (%s)" % (fd, target)
        if _identity(target) != (info.st_dev, info.st_ino):
            return "file descriptor %d is open on a file no longer at its path (%s)" % (fd, target)
        try:
            with open("/proc/self/fdinfo/%d" % fd, encoding="ascii", errors="replace") as handle:
                locked = any(line.startswith("lock:") for line in handle)
        except OSError:
            locked = True
        if locked:
            # A lock belongs to the open file: a file opened anew would not hold it.
            return "file descriptor %d holds a lock on %s" % (fd, target)
        restored = any(target.startswith(os.path.realpath(place) + os.sep) for place in (self.root, self.scratch))
        if flags & os.O_ACCMODE != os.O_RDONLY and not restored:
            return "file descriptor %d is open for writing outside the tree and the tests' temporary directory (%s)" % (fd, target)
        return (fd, target, flags, os.lseek(fd, 0, os.SEEK_CUR), os.get_inheritable(fd))

    def _ran_so_far(self):
        """The ids of the worktree code objects that have run in this process so far, or None
        when no profiler watched; stops the early profiler."""
        profiler = self.tracer.profiler if self.tracer is not None else self.early
        if profiler is None:
            return None
        stats = profiler.getstats()
        if profiler is self.early:
            profiler.disable()
            self.early = None
        return frozenset(id(entry.code) for entry in stats if not isinstance(entry.code, str) and self._inside(entry.code.co_filename) is not None)

    def _checkpoint(self, index):
        # A checkpoint serves the state its files were read in: from that reading on, neither
        # envgen's work here (the tree delta, the scratch copy) nor the checkpoint's own between
        # runs (plans, compiles) may let the cyclic collector finalize the suite's unreachable
        # objects, whose finalizers close what a child is to find open (sqlite-utils' dropped
        # connections and their database files). Each child collects as the run would.
        self.collecting = gc.isenabled()
        gc.disable()
        try:
            self._take_checkpoint(index)
        finally:
            if self.collecting and self.role == "runner":
                gc.enable()

    def _take_checkpoint(self, index):
        if index == 0:
            self.ran_before = self._ran_so_far()
        why = self._unshareable()
        delta = None
        if why is None:
            delta = _save_tree_delta(self.root, self.tree, os.path.join(self.vault, "tree-%d" % index))
            if isinstance(delta, str):
                why = delta
                self.positions.clear()
                for later in range(index, len(self.statuses)):
                    self.statuses[later] = why
        if why is not None:
            self.statuses[index] = why
            return
        copy = None
        if os.listdir(self.scratch):
            copy = os.path.join(self.vault, str(index))
            why = _copy_scratch(self.scratch, copy)
            if why is not None:
                self.statuses[index] = "cannot copy the tests' temporary directory: %s" % why
                return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = watchdog.fork()
        if pid == 0:
            self.role = "checkpoint"
            self.index = index
            if self.tracer is not None:
                self.tracer.silence()
            self.channel = self.channels[index]
            self.copy = copy
            self.delta = delta
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
            origin = getattr(getattr(module, "__spec__", None), "origin", None)
            if origin in entry["keys"]:
                continue
            # A module the project made itself and named after its file (bottle.ext, made by an
            # import hook in bottle.py) ran none of the file: only functions of another load of
            # it would miss their new code.
            if origin is None and not self._reaches_other_code(module, real, entry["keys"]):
                continue
            entry["unsafe"] = "%s was imported without the warm code cache" % name
        return files

    def _reaches_other_code(self, module, real, keys):
        """True when ``module``'s namespace reaches a function of the file ``real`` whose code
        is not the one the warm code cache served for it (under ``keys``)."""
        served = set()
        stack = [_COMPILED[key][1] for key in keys if key in _COMPILED]
        while stack:
            code = stack.pop()
            served.add(id(code))
            stack.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
        worktree = lambda name: isinstance(name, str) and self._inside(_module_file(sys.modules.get(name))) is not None  # noqa: E731
        for code_id, functions in _function_index([vars(module)], worktree).items():
            if code_id not in served and self._inside(functions[0].__code__.co_filename) == real:
                return True
        return False

    def _functions(self):
        """The functions of the worktree's modules here, by code (``_function_index``),
        found once: nothing changes in a checkpoint between the runs it serves."""
        if self.functions is None:
            modules = {
                name: module
                for name, module in list(sys.modules.items())
                if module is not None and self._inside(_module_file(module)) is not None
            }
            self.functions = _function_index([vars(module) for module in modules.values()], lambda name: isinstance(name, str) and name in modules)
        return self.functions

    def _plan(self, changed):
        if self.files is None:
            self.files = self._index_files()
        swaps = []
        for rel in changed:
            real = os.path.realpath(os.path.join(self.root, rel))
            entry = self.files.get(real)
            if entry is None:
                continue  # never imported here: a child imports it from disk
            if self.index == 0 and self.ran_before is None:
                # What ran before collection (a conftest importing project files) ran unchanged
                # and nothing recorded what: a child must import the changed file afresh.
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
                # Functions of a file imported before collection (by a conftest, or by pytest
                # itself when the server started) may take new code as long as none that
                # behaves differently has run yet: no run's tracer saw the server's start.
                ran = _ran_before(changed_codes, _RAN)
                if ran is not None:
                    raise _Decline("%s:%s ran when pytest started" % (rel, _qualname(ran)))
                if self.index == 0:
                    ran = _ran_before(changed_codes, self.ran_before)
                    if ran is not None:
                        raise _Decline("%s:%s ran before collection" % (rel, _qualname(ran)))
                if changed_codes:
                    swaps.extend(_plan_code_swap(changed_codes, self._functions()))
        return swaps

    def _serve(self):
        """Answers run requests until the server goes; returns only in a forked child."""
        while True:
            line = self.reader.readline()
            if not line:
                os._exit(0)
            request = json.loads(line)
            changed = request.get("changed") or []
            try:
                swaps = self._plan(changed)
                if self.delta is not None:
                    _check_tree_delta(self.delta, changed)
                for _, path, _, _, _ in self.reopen:
                    if os.path.relpath(path, self.root) in changed:
                        raise _Decline("%s was open at this checkpoint" % os.path.relpath(path, self.root))
            except _Decline as declined:
                self._send({"declined": str(declined)})
                continue
            why = _copy_scratch(self.copy, self.scratch)
            if why is not None:
                self._send({"declined": "cannot restore the scratch directory: %s" % why, "retire": True})
                continue
            if self.delta is not None:
                try:
                    _restore_tree_delta(self.root, self.delta)
                except OSError as error:
                    # The tree is half restored: no run may use it before the host rebuilds it.
                    self._send({"declined": "cannot restore the tree: %s" % error, "retire": True, "dirty": True})
                    continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = watchdog.fork()
            if pid == 0:
                self.role = "child"
                self._enter_child(request, swaps)
                return
            answer = _wait_group(pid, float(request["timeout"]))
            if answer.get("code") == _EXIT_DECLINED:
                answer = {"declined": "the child could not take the checkpoint over (%s)" % _last_line(request["log"])}
            self._send(answer)

    def _enter_child(self, request, swaps):
        """Makes a forked child the run the request asks for; exits when it cannot."""
        try:
            os.setpgid(0, 0)
            self.reader.close()
            self.channel.close()
            for fd, path, flags, offset, inheritable in self.reopen:
                opened = os.open(path, flags)
                os.lseek(opened, offset, os.SEEK_SET)
                os.dup2(opened, fd, inheritable=inheritable)
                os.close(opened)
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
            if request.get("select") is not None:
                # Collection has not started: it collects these paths instead of the suite's.
                config.args = list(request["select"])
            if request.get("only") is not None:
                config.pluginmanager.register(_Only(request["only"]), "envgen-only")
            if request.get("tbstyle") is not None:
                # What --tb would have set: read when a test fails and when the summary is written.
                config.option.tbstyle = request["tbstyle"]
            if request.get("plain"):
                _import_changed_plain()
            for function, code in swaps:
                function.__code__ = code
            import linecache

            for rel in request.get("changed") or []:
                for key in (os.path.join(self.root, rel), os.path.realpath(os.path.join(self.root, rel))):
                    linecache.cache.pop(key, None)
            # The run's own collector, once it holds what the checkpoint held open.
            if self.collecting:
                gc.enable()
        except BaseException:  # noqa: BLE001 - the server runs the request the ordinary way
            import traceback

            # To the run's log, which may not be open yet: the checkpoint says why from there.
            try:
                with open(request["log"], "a", encoding="utf-8") as log:
                    traceback.print_exc(file=log)
            except OSError:
                traceback.print_exc()
                sys.stderr.flush()
            os._exit(_EXIT_DECLINED)


def _last_line(path):
    """The last line of a declined child's log: the exception it could not take a checkpoint over with."""
    try:
        with open(path, encoding="utf-8", errors="replace") as log:
            lines = [line.strip() for line in log.read()[-4096:].splitlines() if line.strip()]
    except OSError:
        lines = []
    return lines[-1][:300] if lines else "no reason given"


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
    else:
        # What runs before collection, for the checkpoint there (see ``_plan``).
        import _lsprof

        collector.early = _lsprof.Profiler()
        collector.early.enable(subcalls=False, builtins=False)
    code = _pytest_main(args, plugins)
    _flush_standard_streams()
    if collector.role == "runner":
        why = "pytest ended (exit %d) before its test loop" % int(code)
        control.sendall((json.dumps({"ok": False, "why": why}) + "\n").encode("utf-8"))
        os._exit(int(code))
    _exit_run(code)


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
    control, control_theirs = (_high_socket(end) for end in socket.socketpair())
    pairs = [tuple(_high_socket(end) for end in socket.socketpair()) for _ in nodeids]
    sys.stdout.flush()
    sys.stderr.flush()
    pid = watchdog.fork()
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
    selection = request["precollected"].get("select")
    usable = [checkpoint for checkpoint in _CHECKPOINTS if checkpoint.ready and checkpoint.index <= wanted]
    if selection is not None:
        # Another selection of tests is collected afresh: only the checkpoint before collection serves it.
        usable = [checkpoint for checkpoint in usable if checkpoint.index == 0]
    if not usable:
        return None, "no checkpoint"
    latest = max(usable, key=lambda candidate: candidate.index)
    payload = {
        "changed": request["precollected"].get("changed") or [],
        "env": request.get("env") or {},
        "log": request["log"],
        "timeout": request["timeout"],
    }
    if selection is not None:
        payload["select"] = list(selection)
    if request.get("only") is not None:
        payload["only"] = list(request["only"])
    if request.get("plain"):
        payload["plain"] = True
    if request.get("tbstyle") is not None:
        payload["tbstyle"] = request["tbstyle"]
    reasons = []
    for checkpoint in [latest] + [candidate for candidate in usable if candidate.index == 0 and candidate is not latest]:
        answer = checkpoint.ask(payload, float(request["timeout"]) + _COLLECTED_GRACE)
        if answer is None:
            reasons.append("the checkpoint failed")
            continue
        if answer.get("retire"):
            checkpoint.stop()
        if answer.get("dirty"):
            # No run may see a half-restored tree: the host restarts the server and rebuilds it.
            raise RuntimeError(answer["declined"])
        if "declined" in answer:
            reasons.append(answer["declined"])
            continue
        answer["checkpoint"] = checkpoint.index - 1
        if reasons:
            answer["declined"] = "; ".join(reasons)
        return answer, None
    return None, "; ".join(reasons)
