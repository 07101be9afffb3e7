"""The server's caches, filled once and served to every forked child: pytest's assertion rewrite
of unchanged test files, compiled code of unchanged source files, and the statement bounds
pytest computes for failure reports."""

import os
import sys
import types

from envgen_warm.startup import _COMPILED, _SERVED, _STARTUP, _inside, _module_file, _startup_files


_REWRITTEN = {}


# Set in a child whose run only asks which tests its changed test files collect.
_PLAIN = []


def _import_changed_plain():
    """In this (child) process, test files the cache has no rewrite of are compiled as they
    are, their asserts plain: a collection then costs a compile instead of pytest's rewrite
    (most of collecting a large test file). Only failure messages differ; whether a test is
    collected, passes or fails does not, except for a test that reads an assertion's message,
    so a caller reruns with rewriting when such a run ran a test."""
    _PLAIN.append(True)


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
        if _PLAIN:
            stat = os.stat(fn)
            return stat, compile(fn.read_bytes(), str(fn), "exec", dont_inherit=True)
        return original(fn, config)

    rewrite._rewrite_test = cached_rewrite_test


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
    """Makes pytest's failure reports cheap without changing a byte of them. Warm runs ask
    for none (``--tb=no``), but pytest still formats some whatever ``--tb`` says: a test
    module that fails to import is reported with a short traceback, which a bug in the
    package makes for every test module. For each traceback entry pytest parses the entry's
    whole file again and walks the whole tree (``_pytest._code.source``): on a large suite
    that is seconds per run. With this, each source text is parsed once
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
            if name in _SERVED:
                continue  # imported when the server started: its live functions hold that compile's code
            try:
                _COMPILED[name] = (source, compile(source, name, "exec", dont_inherit=True))
            except (SyntaxError, ValueError):  # the child compiles (and fails) on its own
                break


def _rewrite_key(path, source):
    """The name of a file's rewrite in the code cache: its path and bytes, and the Python and
    pytest versions that made the code (a rewrite is valid for exactly those)."""
    import hashlib
    from importlib.util import MAGIC_NUMBER

    import pytest

    digest = hashlib.sha256()
    for part in (MAGIC_NUMBER, pytest.__version__.encode("utf-8"), path.encode("utf-8", "surrogateescape"), source):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def _load_rewrite(cache, key):
    """The code of a cached rewrite, or None."""
    import marshal

    try:
        with open(os.path.join(cache, key), "rb") as handle:
            code = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def _store_rewrite(out, key, code):
    import marshal

    os.makedirs(out, exist_ok=True)
    temporary = os.path.join(out, key + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(marshal.dumps(code))
    os.rename(temporary, os.path.join(out, key))


def _rewrite(paths, root, cache=None, out=None):
    """pytest's assertion rewrite of each test file, compiled, into ``_REWRITTEN``: kept when
    the server already holds it for the same bytes, else read from the code cache ``cache``
    (a directory of earlier servers' rewrites, keyed by ``_rewrite_key``), else made here
    (and, with ``out``, written there for the host to add to the cache). Returns the keys
    read from the cache and those written."""
    import ast

    from _pytest.assertion.rewrite import rewrite_asserts

    hits, written = [], []
    for _, path, source in _sources(paths, root):
        known = _REWRITTEN.get(path)
        if known is not None and known[0] == source:
            continue
        key = _rewrite_key(path, source) if cache or out else None
        code = _load_rewrite(cache, key) if cache else None
        if code is not None:
            _REWRITTEN[path] = (source, code)
            hits.append(key)
            continue
        try:
            tree = ast.parse(source, filename=path)
            rewrite_asserts(tree, source, path, None)
            code = compile(tree, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):  # pytest rewrites (and reports) it in the child
            continue
        _REWRITTEN[path] = (source, code)
        if out:
            try:
                _store_rewrite(out, key, code)
                written.append(key)
            except (OSError, ValueError):
                pass
    return hits, written


def _plugin_packages():
    """Top-level modules of the distributions that declare pytest plugins (``pytest11`` entry
    points). A pytest session marks them for assertion rewriting when it starts; one imported
    before that, outside pytest's import hook, makes it warn "Module already imported so cannot
    be rewritten", an error that stops the session under ``-W error``, as plain pytest does not."""
    from importlib import metadata

    names = set()
    for dist in metadata.distributions():
        try:
            plugins = [entry for entry in dist.entry_points if entry.group == "pytest11"]
        except Exception:  # noqa: BLE001 - a broken distribution's metadata declares nothing
            continue
        if not plugins:
            continue
        names.update(entry.value.split(":")[0].split(".")[0] for entry in plugins)
        for path in dist.files or ():
            parts = path.parts
            if len(parts) == 1 and parts[0].endswith(".py"):
                names.add(parts[0][: -len(".py")])
            elif len(parts) == 2 and parts[1] == "__init__.py":
                names.add(parts[0])
    return names


def _preload(request, root):
    hits, written = _rewrite(request.get("rewrite") or [], root, request.get("cache"), request.get("cache_out"))
    _compile(request.get("compile") or [], root)
    failed = []
    plugins = _plugin_packages()
    for name in request.get("modules") or []:
        # A fresh session in a child imports pytest's plugins through its own hook, as plain pytest does.
        if name.split(".")[0] in plugins:
            continue
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - a module that cannot load in the server loads in the child
            failed.append(name)
    inside = sorted(
        name
        for name, module in list(sys.modules.items())
        if module is not None and name not in _STARTUP and _inside(_module_file(module), root)
    )
    _prepare_reports((request.get("rewrite") or []) + (request.get("compile") or []), root)
    return {"ok": True, "failed": failed, "inside": inside, "startup": _startup_files(root), "cache_hits": hits, "cache_written": written}

