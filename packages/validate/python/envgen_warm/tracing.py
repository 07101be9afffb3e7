"""What ran where: the suite tracer of analysis runs (which code objects of the worktree each
test, or no test, executed) and the analysis file it writes."""

import json
import os
import sys

import pytest

from envgen_warm.startup import _RAN_LINES, _inside, _module_file, _relative


def _hooks():
    """envgen's pytest plugin, which hides envgen's profilers from the suite (imported when a
    tracer starts: the plugin's directory is on the path of every run, not of every import)."""
    import envgen_pytest

    return envgen_pytest


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
        # A suite that asserts no profiler runs, or clears one, sees none (see envgen_pytest).
        _hooks()._hide_hook(self.profiler)

    def _note_spawn(self):
        if self.current is not None:
            self.spawning.add(self.current)

    def silence(self):
        """Stops tracing for good (in a forked process that must run as if untraced), and
        lets go of what it recorded: no code object stays referenced from here."""
        self.active = False
        self.profiler.disable()
        _hooks()._show_hook(self.profiler)
        self.profiler.clear()
        self.buckets = {None: set()}

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


def _lines_by_file(codes, root, files=None):
    files = {} if files is None else {path: set(lines) for path, lines in files.items()}
    for code in codes:
        if _inside(code.co_filename, root):
            files.setdefault(_relative(code.co_filename, root), set()).add(code.co_firstlineno)
    return {path: sorted(lines) for path, lines in sorted(files.items())}


def _write_analysis(path, tracer, root):
    tracer.switch(None)
    tracer.profiler.disable()
    _hooks()._show_hook(tracer.profiler)
    tracer.collect()
    modules = sorted(
        name
        for name, module in list(sys.modules.items())
        if module is not None and not name.startswith("__") and not _inside(_module_file(module), root)
    )
    payload = {
        "modules": modules,
        # What the server's own start ran of the project ran outside every test too.
        "outside": _lines_by_file(tracer.buckets.get(None, ()), root, _RAN_LINES),
        "coverage": {key: _lines_by_file(codes, root) for key, codes in tracer.buckets.items() if key is not None},
        "spawning": sorted(tracer.spawning),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
