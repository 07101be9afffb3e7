"""The swap module: which functions of a changed file compile to different code, and when a
checkpoint's live functions can take the new code objects."""

import gc
import unittest
from unittest import mock

from envgen_warm.swap import _Decline, _changed_codes, _function_index, _own_refs, _plan_code_swap

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

    def test_a_module_that_ran_compares_as_a_fresh_compile_of_it(self):
        # Once the module ran, the frozensets hold the strings of the tuples they were made
        # from: constants that marshal (version 3 on) would then write as shared objects.
        text = 'SKIP = frozenset(("Content-Type", "Content-Length"))\n\n\nclass Headers:\n    bad = frozenset(("X-Old", "X-Gone"))\n' + CLEAN
        clean, namespace = _compile(text), {}
        exec(clean, namespace)
        changed = _changed_codes(clean, _compile(text.replace("return 4", "return 5")))
        self.assertEqual([old.co_name for old, new in changed], ["height"])

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


DECORATED = '''
import functools


def logged(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)
    return wrapper


class cached(property):
    pass


@logged
def add(a, b):
    return a + b


class Box:
    @staticmethod
    def unit():
        return 1

    @classmethod
    def make(cls):
        return cls()

    @cached
    def width(self):
        return 3


double = functools.partial(add, 2)
'''


class FunctionIndexTest(unittest.TestCase):
    """The function index: with it, a changed code whose every reference is accounted for
    takes its new code without a search of the heap; without that, the heap is searched."""

    def setUp(self):
        self.clean, self.namespace = _compile(DECORATED), {"__name__": "pkg.mod"}
        exec(self.clean, self.namespace)
        self.changed_text = DECORATED.replace("return a + b", "return a - b").replace("return 1\n", "return 0\n").replace("return 3", "return 4")

    def index(self):
        return _function_index([self.namespace], lambda name: name == "pkg.mod")

    def test_calibrates_on_this_interpreter(self):
        self.assertIsInstance(_own_refs(), int)

    def test_finds_every_holder_without_searching_the_heap(self):
        changed = _changed_codes(self.clean, _compile(self.changed_text))
        index = self.index()
        with mock.patch.object(gc, "get_referrers", side_effect=AssertionError("searched the heap")):
            swaps = _plan_code_swap(changed, index)
        searched = _plan_code_swap(_changed_codes(self.clean, _compile(self.changed_text)))
        self.assertEqual(sorted(function.__qualname__ for function, _ in swaps), ["Box.unit", "Box.width", "add"])
        self.assertEqual(sorted(function.__qualname__ for function, _ in searched), ["Box.unit", "Box.width", "add"])
        for function, code in swaps:
            function.__code__ = code
        self.assertEqual((self.namespace["add"](5, 3), self.namespace["double"](1), self.namespace["Box"].unit(), self.namespace["Box"]().width), (2, 1, 0, 4))

    def test_searches_the_heap_for_a_holder_the_index_does_not_see(self):
        index = self.index()
        hidden = [type(self.namespace["Box"].unit)(self.namespace["Box"].unit.__code__, {})]  # a second function, out of the index's sight
        changed = _changed_codes(self.clean, _compile(self.changed_text))
        with mock.patch.object(gc, "get_referrers", wraps=gc.get_referrers) as search:
            swaps = _plan_code_swap(changed, index)
        search.assert_called_once()
        self.assertIn(hidden[0], [function for function, _ in swaps])

    def test_declines_a_container_holding_a_changed_code(self):
        index = self.index()
        kept = [self.namespace["add"].__wrapped__.__code__]
        with self.assertRaisesRegex(_Decline, "a list holds changed code"):
            _plan_code_swap(_changed_codes(self.clean, _compile(self.changed_text)), index)
        self.assertEqual(len(kept), 1)


if __name__ == "__main__":
    unittest.main()
