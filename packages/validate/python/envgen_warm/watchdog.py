"""faulthandler's watchdog across the server's forks.

``faulthandler.dump_traceback_later`` runs a thread of its own, in C, until the timeout fires
or ``cancel_dump_traceback_later`` joins it. A suite may arm it for the whole session (joblib's
conftest: ``dump_traceback_later(30 * 60, exit=True)`` in ``pytest_configure``, cancelled in
``pytest_unconfigure``). No thread survives a fork, so a child forked with it armed holds a
watchdog that never fires and whose cancel waits for a thread that is gone; and a thread
started outside Python refuses every checkpoint. So the server records what the suite armed
(it wraps both functions before any conftest is imported), and each fork of its own pauses
the watchdog and arms it again, with the time it had left, in the parent and in the child:
each has the watchdog a process of the suite would have. The suite's own forks are left as
they are without envgen."""

import faulthandler
import os
import sys
import time

_arm = faulthandler.dump_traceback_later
_cancel = faulthandler.cancel_dump_traceback_later

# (deadline on the monotonic clock, timeout, repeat, file, exit) while the suite's watchdog runs.
_armed = None


def _dump_traceback_later(timeout, repeat=False, file=sys.stderr, exit=False):
    global _armed
    _arm(timeout, repeat=repeat, file=file, exit=exit)
    _armed = (time.monotonic() + timeout, timeout, repeat, file, exit)


def _cancel_dump_traceback_later():
    global _armed
    _cancel()
    _armed = None


_dump_traceback_later.__doc__ = _arm.__doc__
_cancel_dump_traceback_later.__doc__ = _cancel.__doc__
faulthandler.dump_traceback_later = _dump_traceback_later
faulthandler.cancel_dump_traceback_later = _cancel_dump_traceback_later


def running():
    """Whether the suite's watchdog thread runs: armed, and not yet fired for good."""
    if _armed is None:
        return False
    deadline, _, repeat, _, _ = _armed
    return repeat or time.monotonic() < deadline


def fork():
    """``os.fork()`` with the suite's watchdog paused across it and armed again on both sides
    for the time it had left (at least a millisecond: one past its deadline fires at once; a
    repeating one starts its period anew)."""
    if not running():
        return os.fork()
    deadline, timeout, repeat, file, exit = _armed
    _cancel()
    try:
        return os.fork()
    finally:
        _arm(timeout if repeat else max(deadline - time.monotonic(), 0.001), repeat=repeat, file=file, exit=exit)
