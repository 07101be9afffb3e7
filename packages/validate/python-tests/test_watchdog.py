"""faulthandler's watchdog across the server's forks: paused for the fork, armed again on both
sides with the time it had left, so a child's cancel returns and its watchdog fires."""

import faulthandler
import os
import tempfile
import time
import unittest

from envgen_warm import watchdog


def _threads_become(count):
    """Whether this process has ``count`` threads within a second (a thread that ended stays
    listed for a moment after it is joined)."""
    deadline = time.monotonic() + 1
    while len(os.listdir("/proc/self/task")) != count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def _wait(pid, seconds):
    """The child's wait status, or None (the child killed) when it runs past ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


class WatchdogForkTest(unittest.TestCase):
    def tearDown(self):
        faulthandler.cancel_dump_traceback_later()

    def test_a_child_can_cancel_the_watchdog_it_was_forked_with(self):
        before = len(os.listdir("/proc/self/task"))
        faulthandler.dump_traceback_later(60, exit=True)
        self.assertTrue(watchdog.running())
        self.assertTrue(_threads_become(before + 1))
        pid = watchdog.fork()
        if pid == 0:
            alive = _threads_become(2)
            faulthandler.cancel_dump_traceback_later()
            os._exit(0 if alive and _threads_become(1) else 3)
        self.assertEqual(_wait(pid, 10), 0)
        # The parent's watchdog runs on.
        self.assertTrue(watchdog.running())
        self.assertTrue(_threads_become(before + 1))
        faulthandler.cancel_dump_traceback_later()
        self.assertFalse(watchdog.running())
        self.assertTrue(_threads_become(before))

    def test_the_childs_watchdog_fires_when_the_parents_would(self):
        with tempfile.TemporaryFile() as dump:
            faulthandler.dump_traceback_later(1.0, exit=True, file=dump)
            time.sleep(0.4)
            started = time.monotonic()
            pid = watchdog.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            # The parent's own would end this process at the same moment.
            faulthandler.cancel_dump_traceback_later()
            status = _wait(pid, 10)
            took = time.monotonic() - started
            # faulthandler's exit=True ends the process with status 1 after dumping its stack.
            self.assertIsNotNone(status)
            self.assertEqual(os.waitstatus_to_exitcode(status), 1)
            self.assertLess(took, 1.5)
            self.assertGreater(took, 0.3)
            dump.seek(0)
            # Its header names the time it had left when armed again.
            self.assertIn(b"Timeout (0:00:00.", dump.read())

    def test_a_watchdog_that_fired_runs_no_more(self):
        with tempfile.TemporaryFile() as dump:
            faulthandler.dump_traceback_later(0.05, file=dump)
            time.sleep(0.2)
            self.assertFalse(watchdog.running())
            pid = watchdog.fork()
            if pid == 0:
                os._exit(0 if _threads_become(1) else 3)
            self.assertEqual(_wait(pid, 10), 0)


if __name__ == "__main__":
    unittest.main()
