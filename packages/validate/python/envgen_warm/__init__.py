"""envgen's warm pytest server: imports pytest (and the suite's outside modules) once, then
forks one child per run, so each run skips interpreter start-up and those imports.

Started inside the sandbox as ``python -m envgen_warm SOCKET [--own-pid-namespace]`` with the worktree as the
working directory (so ``sys.path`` is exactly that of ``python -m pytest``). It listens on a
Unix socket in a read-write mount and answers JSON lines, one request at a time:

- ``{"op": "preload", "modules": [name, ...], "rewrite": [relpath, ...], "compile":
  [relpath, ...], "cache": dir-or-null, "cache_out": dir-or-null}`` imports those modules in
  the server itself, compiles pytest's assertion rewrite of the ``rewrite`` test files and
  the ``compile`` source files (compiled, never executed; a child uses a compiled object
  only when the file's bytes are still exactly those compiled, so a mutated file is
  compiled afresh; rewriting and compiling are most of a small run's cost, since no
  bytecode is written), then answers ``{"ok": true, "failed": [...], "inside": [...],
  "startup": [relpath, ...], "cache_hits": [key, ...], "cache_written": [key, ...]}``;
  ``inside`` lists modules whose file lies in the worktree (the caller must then restart
  without a preload, or children would see stale project code), apart from those the server
  imported when it started: ``startup`` names their files (pytest's own dependencies when the
  project is one of them and comes first on the path, as iniconfig, pluggy or attrs do; a
  change to one of them reaches a child only as new code swapped into functions none of
  whose code ran before its checkpoint, see ``startup``). A rewrite is read from ``cache`` (a read-only directory of
  earlier servers' rewrites, one marshalled code object per file named by a hash of the
  file's path and bytes and the Python and pytest versions) when it is there, and each one
  made here is written to ``cache_out`` for the host to add to that cache (the host asks
  for it only in a server's first request, before any of the project's code ran).
- ``{"op": "run", "args": [...], "env": {...}, "timeout": seconds, "log": path,
  "analysis": path-or-null, "per_test": bool}`` forks a child that runs ``pytest.main(args)`` with ``env``
  added to its environment, stdout/stderr to ``log``, in its own process group and its own
  temporary directory; answers ``{"status": "exited"|"timeout"|"signaled", "code": int|null,
  "seconds": float}`` (a ``timeout`` with ``"watchdog": true`` where the plugin's watchdog ended a
  test past its own limit that never returned to the interpreter), with ``"limit": "memory"|"processes"`` when the sandbox's memory limit
  killed a process of the run or its process limit refused one a fork. With ``analysis``, the child also writes there
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
  runs it from scratch and says why in ``"declined"``; with ``"scratch": false`` in
  ``precollected`` it then runs nothing and answers ``{"fresh": true, "declined": why}``
  (the changed files are ones pytest imported when the server started: a run from scratch
  here would inherit them unchanged). With ``"select": [path, ...]`` in
  ``precollected`` (and the same paths in ``args``) only those paths are collected and run,
  from the checkpoint before collection or from scratch; with ``"only": [nodeid, ...]`` in
  the request, of the tests collected only those named run (the others are deselected); with
  ``"plain": true``, test files the server holds no rewrite of are imported with plain
  asserts (see ``caches._import_changed_plain``).

The server never imports the project's own modules (bar those pytest itself imports, named
by ``startup``), so every child imports the files as they are on disk when it starts.
"""
