"""Code swapping: which functions of a changed file compile to different code, and whether a
checkpoint's live functions can take the new code objects in place (same face: name, flags,
closure, docstring)."""

import marshal
import sys
import types


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
        # Version 2 writes no back-references: from version 3 on, marshal marks an object
        # shared when something else holds it, so the constants of code that ran (the strings
        # of a tuple a frozenset was made from, which the frozenset holds) would read otherwise
        # than a fresh compile's, and every change to the file would seem to change its
        # module- or class-level code (bottle.py's BaseResponse.bad_headers).
        return ("const", marshal.dumps(const, 2))
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


def _ran_before(changed, ran_before):
    """The first changed code that ran (its id is in ``ran_before``) and behaves differently
    now, or None. (A function of its own: no loop variable outlives it to hold a code.)"""
    for old, new in changed:
        if id(old) in ran_before and (new is None or _shape(new) != _shape(old)):
            return old
    return None


def _ref_counts(changed):
    """``sys.getrefcount`` of each changed code, as seen from here (see ``_OWN_REFS``)."""
    return [sys.getrefcount(old) for old, _ in changed]


def _calibrate():
    """How many references to a changed code ``_ref_counts`` sees besides the functions that
    run it: its enclosing code's constants, the ``changed`` pair and the counting's own. Found
    on a code made here, held by one function and then by two (each must add one), or None
    when this interpreter's counts do not behave so (the heap is then always searched)."""
    import sysconfig

    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return None  # deferred and biased reference counts: not exact
    module = compile("def f():\n    return 1\n", "<envgen-calibration>", "exec")
    changed = [(next(const for const in module.co_consts if isinstance(const, types.CodeType)), None)]
    one, two = {}, {}
    exec(module, one)
    [first] = _ref_counts(changed)
    exec(module, two)
    [second] = _ref_counts(changed)
    if second != first + 1:
        return None
    return first - 1


_OWN_REFS = []


def _own_refs():
    if not _OWN_REFS:
        _OWN_REFS.append(_calibrate())
    return _OWN_REFS[0]


_INDEX_LIMIT = 200_000


_PROPERTY_SLOTS = tuple(property.__dict__[name] for name in ("fget", "fset", "fdel"))


def _function_index(namespaces, inside_module):
    """id(code) -> the functions that run it, found from ``namespaces`` (the worktree modules'
    dicts): functions, what decorators and ``functools.wraps`` keep of them (closure cells,
    ``__wrapped__``), static and class methods, properties, partials, bound methods, and the
    classes and instances of worktree modules and the plain containers on the way, up to
    ``_INDEX_LIMIT`` objects (module-level data tables can be large). Reads only C-level slots
    and ``__dict__``s: no project code runs. It need not be complete (see ``_plan_code_swap``)."""
    import functools

    found = {}
    seen = set()
    stack = [value for namespace in namespaces for value in list(namespace.values())]
    while stack and len(seen) < _INDEX_LIMIT:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        kind = type(value)
        if kind is types.FunctionType:
            found.setdefault(id(value.__code__), []).append(value)
            stack.extend(value.__dict__.values())
            for cell in value.__closure__ or ():
                try:
                    stack.append(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
        elif kind in (staticmethod, classmethod, types.MethodType):
            stack.append(value.__func__)
        elif kind is functools.partial:
            stack.append(value.func)
        elif kind in (dict, list, tuple, set, frozenset):
            stack.extend(value.values() if kind is dict else value)
        elif isinstance(value, type):
            if inside_module(type.__getattribute__(value, "__dict__").get("__module__")):
                stack.extend(type.__getattribute__(value, "__dict__").values())
        else:
            if isinstance(value, property):  # and its subclasses: their slots read as property's
                stack.extend(slot.__get__(value, property) for slot in _PROPERTY_SLOTS)
            if inside_module(type.__getattribute__(kind, "__dict__").get("__module__")):
                try:
                    stack.extend(object.__getattribute__(value, "__dict__").values())
                except (AttributeError, TypeError):
                    pass
    return found


def _swap_of(holder, old, new):
    if new is None or not _same_function_face(old, new):
        raise _Decline("%s changed its name, flags, closure or docstring" % _qualname(old))
    return holder, new


def _plan_code_swap(changed, functions=None):
    """(function, new code) for every live function that runs one of the ``changed`` codes;
    declines when one has no same-faced counterpart, or when anything but a function (a
    suspended generator, a container) holds such a code.

    With ``functions`` (see ``_function_index``): when each changed code's reference count is
    exactly the references counted in ``_OWN_REFS`` plus the functions found for it, those
    are all its holders and the heap is not searched (a search costs tens of milliseconds on
    a suite's heap); otherwise it is."""
    own = _own_refs() if functions is not None else None
    if own is not None:
        counts = _ref_counts(changed)
        if all(count == own + len(functions.get(id(old), ())) for (old, _), count in zip(changed, counts)):
            return [_swap_of(holder, old, new) for old, new in changed for holder in functions.get(id(old), ())]
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
        swaps.append(_swap_of(holder, old, counterparts[id(old)]))
    return swaps
