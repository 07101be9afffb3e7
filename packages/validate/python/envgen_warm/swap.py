"""Code swapping: which functions of a changed file compile to different code, and whether a
checkpoint's live functions can take the new code objects in place (same face: name, flags,
closure, docstring)."""

import marshal
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
