"""The swap module: which functions of a changed file compile to different code, and when a
checkpoint's live functions can take the new code objects."""

import unittest

from envgen_warm.swap import _Decline, _changed_codes, _plan_code_swap

CLEAN = '''
def add(a, b):
    return a + b


class Box:
    def width(self):
        return 3

    def height(self):
        return 4
'''


def _compile(text):
    return compile(text, "/tree/pkg/mod.py", "exec", dont_inherit=True)


class ChangedCodesTest(unittest.TestCase):
    def test_finds_exactly_the_functions_whose_code_changed(self):
        changed = _changed_codes(_compile(CLEAN), _compile(CLEAN.replace("return 4", "return 5")))
        self.assertEqual([old.co_name for old, new in changed], ["height"])

    def test_an_unchanged_file_changes_nothing(self):
        self.assertEqual(_changed_codes(_compile(CLEAN), _compile(CLEAN)), [])

    def test_swaps_the_code_of_live_functions_in_place(self):
        clean, namespace = _compile(CLEAN), {}
        exec(clean, namespace)
        new_tree = _compile(CLEAN.replace("return a + b", "return a - b"))
        swaps = _plan_code_swap(_changed_codes(clean, new_tree))
        for function, code in swaps:
            function.__code__ = code
        self.assertEqual(namespace["add"](5, 3), 2)

    def test_declines_a_changed_function_face(self):
        clean, namespace = _compile(CLEAN), {}
        exec(clean, namespace)
        renamed = _changed_codes(clean, _compile(CLEAN.replace('def add(a, b):\n    return a + b', 'def add(a, b):\n    """Now documented."""\n    return a + b')))
        with self.assertRaises(_Decline):
            _plan_code_swap(renamed)


if __name__ == "__main__":
    unittest.main()
