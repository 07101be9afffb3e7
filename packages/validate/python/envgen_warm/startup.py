"""The server's own start: pytest imports its dependencies when it starts, and the project
under test may be one of them, first on the path (iniconfig, pluggy, attrs). Every child
inherits such modules as the server imported them, so a changed file of theirs reaches a
run only as new code swapped into their live functions, and only where none of the changed
code ran before the run's checkpoint, the server's start included, which no run's tracer
sees. So, from before pytest is imported until the server serves: the worktree's files are
compiled as the code cache compiles them (their live functions then hold exactly the code
objects a checkpoint compares and swaps), and a profiler notes which of their code objects
ran. Imports nothing of pytest's, and nothing of the project's but what pytest imports."""

import os
import sys


# The code cache's table, filled here first: loader path -> (source bytes, code of its module).
_COMPILED = {}


# Loader paths whose module code came from ``_COMPILED`` in this process (the collector's
# functions then hold exactly those code objects).
_SERVED = set()


# Worktree modules the server imported before any request.
_STARTUP = set()


# ids of the worktree code objects the server's start ran (``_COMPILED`` keeps them alive, so
# an id is no other object's), and their first lines by repo-relative file.
_RAN = set()
_RAN_LINES = {}


_WATCH = {}


def _inside(path, root):
    if not path or path.startswith("<"):
        return False
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _module_file(module):
    return getattr(module, "__file__", None) or ""


def _relative(path, root):
    return os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/")


def _watch_start(root):
    """Compiles the worktree's modules imported from now on into ``_COMPILED`` (never from a
    stale bytecode file) and, from the first of them on (none of their code can run before),
    profiles what runs, until ``_note_startup``."""
    from importlib import machinery

    original = machinery.SourceFileLoader.get_code

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        if not _inside(path, root):
            return original(self, fullname)
        source = self.get_data(path)
        code = compile(source, path, "exec", dont_inherit=True)
        _COMPILED[path] = (source, code)
        _SERVED.add(path)
        if "profiler" not in _WATCH:
            import _lsprof

            _WATCH["profiler"] = _lsprof.Profiler()
            _WATCH["profiler"].enable(subcalls=False, builtins=False)
        return code

    machinery.SourceFileLoader.get_code = get_code
    _WATCH["original"] = original


def _note_startup(root):
    """Ends the watch of the server's start: notes the worktree modules it imported and which
    of their code objects ran."""
    from importlib import machinery

    profiler = _WATCH.pop("profiler", None)
    if profiler is not None:
        profiler.disable()
        for entry in profiler.getstats():
            code = entry.code
            if not isinstance(code, str) and _inside(code.co_filename, root):
                _RAN.add(id(code))
                _RAN_LINES.setdefault(_relative(code.co_filename, root), set()).add(code.co_firstlineno)
        profiler.clear()
    if "original" in _WATCH:
        machinery.SourceFileLoader.get_code = _WATCH.pop("original")
    _STARTUP.update(
        name for name, module in list(sys.modules.items()) if module is not None and _inside(_module_file(module), root)
    )


def _startup_files(root):
    """Repo-relative files of the worktree modules the server imported when it started."""
    return sorted({_relative(_module_file(sys.modules[name]), root) for name in _STARTUP if name in sys.modules})
