"""The tree module: what a clean run wrote into the worktree is saved at a checkpoint and put
back for each run that goes on from it."""

import os
import tempfile
import unittest

from envgen_warm.swap import _Decline
from envgen_warm.tree import _check_tree_delta, _restore_tree_delta, _save_tree_delta, _tree_state


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


class TreeDeltaTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="envgen-tree-")
        self.vault = tempfile.mkdtemp(prefix="envgen-vault-")
        _write(os.path.join(self.root, "pkg", "mod.py"), "x = 1\n")
        _write(os.path.join(self.root, "tests", "test_a.py"), "def test(): pass\n")
        _write(os.path.join(self.root, "data", "old.txt"), "old\n")
        self.before = _tree_state(self.root)

    def test_saves_and_restores_written_created_and_removed_entries(self):
        _write(os.path.join(self.root, "tests", "generated.txt"), "made by a test\n")
        _write(os.path.join(self.root, "out", "deep", "result.json"), "{}\n")
        os.symlink("generated.txt", os.path.join(self.root, "tests", "link"))
        os.unlink(os.path.join(self.root, "data", "old.txt"))
        delta = _save_tree_delta(self.root, self.before, self.vault)
        self.assertIsInstance(delta, dict)
        self.assertEqual(delta["removed"], ["data/old.txt"])

        # The host puts the clean tree back between runs.
        os.unlink(os.path.join(self.root, "tests", "generated.txt"))
        os.unlink(os.path.join(self.root, "tests", "link"))
        os.unlink(os.path.join(self.root, "out", "deep", "result.json"))
        os.removedirs(os.path.join(self.root, "out", "deep"))
        _write(os.path.join(self.root, "data", "old.txt"), "old\n")

        _restore_tree_delta(self.root, delta)
        self.assertEqual(_read(os.path.join(self.root, "tests", "generated.txt")), "made by a test\n")
        self.assertEqual(_read(os.path.join(self.root, "out", "deep", "result.json")), "{}\n")
        self.assertEqual(os.readlink(os.path.join(self.root, "tests", "link")), "generated.txt")
        self.assertFalse(os.path.exists(os.path.join(self.root, "data", "old.txt")))
        self.assertEqual(_read(os.path.join(self.root, "pkg", "mod.py")), "x = 1\n")

    def test_declines_a_candidate_whose_file_a_test_wrote_before_the_checkpoint(self):
        _write(os.path.join(self.root, "pkg", "mod.py"), "x = 2\n")
        delta = _save_tree_delta(self.root, self.before, self.vault)
        with self.assertRaises(_Decline):
            _check_tree_delta(delta, ["pkg/mod.py"])
        _check_tree_delta(delta, ["tests/test_a.py"])

    def test_refuses_special_files(self):
        os.mkfifo(os.path.join(self.root, "tests", "pipe"))
        self.assertIn("special file", _save_tree_delta(self.root, self.before, self.vault))


if __name__ == "__main__":
    unittest.main()
