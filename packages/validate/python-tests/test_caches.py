"""The code cache of pytest's assertion rewrites: a rewrite made by one server is read by the
next instead of made again, only for the same path, bytes, Python and pytest."""

import os
import shutil
import sys
import tempfile
import unittest

from envgen_warm import caches


TEST_FILE = """def test_sum():
    total = sum([1, 2])
    assert total == 4, "the sum"
"""


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


class RewriteCacheTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="envgen-root-")
        self.cache = tempfile.mkdtemp(prefix="envgen-cache-")
        self.out = os.path.join(tempfile.mkdtemp(prefix="envgen-out-"), "code-cache")
        _write(os.path.join(self.root, "tests", "test_a.py"), TEST_FILE)
        self.path = os.path.join(self.root, "tests", "test_a.py")
        caches._REWRITTEN.clear()

    def tearDown(self):
        caches._REWRITTEN.clear()
        for path in (self.root, self.cache, os.path.dirname(self.out)):
            shutil.rmtree(path, ignore_errors=True)

    def _run_test(self):
        """Runs test_sum from the code the cache holds; returns the assertion's message."""
        namespace = {}
        exec(caches._REWRITTEN[self.path][1], namespace)
        try:
            namespace["test_sum"]()
        except AssertionError as error:
            return str(error)
        return None

    def test_a_rewrite_made_once_is_read_by_the_next_server(self):
        hits, written = caches._rewrite(["tests/test_a.py"], self.root, self.cache, self.out)
        self.assertEqual(hits, [])
        self.assertEqual(len(written), 1)
        self.assertIn("assert 3 == 4", self._run_test())
        # The host adopts what was written; a later server reads it.
        shutil.copy(os.path.join(self.out, written[0]), os.path.join(self.cache, written[0]))
        caches._REWRITTEN.clear()
        hits, again = caches._rewrite(["tests/test_a.py"], self.root, self.cache, None)
        self.assertEqual((hits, again), (written, []))
        self.assertIn("assert 3 == 4", self._run_test())

    def test_a_file_the_server_holds_is_not_read_or_rewritten_again(self):
        caches._rewrite(["tests/test_a.py"], self.root, self.cache, self.out)
        self.assertEqual(caches._rewrite(["tests/test_a.py"], self.root, self.cache, self.out), ([], []))

    def test_other_bytes_or_another_path_are_another_key(self):
        key = caches._rewrite_key(self.path, TEST_FILE.encode())
        self.assertEqual(key, caches._rewrite_key(self.path, TEST_FILE.encode()))
        self.assertNotEqual(key, caches._rewrite_key(self.path, TEST_FILE.replace("4", "5").encode()))
        self.assertNotEqual(key, caches._rewrite_key(self.path + "x", TEST_FILE.encode()))

    def test_an_entry_that_is_not_marshalled_code_is_rewritten(self):
        key = caches._rewrite_key(self.path, TEST_FILE.encode())
        with open(os.path.join(self.cache, key), "wb") as handle:
            handle.write(b"not marshal data")
        hits, written = caches._rewrite(["tests/test_a.py"], self.root, self.cache, self.out)
        self.assertEqual((hits, written), ([], [key]))
        self.assertIn("assert 3 == 4", self._run_test())


if __name__ == "__main__":
    unittest.main()


class PreloadTest(unittest.TestCase):
    """Plugins pytest loads through its entry points are left to each session to import."""

    def test_a_fresh_session_under_error_filters_after_a_preload(self):
        try:
            import pytest_asyncio  # noqa: F401 - only its presence matters
        except ImportError:
            self.skipTest("needs a pytest plugin with a pytest11 entry point (python3-pytest-asyncio)")
        import subprocess

        root = tempfile.mkdtemp(prefix="envgen-root-")
        try:
            _write(os.path.join(root, "test_a.py"), "def test_a():\n    assert True\n")
            script = (
                "import sys\n"
                "from envgen_warm import caches\n"
                "answer = caches._preload({'modules': ['pytest_asyncio', 'json']}, sys.argv[1])\n"
                "assert 'json' in sys.modules and answer['failed'] == []\n"
                "import pytest\n"
                "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-W', 'error', sys.argv[1]]))\n"
            )
            support = os.path.dirname(os.path.dirname(os.path.abspath(caches.__file__)))
            env = dict(os.environ, PYTHONPATH=support)
            run = subprocess.run([sys.executable, "-c", script, root], capture_output=True, text=True, cwd=root, env=env)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        finally:
            shutil.rmtree(root, ignore_errors=True)
