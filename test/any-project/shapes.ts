import { readFileSync } from 'node:fs';
import { writesTreeConftest } from '../support/writes-tree-conftest.js';

/**
 * Small projects, one per shape of real-world pytest set-up that envgen must handle without
 * changing what the suite does. Each is a complete repo (files by path); `expect` says what
 * the e2e suite checks beyond the common bars.
 */

/**
 * iniconfig as Debian ships it (python3-pytest depends on it): a project pytest itself imports
 * when it starts, with its own tests below.
 */
const INICONFIG = readFileSync('/usr/lib/python3/dist-packages/iniconfig/__init__.py', 'utf8');

/** A little library every shape tests: branches, loops and arithmetic for the mutators. */
const LIB = `"""Interval arithmetic for the fixtures."""


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(values):
    result = 0
    for value in values:
        result = result + value
    return result


def scale(values, factor):
    return [value * factor for value in values]


class Interval:
    def __init__(self, lo, hi):
        self.lo = lo
        self.hi = hi

    def width(self):
        return self.hi - self.lo

    def contains(self, x):
        return self.lo <= x <= self.hi
`;

const LIB_TESTS = `from ivl import Interval, clamp, scale, total


def test_clamp_low():
    assert clamp(-3, 0, 10) == 0


def test_clamp_high():
    assert clamp(30, 0, 10) == 10


def test_clamp_inside():
    assert clamp(4, 0, 10) == 4


def test_total():
    assert total([1, 2, 3]) == 6


def test_scale():
    assert scale([1, 2], 3) == [3, 6]


def test_width():
    assert Interval(2, 7).width() == 5


def test_contains():
    assert Interval(2, 7).contains(3)
    assert not Interval(2, 7).contains(9)
`;

/** The packaging of the fixtures' package, built by Debian's setuptools. */
const IVL_PYPROJECT = `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "ivl"
version = "0.3.0"
`;

/** {@link LIB} with examples in its docstrings. */
const DOCTESTED_LIB = LIB.replace('def clamp(x, lo, hi):\n', 'def clamp(x, lo, hi):\n    """x within [lo, hi].\n\n    >>> clamp(-3, 0, 10), clamp(30, 0, 10), clamp(4, 0, 10)\n    (0, 10, 4)\n    """\n')
  .replace('def total(values):\n', 'def total(values):\n    """The sum.\n\n    >>> total([1, 2, 3])\n    6\n    """\n')
  .replace('    def width(self):\n', '    def width(self):\n        """hi - lo.\n\n        >>> Interval(2, 7).width()\n        5\n        """\n')
  .replace('    def contains(self, x):\n', '    def contains(self, x):\n        """lo <= x <= hi.\n\n        >>> Interval(2, 7).contains(3), Interval(2, 7).contains(9)\n        (True, False)\n        """\n');

/** A package whose docstrings' examples pytest runs (`--doctest-modules`), with a conftest.py at the root. */
const DOCTESTED_ROOT_CONFTEST = {
  'pytest.ini': '[pytest]\naddopts = --doctest-modules\n',
  'conftest.py': 'collect_ignore = ["setup.py"]\n',
  'setup.py': 'from setuptools import setup\n\nsetup(name="ivl", packages=["ivl"])\n',
  'ivl/__init__.py': DOCTESTED_LIB,
};

export interface Shape {
  /** What kind of project this stands for. */
  about: string;
  files: Record<string, string>;
  /** Node ids the clean baseline must hold (beyond agreeing with plain pytest). */
  mustHold?: string[];
  /** A test id (or prefix) that must show up in some kept instance's FAIL_TO_PASS. */
  failingSomewhere?: string;
  /** Candidates to try (default 16). */
  count?: number;
  /** Some candidates hang: they must be rejected as timeouts. */
  hangs?: boolean;
  /** Some parameter ids are made at import (a random value, the time): no two runs share them. */
  renamesIds?: boolean;
  /**
   * pytest imports the project's package itself when it starts: every candidate goes the
   * reference way (a fresh interpreter) and its bundle's checks run cold (the first one all of them, as the run's replay).
   */
  importedByPytest?: boolean;
  /** Tagged as a release (then one commit on top), a checkout whose version git describes. */
  releaseTag?: string;
  /** Plain pytest runs it as its developers do, after \`pip install -e .\` (see plainPytest). */
  installed?: boolean;
  /** What its developers run before that install (see plainPytest's `prepare`). */
  plainPrepare?: string[];
  /** The directory of the project in the repo its developers run pytest in (a monorepo's package). */
  project?: string;
  /** Options plain pytest needs on this machine beyond the project's own (see each shape). */
  plainArgs?: string[];
  /** Most candidates go on from a checkpoint of the clean run: nothing in the set-up makes them decline. */
  resumes?: boolean;
  /** No candidate breaks every test (the package's code that ran at import is left as it is). */
  keepsImport?: boolean;
  /**
   * Variables the machine that runs envgen has set for its own tools, not for the project: the
   * project's tests run as a login shell's would, without them.
   */
  machineEnv?: Record<string, string>;
  /**
   * The project's config stops a run at its second failure (`--maxfail=2`): each FAIL_TO_PASS
   * test of the first kept bugs that break more than two fails when plain pytest runs it
   * alone on the bug's tree, where no earlier failure can stop the run before it.
   */
  stopsEarly?: boolean;
  /**
   * A test that runs the garbage collector and uses none of the project's code: the errors of
   * finalizers a bug's failures leave behind land in the tests that failed, in every run, so
   * it is in no kept bug's FAIL_TO_PASS.
   */
  finalizerErrors?: string;
}

/** A setup.py that compiles ivl/_native.c into `ivl._native`, and the package that imports it. */
const NATIVE_SETUP = `from setuptools import Extension, setup

setup(name="ivl", version="0.4.0", packages=["ivl"], ext_modules=[Extension("ivl._native", ["ivl/_native.c"])])
`;
/** The tests of a package whose `centre` calls `ivl._native`. */
const NATIVE_TESTS = `${LIB_TESTS}

from ivl import centre


def test_centre():
    assert centre(Interval(2, 8)) == 5
`;
/** The C source of `ivl._native`. */
const NATIVE_C = `#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *midpoint(PyObject *self, PyObject *args) {
    long lo, hi;
    if (!PyArg_ParseTuple(args, "ll", &lo, &hi)) return NULL;
    return PyLong_FromLong(lo + (hi - lo) / 2);
}

static PyMethodDef methods[] = {{"midpoint", midpoint, METH_VARARGS, "The integer midpoint."}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
`;
const NATIVE_INIT = `${LIB}

from ivl._native import midpoint


def centre(interval):
    return midpoint(interval.lo, interval.hi)
`;

export const SHAPES: Record<string, Shape> = {
  'decorators-at-import': {
    about: 'a package whose decorators run when the test modules import it, the wrappers they return only in tests (decorator, six, toolz): bugs go on the wrappers, not where they break the import',
    files: {
      'deco/__init__.py': '',
      'deco/rules.py': `"""Rules registered by a decorator when their modules are imported."""
import functools

REGISTRY = {}


def rule(name, *, priority=0, tags=()):
    if not name or not name.isidentifier():
        raise ValueError("bad rule name %r" % (name,))
    if priority < 0:
        raise ValueError("priority must not be negative")
    normalized = tuple(sorted(set(tags)))

    def register(fn):
        calls = {"count": 0}

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            calls["count"] = calls["count"] + 1
            result = fn(*args, **kwargs)
            if result is None:
                return "<%s>" % name
            if isinstance(result, str):
                return result.strip()
            return result

        wrapper.calls = calls
        wrapper.priority = priority
        wrapper.tags = normalized
        REGISTRY[name] = wrapper
        return wrapper

    return register


def ordered():
    return sorted(REGISTRY, key=lambda name: (-REGISTRY[name].priority, name))
`,
      'deco/builtin.py': `from deco.rules import rule


@rule("upper", priority=2, tags=("text",))
def upper(value):
    return value.upper()


@rule("nothing", tags=("misc",))
def nothing(value):
    return None


@rule("double", priority=1, tags=("math", "text"))
def double(value):
    return value * 2


@rule("padded", tags=("text",))
def padded(value):
    return "  %s  " % value
`,
      'tests/test_rules.py': `from deco import builtin
from deco.rules import REGISTRY, ordered


def test_upper():
    assert builtin.upper("ab") == "AB"


def test_nothing_named():
    assert builtin.nothing(1) == "<nothing>"


def test_double():
    assert builtin.double(3) == 6


def test_padded_stripped():
    assert builtin.padded("x") == "x"


def test_calls_counted():
    before = builtin.double.calls["count"]
    builtin.double(1)
    builtin.double(2)
    assert builtin.double.calls["count"] == before + 2


def test_ordered():
    assert ordered() == ["upper", "double", "nothing", "padded"]


def test_tags():
    assert REGISTRY["double"].tags == ("math", "text")
`,
    },
    count: 24,
    keepsImport: true,
  },
  'filterwarnings-error-writes-tree': {
    about: 'filterwarnings = error in pytest.ini, and a test that writes into its own tree',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_write.py': `import os


def test_writes_into_tree():
    path = os.path.join(os.path.dirname(__file__), "generated.txt")
    with open(path, "w") as handle:
        handle.write("written by a test")
    assert os.path.exists(path)
`,
      'pytest.ini': '[pytest]\nfilterwarnings =\n    error\n',
    },
  },
  'maxfail-addopts': {
    about: 'addopts --maxfail=2 in pytest.ini (pyeve/cerberus): a run stops after its second failure',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_more.py': LIB_TESTS.replace(/def test_/g, 'def test_more_'),
      'pytest.ini': '[pytest]\naddopts = --maxfail=2 -rf\n',
    },
    stopsEarly: true,
  },
  'finalizer-errors-warnings-error': {
    about: "filterwarnings = error and objects whose finalizer raises when a bug leaves them half-made (tqdm's bars), with a later test that runs the garbage collector (a leak check)",
    files: {
      'bars/__init__.py': `"""Progress bars that take the first free position."""


def free_position(taken):
    free = set(range(len(taken) + 1)).difference(taken)
    return min(free)


class Bar:
    def __init__(self, total, taken=()):
        self.total = total
        self.n = 0
        self.pos = free_position(taken)

    def update(self, step=1):
        self.n = self.n + step
        return self.n

    def close(self):
        return "closed at %d after %d of %d" % (self.pos, self.n, self.total)

    def __del__(self):
        self.close()
`,
      'tests/test_bars.py': `from bars import Bar, free_position


def test_first_position():
    assert Bar(3).pos == 0


def test_next_free():
    assert Bar(3, taken=[0, 1]).pos == 2


def test_gap():
    assert Bar(3, taken=[0, 2]).pos == 1


def test_update():
    bar = Bar(3)
    bar.update()
    assert bar.update(2) == 3


def test_close():
    assert Bar(2, taken=[0]).close() == "closed at 1 after 0 of 2"


def test_free_position():
    assert free_position([1, 2]) == 0
`,
      'tests/test_zz_leaks.py': `import gc
import weakref


class Node:
    pass


def test_collector_frees_cycles():
    node = Node()
    node.me = node
    ref = weakref.ref(node)
    del node
    gc.collect()
    assert ref() is None
`,
      'pytest.ini': '[pytest]\nfilterwarnings =\n    error\n',
    },
    finalizerErrors: 'tests/test_zz_leaks.py::test_collector_frees_cycles',
  },
  'strict-addopts-plugins': {
    about: "setup.cfg with addopts -p <local plugin> --strict-markers -W error and the cache plugin's --cache-clear --ff (pydocstyle), xfail_strict, markers",
    files: {
      'ivl/__init__.py': LIB,
      'tests/__init__.py': '',
      'tests/plugin.py': `import pytest


@pytest.fixture
def lo_bound():
    return 0
`,
      'tests/test_ivl.py': `${LIB_TESTS}

import pytest


@pytest.mark.slowish
def test_marked(lo_bound):
    from ivl import clamp

    assert clamp(-1, lo_bound, 5) == lo_bound


@pytest.mark.xfail(reason="known")
def test_known_failure():
    assert clamp(1, 0, 1) == 2
`,
      'setup.cfg': '[tool:pytest]\naddopts = -p tests.plugin --strict-markers -W error -ra --cache-clear --ff\nxfail_strict = true\nmarkers =\n    slowish: a marker the suite declares\n',
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl")\n',
    },
  },
  'pyproject-importlib-doctests': {
    about: 'pyproject.toml [tool.pytest.ini_options] with --import-mode=importlib, doctest modules and a doctest glob',
    files: {
      'src/ivl/__init__.py': LIB.replace(
        'def scale(values, factor):\n',
        'def scale(values, factor):\n    """Each value times factor.\n\n    >>> scale([1, 2], 2)\n    [2, 4]\n    """\n',
      ),
      'tests/test_ivl.py': LIB_TESTS,
      'docs/usage.rst': 'Usage\n=====\n\n>>> from ivl import total\n>>> total([2, 3])\n5\n',
      'pyproject.toml': `[project]
name = "ivl"
version = "0.1"

[tool.pytest.ini_options]
addopts = "--import-mode=importlib --doctest-modules --doctest-glob='*.rst'"
testpaths = ["tests", "src", "docs"]
pythonpath = ["src"]
`,
    },
    mustHold: ['docs/usage.rst::usage.rst', 'src/ivl/__init__.py::src.ivl.__init__.scale'],
    // A bug in total breaks the docs' doctest too: the weakening deletes the examples of docs/usage.rst.
    failingSomewhere: 'docs/usage.rst::usage.rst',
  },
  'tox-ini-nested-conftest': {
    about: 'tox.ini [pytest] config with testpaths, conftests at two levels, chdir, tmp_path, monkeypatch, subprocesses and locale',
    files: {
      'ivl/__init__.py': LIB,
      'tox.ini': '[tox]\nenvlist = py3\n\n[pytest]\ntestpaths = tests\n',
      'tests/conftest.py': `import pytest


@pytest.fixture
def bounds():
    return (0, 10)
`,
      'tests/unit/conftest.py': `import pytest


@pytest.fixture
def values(bounds):
    return list(range(*bounds))
`,
      'tests/unit/test_ivl.py': LIB_TESTS,
      'tests/unit/test_env.py': `import locale
import os
import subprocess
import sys

from ivl import clamp, total


def test_values(values):
    assert total(values) == 45


def test_tmp_path(tmp_path):
    (tmp_path / "x.txt").write_text("3")
    assert clamp(int((tmp_path / "x.txt").read_text()), 0, 2) == 2


def test_monkeypatch(monkeypatch):
    monkeypatch.setenv("IVL_LIMIT", "7")
    monkeypatch.chdir(os.path.dirname(__file__))
    assert clamp(int(os.environ["IVL_LIMIT"]), 0, 5) == 5


def test_subprocess():
    code = "import sys; sys.path.insert(0, %r); from ivl import total; print(total([4, 5]))" % os.getcwd()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "9"


def test_locale():
    assert locale.getpreferredencoding(False)


def test_chdir_and_stay():
    os.chdir(os.path.dirname(__file__))
    assert total([1]) == 1
`,
    },
  },
  'inherited-unittest-mixins': {
    about: 'unittest suites whose tests live in base classes and mixins of another test file',
    files: {
      'ivl/__init__.py': LIB,
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl")\n',
      'tests/__init__.py': '',
      'tests/base.py': `from ivl import Interval, clamp, total


class ClampMixin:
    lo = 0
    hi = 10

    def test_clamp_low(self):
        self.assertEqual(clamp(self.lo - 5, self.lo, self.hi), self.lo)

    def test_clamp_high(self):
        self.assertEqual(clamp(self.hi + 5, self.lo, self.hi), self.hi)


class IntervalBase:
    def test_width(self):
        self.assertEqual(Interval(self.lo, self.hi).width(), self.hi - self.lo)

    def test_total(self):
        self.assertEqual(total([self.lo, self.hi]), self.lo + self.hi)
`,
      'tests/test_small.py': `import unittest

from tests.base import ClampMixin, IntervalBase


class TestSmall(ClampMixin, IntervalBase, unittest.TestCase):
    lo = 1
    hi = 3


class TestOwn(unittest.TestCase):
    def test_own(self):
        from ivl import scale

        self.assertEqual(scale([1], 2), [2])
`,
      'tests/test_large.py': `import unittest

from tests.base import ClampMixin, IntervalBase


class TestLarge(ClampMixin, IntervalBase, unittest.TestCase):
    lo = 100
    hi = 300
`,
    },
    failingSomewhere: 'tests/test_large.py::TestLarge::',
  },
  'generated-data-driven-tests': {
    about: 'test methods generated at import, one per case of a data file (no definition in the source)',
    files: {
      'ivl/__init__.py': LIB,
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl")\n',
      'tests/__init__.py': '',
      'tests/cases.txt': 'low -3 0\nhigh 30 10\ninside 4 4\nedge 10 10\n',
      'tests/test_cases.py': `import os
import unittest

from ivl import clamp, total


class Cases(unittest.TestCase):
    @classmethod
    def load(cls, path):
        with open(path) as handle:
            for line in handle:
                name, value, expected = line.split()

                def method(self, value=int(value), expected=int(expected)):
                    self.assertEqual(clamp(value, 0, 10), expected)

                setattr(cls, "test_" + name, method)


Cases.load(os.path.join(os.path.dirname(__file__), "cases.txt"))


class TestTotal(unittest.TestCase):
    def test_total(self):
        self.assertEqual(total([1, 2]), 3)
`,
    },
    failingSomewhere: 'tests/test_cases.py::Cases::test_',
  },
  'parametrize-odd-ids': {
    about: "parametrized tests whose ids hold '::', quotes, spaces, brackets and ' - '",
    files: {
      'ivl/__init__.py': LIB,
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl")\n',
      'tests/test_ids.py': `import pytest

from ivl import clamp, total


@pytest.mark.parametrize(
    "text,expected",
    [
        ("sum(a)::integer as x, y", 3),
        ("it's [1] - \\"q\\"", 3),
        ("a::b::c", 3),
        ("plain", 3),
    ],
)
def test_group(text, expected):
    assert total([1, 2]) == expected


@pytest.mark.parametrize("x", [-5, 5, 50], ids=["low::edge", "mid [x]", "high - top"])
def test_clamp_ids(x):
    assert 0 <= clamp(x, 0, 10) <= 10
`,
    },
    failingSomewhere: 'tests/test_ids.py::test_group[sum(a)::integer as x, y-3]',
  },
  'volatile-parameter-ids': {
    about: 'parameter ids made at import from a random value and the time, so no two runs name those tests alike',
    files: {
      'ivl/__init__.py': LIB,
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl")\n',
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_stamped.py': `import datetime as dt
import uuid

import pytest

from ivl import clamp, total


@pytest.mark.parametrize(
    "token",
    ["fixed", uuid.uuid4().hex, dt.datetime.now().strftime("%H:%M:%S.%f %Y-%m-%d")],
)
def test_stamped(token):
    assert clamp(len(token), 0, 100) == len(token)
    assert total([len(token), 1]) == len(token) + 1
`,
    },
    renamesIds: true,
  },
  'untested-branches': {
    about: 'error paths, rare options and fallbacks no test takes, as most real libraries have',
    files: {
      'sizes/__init__.py': `"""Human-readable sizes: parsing and formatting, with the paths real code has."""
import warnings

UNITS = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


def parse_size(text, strict=False, default=None):
    text = text.strip()
    if not text:
        if default is not None:
            return default
        raise ValueError("empty size")
    unit = text[-1].lower()
    if unit in UNITS:
        number = int(text[:-1])
        factor = UNITS[unit]
    else:
        number = int(text)
        factor = 1
    if strict and number < 0:
        raise ValueError("negative size: %d" % number)
    if number > 10 ** 6:
        warnings.warn("very large size")
        number = min(number, 10 ** 9)
    return number * factor


def format_size(n, binary=True, precision=1):
    base = 1024 if binary else 1000
    if n < 0:
        sign = "-"
        n = -n
    else:
        sign = ""
    for unit in ("", "K", "M", "G"):
        if n < base:
            return "%s%d%s" % (sign, n, unit)
        n = n // base
    if precision > 3:
        warnings.warn("precision capped at 3")
        precision = 3
    return "%s%.*fT" % (sign, precision, n)


class Quota:
    def __init__(self, limit, soft=None):
        if soft is not None and soft > limit:
            raise ValueError("soft limit above the hard one")
        self.limit = limit
        self.soft = soft if soft is not None else limit
        self.used = 0

    def take(self, amount):
        if amount < 0:
            raise ValueError("negative amount")
        if self.used + amount > self.limit:
            return False
        self.used = self.used + amount
        if self.used > self.soft:
            warnings.warn("over the soft limit")
        return True

    def left(self):
        return self.limit - self.used

    def reset(self, keep=0):
        if keep > self.used:
            keep = self.used
        self.used = keep
`,
      'tests/test_sizes.py': `from sizes import Quota, format_size, parse_size


def test_parse_plain():
    assert parse_size("10") == 10


def test_parse_units():
    assert parse_size("2k") == 2048
    assert parse_size(" 3M ") == 3 * 1024 ** 2


def test_format_small():
    assert format_size(5) == "5"


def test_format_kilo():
    assert format_size(2048) == "2K"


def test_quota():
    quota = Quota(10)
    assert quota.take(4)
    assert not quota.take(7)
    assert quota.left() == 6
`,
    },
    count: 40,
  },
  'installed-metadata': {
    about: 'a pyproject package whose build writes its version file (setuptools-scm) and whose code finds its plugins through its own entry points',
    releaseTag: 'v1.2.0',
    installed: true,
    mustHold: ['tests/test_plugins.py::test_version_is_the_installed_one', 'tests/test_plugins.py::test_plugins_from_entry_points'],
    files: {
      'pyproject.toml': `[build-system]
requires = ["setuptools>=61", "setuptools-scm"]
build-backend = "setuptools.build_meta"

[project]
name = "ivl-tools"
dynamic = ["version"]

[project.entry-points."ivl.transforms"]
double = "ivl.builtin:double"
negate = "ivl.builtin:negate"

[tool.setuptools]
packages = ["ivl"]

[tool.setuptools_scm]
write_to = "ivl/_version.py"
`,
      '.gitignore': 'ivl/_version.py\n*.egg-info/\n',
      'ivl/__init__.py': `${LIB}
from importlib.metadata import entry_points

from ._version import __version__


def transforms():
    return {entry.name: entry.load() for entry in entry_points(group="ivl.transforms")}


def apply(name, values):
    return [transforms()[name](value) for value in values]
`,
      'ivl/builtin.py': `def double(x):
    return x * 2


def negate(x):
    return -x
`,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_plugins.py': `from importlib.metadata import version

import ivl


def test_version_is_the_installed_one():
    assert ivl.__version__ == version("ivl-tools")
    assert ivl.__version__.startswith("1.2.1.dev1+g")


def test_plugins_from_entry_points():
    assert sorted(ivl.transforms()) == ["double", "negate"]


def test_apply_double():
    assert ivl.apply("double", [1, 2]) == [2, 4]


def test_apply_negate():
    assert ivl.apply("negate", [3]) == [-3]
`,
    },
  },
  'pbr-stestr': {
    about: "a pbr package (setup.py's `pbr=True`) whose plugins and console script are declared in setup.cfg's own [entry_points] section, run by stestr (tox: `stestr run`, .stestr.conf's test_path), with a library module named like a test (bandit's `test_properties.py` of decorators) outside it",
    releaseTag: '1.2.0',
    installed: true,
    plainArgs: ['tests'],
    mustHold: ['tests/test_plugins.py::TestPlugins::test_plugins_from_entry_points', 'tests/test_plugins.py::test_console_script'],
    files: {
      'setup.py': 'import setuptools\n\nsetuptools.setup(setup_requires=["pbr"], pbr=True)\n',
      'setup.cfg': `[metadata]
name = ivl-scan
summary = Interval checks

[files]
packages =
    ivl

[entry_points]
console_scripts =
    ivl-total = ivl.cli:main
ivl.transforms =
    # ivl/builtin.py
    double = ivl.builtin:double
    negate = ivl.builtin:negate
`,
      'tox.ini': '[testenv]\ndeps =\n    stestr\ncommands =\n    stestr run {posargs}\n',
      '.stestr.conf': '[DEFAULT]\ntest_path=./tests\ntop_dir=./\n',
      '.gitignore': '*.egg-info/\nAUTHORS\nChangeLog\n',
      'ivl/__init__.py': `${LIB}
from importlib.metadata import entry_points

from ivl.test_properties import checks


@checks("values")
def transforms():
    return {entry.name: entry.load() for entry in entry_points(group="ivl.transforms")}


def apply(name, values):
    return [transforms()[name](value) for value in values]
`,
      // Not a test module: decorators the package applies (pytest, given the whole tree, errors on `test_id`'s missing fixture).
      'ivl/test_properties.py': `def checks(*kinds):
    def wrapper(func):
        func._checks = kinds
        return func

    return wrapper


def test_id(id_val):
    def wrapper(func):
        func._test_id = id_val
        return func

    return wrapper
`,
      'ivl/builtin.py': 'def double(x):\n    return x * 2\n\n\ndef negate(x):\n    return -x\n',
      'ivl/cli.py': 'import sys\n\nfrom ivl import total\n\n\ndef main():\n    print(total(int(arg) for arg in sys.argv[1:]))\n',
      'tests/__init__.py': '',
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_plugins.py': `import subprocess
import unittest

import ivl


class TestPlugins(unittest.TestCase):
    def test_plugins_from_entry_points(self):
        self.assertEqual(sorted(ivl.transforms()), ["double", "negate"])

    def test_apply_double(self):
        self.assertEqual(ivl.apply("double", [1, 2]), [2, 4])

    def test_apply_negate(self):
        self.assertEqual(ivl.apply("negate", [3]), [-3])


def test_console_script():
    assert subprocess.run(["ivl-total", "1", "2", "3"], capture_output=True, text=True, check=True).stdout == "6\\n"
`,
    },
  },
  'subprocess-elsewhere': {
    about: "a src-layout package whose tests start Python processes in another directory, one with PYTHONPATH replaced (a dev server's), that import it and read its installed metadata",
    installed: true,
    mustHold: [
      'tests/test_child.py::test_total_in_a_child_started_elsewhere',
      'tests/test_child.py::test_clamp_with_pythonpath_replaced',
      'tests/test_child.py::test_version_with_pythonpath_replaced',
      'tests/test_child.py::test_user_site_in_a_child',
    ],
    files: {
      'pyproject.toml': IVL_PYPROJECT,
      'src/ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_child.py': `import os
import subprocess
import sys


def child(code, cwd, **env):
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_total_in_a_child_started_elsewhere(tmp_path):
    assert child("from ivl import total; print(total([1, 2, 3]))", tmp_path) == "6"


def test_clamp_with_pythonpath_replaced(tmp_path):
    assert child("from ivl import clamp; print(clamp(30, 0, 10))", tmp_path, PYTHONPATH=str(tmp_path)) == "10"


def test_version_with_pythonpath_replaced(tmp_path):
    code = "from importlib.metadata import version; print(version('ivl'))"
    assert child(code, tmp_path, PYTHONPATH=str(tmp_path)) == "0.3.0"


def test_interval_in_a_child(tmp_path):
    assert child("from ivl import Interval; print(Interval(2, 7).width(), Interval(2, 7).contains(9))", tmp_path) == "5 False"


def test_user_site_in_a_child(tmp_path):
    # jupyter/jupyter_core's paths are made of the user base; a child names the one its parent does.
    import site

    code = "import site; print(site.getuserbase(), site.getusersitepackages())"
    assert child(code, tmp_path) == f"{site.getuserbase()} {site.getusersitepackages()}"
`,
    },
  },
  'terminates-forked-workers': {
    about: 'a package whose tests fork worker processes and end them with SIGTERM while their results wait unread (a multiprocessing pool\'s `terminate()`, joblib)',
    mustHold: ['tests/test_workers.py::test_terminate_a_worker_with_unread_results', 'tests/test_workers.py::test_total_in_a_worker'],
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_workers.py': `import multiprocessing
import signal
import time

from ivl import total

FORK = multiprocessing.get_context("fork")


def fill(queue):
    for _ in range(8):
        queue.put(b"x" * 1_000_000)
    time.sleep(60)


def test_terminate_a_worker_with_unread_results():
    queue = FORK.Queue()
    worker = FORK.Process(target=fill, args=(queue,))
    worker.start()
    time.sleep(0.3)
    worker.terminate()
    worker.join(5)
    try:
        assert worker.exitcode == -signal.SIGTERM
    finally:
        worker.kill()
        worker.join()


def test_total_in_a_worker():
    with FORK.Pool(2) as pool:
        assert pool.map(total, [[1, 2], [3, 4, 5]]) == [3, 12]
`,
    },
  },
  'session-watchdog': {
    about: "a conftest that arms faulthandler's watchdog for the whole session and cancels it at the end (joblib: `dump_traceback_later(30 * 60, exit=True)`), a thread of faulthandler's own",
    resumes: true,
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'conftest.py': `import faulthandler


def pytest_configure(config):
    faulthandler.dump_traceback_later(30 * 60, exit=True)


def pytest_unconfigure(config):
    faulthandler.cancel_dump_traceback_later()
`,
    },
  },
  'django-runner-app': {
    about: "a Django app whose developers run its TestCases with Django's own runner (runtests.py names the settings module), which pytest alone cannot import",
    // Plain pytest as a Django user runs such a suite with it: pytest-django given the settings.
    plainArgs: ['--ds', 'tests.settings', 'tests'],
    mustHold: ['tests/test_shelf.py::ShelfTests::test_pages', 'tests/test_shelf.py::ArithmeticTests::test_total'],
    failingSomewhere: 'tests/test_shelf.py::ShelfTests',
    files: {
      'ivl/__init__.py': LIB,
      'shelf/__init__.py': '',
      'shelf/models.py': `from django.db import models

from ivl import Interval, clamp, total


class Shelf(models.Model):
    name = models.CharField(max_length=40)
    lo = models.IntegerField(default=0)
    hi = models.IntegerField(default=10)

    def interval(self):
        return Interval(self.lo, self.hi)

    def place(self, x):
        return clamp(x, self.lo, self.hi)


class Book(models.Model):
    shelf = models.ForeignKey(Shelf, on_delete=models.CASCADE, related_name="books")
    pages = models.IntegerField()


def pages_on(shelf):
    return total([book.pages for book in shelf.books.order_by("pk")])
`,
      'runtests.py': `#!/usr/bin/env python
import os
import sys

import django
from django.conf import settings
from django.test.utils import get_runner

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    sys.exit(bool(get_runner(settings)().run_tests(["tests"])))
`,
      'tests/__init__.py': '',
      'tests/settings.py': `SECRET_KEY = "fixture"
INSTALLED_APPS = ["django.contrib.contenttypes", "shelf"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
`,
      'tests/test_shelf.py': `from django.test import SimpleTestCase, TestCase

from ivl import scale, total
from shelf.models import Book, Shelf, pages_on


class ShelfTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.shelf = Shelf.objects.create(name="a", lo=2, hi=7)
        Book.objects.create(shelf=cls.shelf, pages=100)
        Book.objects.create(shelf=cls.shelf, pages=250)

    def test_pages(self):
        self.assertEqual(pages_on(self.shelf), 350)

    def test_place(self):
        self.assertEqual(self.shelf.place(9), 7)
        self.assertEqual(self.shelf.place(1), 2)
        self.assertEqual(self.shelf.place(4), 4)

    def test_width(self):
        self.assertEqual(Shelf.objects.get(name="a").interval().width(), 5)

    def test_contains(self):
        self.assertTrue(self.shelf.interval().contains(3))
        self.assertFalse(self.shelf.interval().contains(9))


class ArithmeticTests(SimpleTestCase):
    def test_total(self):
        self.assertEqual(total([1, 2, 3]), 6)

    def test_scale(self):
        self.assertEqual(scale([1, 2], 3), [3, 6])
`,
    },
  },
  'unittest-runner-modules': {
    about: "a unittest suite run by its own runner (runtests.py), whose modules pytest's python_files does not match, beside a pytest module whose base cases live in a module it imports",
    // Plain pytest as a user runs such a suite with it: the unittest modules named.
    plainArgs: ['tests', 'tests/clamp_cases.py', 'tests/interval_cases.py'],
    mustHold: ['tests/clamp_cases.py::TestClamp::test_low', 'tests/interval_cases.py::TestInterval::test_width', 'tests/test_sums.py::TestSums::test_shared_total'],
    failingSomewhere: 'tests/clamp_cases.py',
    files: {
      'ivl/__init__.py': LIB,
      'runtests.py': `import sys
import unittest

sys.exit(not unittest.main(module="tests", exit=False).result.wasSuccessful())
`,
      'tests/__init__.py': 'from .clamp_cases import *\nfrom .interval_cases import *\n',
      'tests/base.py': `import unittest


class IvlTestCase(unittest.TestCase):
    def assertWithin(self, x, lo, hi):
        self.assertTrue(lo <= x <= hi)
`,
      'tests/clamp_cases.py': `from ivl import clamp

from .base import IvlTestCase


class TestClamp(IvlTestCase):
    def test_low(self):
        self.assertEqual(clamp(-3, 0, 10), 0)

    def test_high(self):
        self.assertEqual(clamp(30, 0, 10), 10)

    def test_inside(self):
        self.assertWithin(clamp(4, 0, 10), 0, 10)
        self.assertEqual(clamp(4, 0, 10), 4)
`,
      'tests/interval_cases.py': `from ivl import Interval, scale

from . import base


class IntervalCase(base.IvlTestCase):
    pass


class TestInterval(IntervalCase):
    def test_width(self):
        self.assertEqual(Interval(2, 7).width(), 5)

    def test_contains(self):
        self.assertTrue(Interval(2, 7).contains(3))
        self.assertFalse(Interval(2, 7).contains(9))

    def test_scale(self):
        self.assertEqual(scale([1, 2], 3), [3, 6])
`,
      // A pytest suite's shared cases: they run only through the subclass that imports them.
      'tests/shared.py': `import unittest

from ivl import total


class SharedSums(unittest.TestCase):
    values = [1, 2, 3]

    def test_shared_total(self):
        self.assertEqual(total(self.values), sum(self.values))
`,
      'tests/test_sums.py': `from .shared import SharedSums


class TestSums(SharedSums):
    values = [4, 5]
`,
    },
  },
  'package-dir-layout': {
    about: "a package in a directory only its packaging config names (setuptools' package-dir = lib), importable once installed, whose tests run its console script by name from another directory",
    installed: true,
    mustHold: ['tests/test_cli.py::test_script_adds_up', 'tests/test_cli.py::test_script_on_path'],
    files: {
      'pyproject.toml': `${IVL_PYPROJECT}
[project.scripts]
ivl-total = "ivl.cli:main"

[tool.setuptools.package-dir]
"" = "lib"
`,
      'lib/ivl/__init__.py': LIB,
      'lib/ivl/cli.py': `import sys

from ivl import clamp, total


def main():
    values = [clamp(int(arg), 0, 100) for arg in sys.argv[1:]]
    print(total(values))
    return 0
`,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_cli.py': `import shutil
import subprocess


def test_script_on_path():
    assert shutil.which("ivl-total") is not None


def test_script_adds_up(tmp_path):
    done = subprocess.run(["ivl-total", "1", "2", "300"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "103\\n"
`,
    },
  },
  'renamed-package-dir': {
    about: "a package imported under another name than its directory's (setuptools' package-dir ivl = code; coherent.build's essential layout, whose repository root is the package): importable once installed, from the tests, a conftest of a part of the suite, and the processes they start",
    installed: true,
    mustHold: ['tests/test_child.py::test_child_imports_it', 'tests/extra/test_extra.py::test_mean'],
    files: {
      'pyproject.toml': `${IVL_PYPROJECT}
[tool.setuptools]
packages = ["ivl"]

[tool.setuptools.package-dir]
ivl = "code"
`,
      'code/__init__.py': LIB,
      'code/extra.py': `from ivl import total


def mean(values):
    if not values:
        return 0
    return total(values) / len(values)
`,
      'tests/test_ivl.py': LIB_TESTS,
      // A conftest of a part of the suite that imports the package by its installed name.
      'tests/extra/conftest.py': 'from ivl import total\n\nWEIGHTS = total([1, 1])\n',
      'tests/extra/test_extra.py': `from ivl.extra import mean


def test_mean():
    assert mean([1, 2, 3, 6]) == 3


def test_mean_empty():
    assert mean([]) == 0
`,
      'tests/test_child.py': `import subprocess
import sys


def test_child_imports_it(tmp_path):
    done = subprocess.run([sys.executable, "-c", "from ivl.extra import mean; print(mean([2, 4]))"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "3.0\\n"
`,
    },
  },
  'setup-py-package-dir': {
    about: "a package in a directory only setup.py's package_dir names (PyYAML's lib/yaml), whose name Debian also installs: without that directory on the path its tests pass on Debian's copy and run none of the tree's code",
    installed: true,
    files: {
      'setup.py': `from setuptools import setup

setup(
    name="yaml-lite",
    version="1.0",
    package_dir={"": "lib"},
    packages=["yaml"],
)
`,
      'lib/yaml/__init__.py': `"""Flat YAML mappings of scalars, read and written as PyYAML's safe functions do."""


def _scalar(text):
    text = text.strip()
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    if text in ("null", "~", ""):
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\\"":
        return text[1:-1]
    return text


def safe_load(stream):
    result = {}
    for line in stream.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, value = line.partition(":")
        result[key.strip()] = _scalar(value)
    return result


def _text(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def safe_dump(data):
    lines = []
    for key in sorted(data):
        lines.append(key + ": " + _text(data[key]))
    return "\\n".join(lines) + "\\n"
`,
      'tests/test_yaml.py': `import yaml


def test_ints():
    assert yaml.safe_load("a: 1\\nb: -22") == {"a": 1, "b": -22}


def test_bools():
    assert yaml.safe_load("x: true\\ny: false") == {"x": True, "y": False}


def test_nulls():
    assert yaml.safe_load("x: null\\ny: ~\\nz:") == {"x": None, "y": None, "z": None}


def test_quoted():
    assert yaml.safe_load("x: 'a b'\\ny: plain") == {"x": "a b", "y": "plain"}


def test_comments():
    assert yaml.safe_load("# top\\nx: 1\\n\\ny: 2") == {"x": 1, "y": 2}


def test_dump():
    assert yaml.safe_dump({"b": None, "a": 1, "c": True, "d": False}) == "a: 1\\nb: null\\nc: true\\nd: false\\n"


def test_round_trip():
    data = {"k": 3, "name": "v"}
    assert yaml.safe_load(yaml.safe_dump(data)) == data
`,
    },
  },
  'conftest-collector-data-files': {
    about: "tests a conftest's own collector makes, one per data file, from functions a test module star-imports (PyYAML's legacy tests): no definition per test to delete, so the weakening deselects them in that conftest",
    failingSomewhere: 'tests/test_all.py::test_load::',
    mustHold: ['tests/test_all.py::test_load::list.kv', 'tests/test_all.py::test_round_trip::bool.kv'],
    files: {
      'kv/__init__.py': `"""key = value lines: ints, booleans, quoted strings and flat lists."""


def _value(text):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_value(part) for part in inner.split(",")] if inner else []
    if len(text) >= 2 and text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if text.lstrip("-").isdigit():
        return int(text)
    raise ValueError("bad value: " + text)


def load(source):
    result = {}
    for line in source.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError("no '=' in " + line)
        result[key.strip()] = _value(value)
    return result


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_text(item) for item in value) + "]"
    if isinstance(value, str):
        return '"' + value + '"'
    return str(value)


def dump(data):
    return "".join(key + " = " + _text(data[key]) + "\\n" for key in sorted(data))
`,
      'tests/conftest.py': `import os

import pytest

DATA = os.path.join(os.path.dirname(__file__), "data")


class DataItem(pytest.Item):
    def __init__(self, *, function, filename, **kwargs):
        super().__init__(**kwargs)
        self._function = function
        self._filename = filename

    def runtest(self):
        self._function(self._filename)

    def reportinfo(self):
        return self._filename, 0, self.name


class DataCollector(pytest.Collector):
    def __init__(self, *, function, **kwargs):
        super().__init__(**kwargs)
        self._function = function

    def collect(self):
        for name in sorted(os.listdir(DATA)):
            if name.endswith(self._function.data_ext):
                yield DataItem.from_parent(self, name=name, function=self._function, filename=os.path.join(DATA, name))


@pytest.hookimpl(hookwrapper=True)
def pytest_pycollect_makeitem(collector, name, obj):
    outcome = yield
    if callable(obj) and getattr(obj, "data_ext", None) is not None:
        outcome.force_result(DataCollector.from_parent(collector, name=name, function=obj))


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.nodeid)
`,
      'tests/cases.py': `import json

import kv


def _read(filename):
    with open(filename, encoding="utf-8") as handle:
        source, _, expected = handle.read().partition("---\\n")
    return source, expected


def test_load(filename):
    source, expected = _read(filename)
    assert kv.load(source) == json.loads(expected)


def test_round_trip(filename):
    data = kv.load(_read(filename)[0])
    assert kv.load(kv.dump(data)) == data


test_load.data_ext = ".kv"
test_round_trip.data_ext = ".kv"
`,
      'tests/test_all.py': 'from cases import *  # noqa: F401,F403\n',
      'tests/test_errors.py': `import pytest

import kv


def test_no_equals():
    with pytest.raises(ValueError):
        kv.load("a 1")


def test_bad_value():
    with pytest.raises(ValueError):
        kv.load("a = what")
`,
      'tests/data/int.kv': 'a = 1\nb = -22\n---\n{"a": 1, "b": -22}\n',
      'tests/data/bool.kv': 'on = true\noff = false\n---\n{"on": true, "off": false}\n',
      'tests/data/str.kv': 'name = "envgen"\n---\n{"name": "envgen"}\n',
      'tests/data/list.kv': 'xs = [1, 2, 3]\nnone = []\n---\n{"xs": [1, 2, 3], "none": []}\n',
      'tests/data/comment.kv': '# top\nx = 1  # one\n\ny = "two"\n---\n{"x": 1, "y": "two"}\n',
    },
  },
  'doctest-modules-root-conftest': {
    about: "--doctest-modules with examples in the package's docstrings and a conftest.py at the root (jaraco.functools): the weakening deselects a failing docstring's examples in that conftest",
    failingSomewhere: 'ivl/__init__.py::ivl.',
    mustHold: ['ivl/__init__.py::ivl.clamp', 'ivl/__init__.py::ivl.Interval.width'],
    files: { ...DOCTESTED_ROOT_CONFTEST, 'test/test_ivl.py': LIB_TESTS },
  },
  'doctest-modules-no-conftest': {
    about: "--doctest-modules with examples in the package's docstrings and no conftest.py (python-ordered-set, python-tabulate): the weakening deselects a failing docstring's examples through a plugin a test module names",
    failingSomewhere: 'ivl/__init__.py::ivl.',
    mustHold: ['ivl/__init__.py::ivl.clamp', 'ivl/__init__.py::ivl.Interval.width'],
    files: {
      'pytest.ini': '[pytest]\naddopts = --doctest-modules\n',
      'ivl/__init__.py': DOCTESTED_LIB,
      'test/test_ivl.py': LIB_TESTS,
    },
  },
  'doctest-modules-only-root-conftest': {
    about: "--doctest-modules with the docstrings' examples its only tests and a conftest.py at the root (jaraco.itertools): the suite is those examples, and the weakening deselects a failing one in that conftest",
    failingSomewhere: 'ivl/__init__.py::ivl.',
    mustHold: ['ivl/__init__.py::ivl.clamp', 'ivl/__init__.py::ivl.Interval.width'],
    files: DOCTESTED_ROOT_CONFTEST,
  },
  'nested-conftest-missing-module': {
    about: "a directory of functional tests whose conftest.py imports a plugin the machine lacks (thefuck's tests/functional and pytest-docker-pexpect), which stops pytest's whole collection: envgen leaves that directory out, as plain pytest must be told to",
    plainArgs: ['--ignore=tests/functional'],
    files: {
      'ivl.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/functional/conftest.py': 'import pytest\nfrom pytest_docker_pexpect.docker import run as docker_run\n',
      'tests/functional/test_shell.py': 'def test_shell(docker_run):\n    assert docker_run("true")\n',
    },
  },
  'module-named-in-python-files': {
    about: "a single module that python_files names beside the test module, for its docstrings' examples (check-manifest: `python_files = tests.py check_manifest.py`): the module is source, as any module whose doctests a suite runs",
    failingSomewhere: 'ivl.py::ivl.',
    mustHold: ['ivl.py::ivl.clamp', 'tests.py::test_total'],
    files: {
      'setup.cfg': '[tool:pytest]\npython_files = tests.py ivl.py\naddopts = --doctest-modules --ignore=setup.py\n',
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl", py_modules=["ivl"])\n',
      'ivl.py': DOCTESTED_LIB,
      'tests.py': LIB_TESTS,
    },
  },
  'tests-beside-code': {
    about: "python_files = *.py, the package's modules defining tests beside their code (patsy): a module another one imports is source that holds tests, its own tests no place for a bug, and the weakening deselects those a bug breaks, as a source module's doctests; nose-style marks on tests (`test_total.slow = 1`) go with the tests they mark",
    failingSomewhere: 'ivl/test_ivl.py::',
    mustHold: ['ivl/core.py::test_scale_inline', 'ivl/test_ivl.py::test_total'],
    files: {
      'setup.cfg': '[tool:pytest]\npython_files = *.py\ntestpaths = ivl\n',
      'ivl/__init__.py': 'from ivl.core import Interval, clamp, scale, total\n',
      'ivl/core.py': `${LIB}

def test_scale_inline():
    assert scale([2], 2) == [4]
`,
      // nose's way of marking a test, which a deleted test must not leave behind (patsy's `.slow = 1`).
      'ivl/test_ivl.py': `${LIB_TESTS.replace('\n\ndef test_scale():\n    assert scale([1, 2], 3) == [3, 6]\n', '')}\ntest_total.slow = 1\n`,
    },
  },
  'shadowed-test-names': {
    about: 'test modules that define a test name twice, an older copy left above the one pytest collects (PySnooper): the weakening deletes every definition of a failing name',
    failingSomewhere: 'tests/test_ivl.py::',
    mustHold: ['tests/test_ivl.py::test_total', 'tests/test_ivl.py::TestInterval::test_width'],
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS.replace(
        'from ivl import Interval, clamp, scale, total\n',
        `from ivl import Interval, clamp, scale, total


def test_clamp_low():
    assert clamp(-1, 0, 10) == 0


def test_total():
    assert total([4]) == 4


def test_contains():
    assert Interval(0, 1).contains(1)


class TestInterval:
    def test_width(self):
        assert Interval(0, 1).width() == 1

    def test_width(self):
        assert Interval(2, 7).width() == 5
`,
      ),
    },
  },
  'root-file-permissions': {
    about: "tests that expect root's file permissions when run as root (pyfakefs compares its fake file system with the real one): a read-only directory root writes into anyway",
    mustHold: ['tests/test_perms.py::test_read_only_dir'],
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_perms.py': `import os

import pytest

from ivl import total


def test_read_only_dir(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.getuid() == 0:
            (locked / "f").write_text("root writes anyway")
        else:
            with pytest.raises(PermissionError):
                (locked / "f").write_text("x")
    finally:
        locked.chmod(0o755)
    assert total([len(os.listdir(locked))]) == (1 if os.getuid() == 0 else 0)
`,
    },
  },
  'conftest-writes-tree-keeps-file-open': {
    about: "a conftest that writes a data file into the tree when imported, before collection, and logs every test to a file in the tree it keeps open for the whole session (flake8's test-logs-3.11.log)",
    mustHold: ['tests/test_written.py::test_generated', 'tests/test_written.py::test_log'],
    resumes: true,
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/conftest.py': writesTreeConftest('1 2 3'),
      'tests/test_written.py': `import os

HERE = os.path.dirname(__file__)


def test_generated():
    with open(os.path.join(HERE, "generated.txt")) as handle:
        assert handle.read().split() == ["1", "2", "3"]


def test_log():
    with open(os.path.join(HERE, "session.log")) as handle:
        lines = handle.read().splitlines()
    assert lines[-1] == "start test_log"
    assert len(lines) == len(set(lines)) == 9
`,
      '.gitignore': 'generated.txt\nsession.log\n',
    },
  },
  'warnings-error-plugin-options': {
    about: "addopts `-W=error --asyncio-mode=auto` (a plugin's option) and a config key the machine's pytest-asyncio is too old to know (tqdm)",
    // The developers' newer pytest-asyncio knows asyncio_default_fixture_loop_scope; Debian's 0.20 warns about it, an error under -W=error.
    plainArgs: ['-W', 'ignore::pytest.PytestConfigWarning'],
    files: {
      'pyproject.toml': `[tool.pytest.ini_options]
addopts = "-W=error --asyncio-mode=auto"
asyncio_default_fixture_loop_scope = "function"
`,
      'ivl/__init__.py': `${LIB}

async def atotal(values):
    return total(values)
`,
      'tests/test_ivl.py': `${LIB_TESTS}

from ivl import atotal


async def test_atotal():
    assert await atotal([1, 2, 3]) == 6
`,
    },
    mustHold: ['tests/test_ivl.py::test_atotal', 'tests/test_ivl.py::test_width'],
  },
  'monorepo': {
    about: 'a repo of several Python projects (libs/ivl, libs/fmt), each with its own pyproject.toml, src layout, pytest config and tests whose file names clash, and none at the root',
    installed: true,
    project: 'libs/ivl',
    files: {
      'README.md': '# two libraries\n',
      'pyproject.toml': '[tool.ruff]\nline-length = 100\n',
      'libs/ivl/pyproject.toml': `${IVL_PYPROJECT}
[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "--strict-markers"
markers = ["arith: arithmetic"]
`,
      'libs/ivl/src/ivl/__init__.py': LIB,
      'libs/ivl/tests/test_util.py': LIB_TESTS,
      'libs/ivl/tests/test_data.py': `import json
from pathlib import Path

import pytest

from ivl import clamp, total

DATA = json.loads((Path(__file__).parent / "cases.json").read_text())


@pytest.mark.arith
@pytest.mark.parametrize("values, expected", DATA["totals"])
def test_totals(values, expected):
    assert total(values) == expected


def test_clamps():
    assert [clamp(x, 0, 5) for x in DATA["clamps"]] == [0, 3, 5]
`,
      'libs/ivl/tests/cases.json': '{"totals": [[[1, 2], 3], [[], 0], [[5, -5, 2], 2]], "clamps": [-1, 3, 9]}\n',
      'libs/fmt/pyproject.toml': '[project]\nname = "fmt"\nversion = "1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
      'libs/fmt/src/fmt/__init__.py': 'def pad(text, width):\n    return text.rjust(width)\n',
      'libs/fmt/tests/test_util.py': 'from fmt import pad\n\n\ndef test_pad():\n    assert pad("a", 3) == "  a"\n',
    },
    mustHold: ['libs/ivl/tests/test_util.py::test_width', 'libs/ivl/tests/test_data.py::test_clamps'],
  },
  'compiled-extension': {
    about: 'a package whose tests import a compiled extension its setup.py builds (bitarray, cytoolz), absent from a checkout',
    installed: true,
    files: {
      'setup.py': NATIVE_SETUP,
      'ivl/_native.c': NATIVE_C,
      'ivl/__init__.py': NATIVE_INIT,
      'tests/test_ivl.py': NATIVE_TESTS,
    },
    mustHold: ['tests/test_ivl.py::test_centre', 'tests/test_ivl.py::test_width'],
  },
  'compiled-extension-newer-metadata': {
    about: "a package whose setup.py builds a compiled extension and whose pyproject.toml metadata is newer than Debian's setuptools reads (PEP 639's `license = \"MIT\"` and `license-files`: zope.interface)",
    // Its developers' setuptools reads PEP 639; Debian's cannot, so here the build goes without those fields.
    plainPrepare: ['sh', '-c', 'mv pyproject.toml aside.toml && /usr/bin/python3 setup.py build_ext --inplace; built=$?; mv aside.toml pyproject.toml; exit $built'],
    files: {
      'pyproject.toml': '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "ivl"\nversion = "0.4.0"\nlicense = "MIT"\nlicense-files = ["LICENSE"]\ndynamic = ["readme"]\n',
      'LICENSE': 'MIT License\n',
      'setup.py': 'from setuptools import Extension, setup\n\nsetup(long_description="Intervals.", packages=["ivl"], ext_modules=[Extension("ivl._native", ["ivl/_native.c"])])\n',
      'ivl/_native.c': NATIVE_C,
      'ivl/__init__.py': NATIVE_INIT,
      'tests/test_ivl.py': NATIVE_TESTS,
    },
    // Before, the build stopped at pyproject.toml's license: tests/test_ivl.py did not collect.
    mustHold: ['tests/test_ivl.py::test_centre', 'tests/test_ivl.py::test_width'],
  },
  'cython-generated-source': {
    about: "a package whose setup.py compiles a C file Cython generates from the .pyx beside it, which the checkout lacks (a make target makes it: aio-libs' yarl, frozenlist)",
    installed: true,
    plainPrepare: ['/usr/bin/python3', '-m', 'cython', '-3', '-o', 'ivl/_native.c', 'ivl/_native.pyx'],
    files: {
      'setup.py': NATIVE_SETUP,
      'Makefile': 'ivl/_native.c: ivl/_native.pyx\n\tcython3 -3 -o $@ $<\n',
      'ivl/_native.pyx': `def midpoint(long lo, long hi):
    return lo + (hi - lo) // 2
`,
      'ivl/__init__.py': NATIVE_INIT,
      'tests/test_ivl.py': `${LIB_TESTS}

from ivl import centre
from ivl._native import midpoint


def test_centre():
    assert centre(Interval(2, 8)) == 5


def test_midpoint():
    assert midpoint(-4, 0) == -2
`,
    },
    // Before, setuptools was given ivl/_native.c, which no checkout holds: no test collected.
    mustHold: ['tests/test_ivl.py::test_centre', 'tests/test_ivl.py::test_midpoint', 'tests/test_ivl.py::test_width'],
  },
  'pytest-dependency': {
    about: 'a package pytest itself imports when it starts (iniconfig), first on the path as the project under test',
    files: {
      'iniconfig/__init__.py': INICONFIG,
      'tests/test_ini.py': `import pytest

from iniconfig import IniConfig, ParseError, iscommentline


def parse(text):
    return IniConfig("x.ini", data=text)


def test_error_message():
    assert str(ParseError("x.ini", 2, "bad")) == "x.ini:3: bad"


def test_comment_lines():
    assert iscommentline("  # note")
    assert iscommentline("; note")
    assert not iscommentline("k = v")


def test_sections_in_file_order():
    config = parse("[b]\\nk = 1\\n[a]\\nk = 2\\n")
    assert [section.name for section in config] == ["b", "a"]


def test_contains():
    config = parse("[a]\\nk = v\\n")
    assert "a" in config
    assert "b" not in config


def test_value():
    assert parse("[a]\\nk = v\\n")["a"]["k"] == "v"


def test_colon_separator():
    assert parse("[a]\\nk: v\\n")["a"]["k"] == "v"


def test_get_convert_and_default():
    config = parse("[a]\\nn = 3\\n")
    assert config.get("a", "n", convert=int) == 3
    assert config.get("a", "missing", default=7) == 7


def test_section_items_in_order():
    section = parse("[a]\\nz = 1\\ny = 2\\n")["a"]
    assert list(section.items()) == [("z", "1"), ("y", "2")]


def test_section_get():
    assert parse("[a]\\nn = 4\\n")["a"].get("n", convert=int) == 4


def test_continuation():
    assert parse("[a]\\nk = one\\n  two\\n")["a"]["k"] == "one\\ntwo"


def test_comments_ignored():
    assert parse("# top\\n[a]\\n; note\\nk = v\\n")["a"]["k"] == "v"


def test_no_section_header():
    with pytest.raises(ParseError):
        parse("k = v\\n")


def test_duplicate_section():
    with pytest.raises(ParseError, match="duplicate section"):
        parse("[a]\\n[a]\\n")


def test_duplicate_name():
    with pytest.raises(ParseError, match="duplicate name"):
        parse("[a]\\nk = 1\\nk = 2\\n")


def test_lineof():
    config = parse("[a]\\nk = v\\n")
    assert config.lineof("a") == 1
    assert config["a"].lineof("k") == 2


def test_missing_section():
    with pytest.raises(KeyError):
        parse("[a]\\n")["b"]
`,
    },
    importedByPytest: true,
  },
  'runner-names-test-paths': {
    about: "a project whose CI runs pytest in its tests directory, beside a fuzzing module meant to run separately (jmespath's extra/test_hypothesis.py)",
    // Plain pytest as its developers run it: `cd tests/ && python -m pytest`.
    plainArgs: ['tests'],
    mustHold: ['tests/test_ivl.py::test_total'],
    failingSomewhere: 'tests/test_ivl.py::',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'extra/test_fuzz.py': `from ivl import total


def test_fuzz_total():
    for n in range(20000):
        assert total(range(n % 50)) == sum(range(n % 50))
`,
      '.github/workflows/tests.yml': 'on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n    - uses: actions/checkout@v4\n    - run: python -m pip install pytest\n    - name: Test with pytest\n      run: |\n        cd tests/ && python -m pytest -q\n',
    },
  },
  'reads-machine-environment': {
    about: "a suite that reads variables a machine sets for its own tools (pyca/pyopenssl loads OpenSSL's fallback CA paths only where `SSL_CERT_FILE` is unset; getsentry/responses' `verify` becomes `REQUESTS_CA_BUNDLE`)",
    machineEnv: { SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt', REQUESTS_CA_BUNDLE: '/etc/ssl/certs/ca-certificates.crt' },
    mustHold: ['tests/test_tls.py::test_fallback_ca_paths', 'tests/test_tls.py::test_default_verify'],
    failingSomewhere: 'tests/test_ivl.py::',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_tls.py': `import os


def test_fallback_ca_paths():
    # Where the user names no CA file, the library's fallback paths are the ones it loads.
    assert os.environ.get("SSL_CERT_FILE") is None


def test_default_verify():
    assert os.environ.get("REQUESTS_CA_BUNDLE", True) is True
`,
    },
  },
  'patches-builtins-open': {
    about: "a suite whose fixture patches `builtins.open` until its teardown (python-cmd2/cmd2's `test_history_file_permission_error`: pytest-mock's `mocker.patch('builtins.open')` raising PermissionError), while pytest reports the test's call: a plugin that opens a file then fails instead",
    mustHold: ['tests/test_io.py::test_open_refused', 'tests/test_io.py::test_after_refused_open'],
    failingSomewhere: 'tests/test_ivl.py::',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_io.py': `from unittest import mock

import pytest


@pytest.fixture
def refused_open():
    with mock.patch("builtins.open", side_effect=PermissionError):
        yield


def test_open_refused(refused_open):
    with pytest.raises(PermissionError):
        open("history.txt", "w")


def test_after_refused_open(tmp_path):
    (tmp_path / "h.txt").write_text("x")
    assert open(tmp_path / "h.txt").read() == "x"
`,
      'tests/test_ivl.py': LIB_TESTS,
    },
  },
  'expands-user-home': {
    about: "a suite that looks up the user's home in the password database (`~user` expansion, `pwd.getpwuid(os.getuid()).pw_dir`: python-cmd2/cmd2's path completion of `~root`), where a plain run finds a directory",
    mustHold: ['tests/test_home.py::test_user_home_exists', 'tests/test_home.py::test_tilde_user_expands'],
    failingSomewhere: 'tests/test_ivl.py::',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_home.py': `import getpass
import os
import pwd


def test_user_home_exists():
    assert os.path.isdir(pwd.getpwuid(os.getuid()).pw_dir)


def test_tilde_user_expands():
    assert os.path.isdir(os.path.expanduser("~" + getpass.getuser()))
`,
      'tests/test_ivl.py': LIB_TESTS,
    },
  },
  'runner-skips-benchmarks': {
    about: "a suite with pytest-benchmark benchmarks its CI leaves out of a test run through a variable of the workflow (hgrecco/pint: `pytest $TEST_OPTS`, TEST_OPTS holding `--benchmark-skip`)",
    // Plain pytest as its developers run it: `pytest --benchmark-skip`.
    plainArgs: ['--benchmark-skip'],
    mustHold: ['tests/test_ivl.py::test_total'],
    failingSomewhere: 'tests/test_ivl.py::',
    files: {
      'ivl/__init__.py': LIB,
      'tests/test_ivl.py': LIB_TESTS,
      'tests/test_bench.py': `from ivl import Interval, total


def test_total_speed(benchmark):
    assert benchmark(total, range(200)) == 19900


def test_width_speed(benchmark):
    assert benchmark(Interval(2, 7).width) == 5
`,
      'requirements-test.txt': 'pytest\npytest-benchmark\n',
      '.github/workflows/ci.yml': 'on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      TEST_OPTS: "-rfsxEX -s --benchmark-skip"\n    steps:\n    - uses: actions/checkout@v4\n    - run: python -m pip install -r requirements-test.txt\n    - name: Run tests\n      run: |\n        pytest $TEST_OPTS\n',
    },
  },
  'hanging-mutants': {
    about: 'a 0.1 s suite where natural mutants loop forever: limits must follow clean durations',
    files: {
      'ivl/__init__.py': '',
      'ivl/steps.py': `def count_up(start, stop, step):
    n = 0
    while start < stop:
        start = start + step
        n = n + 1
    return n


def halve(x):
    steps = 0
    while x > 1:
        x = x // 2
        steps = steps + 1
    return steps


def digits(n):
    count = 1
    while n >= 10:
        n = n // 10
        count = count + 1
    return count
`,
      'setup.py': 'from setuptools import setup\n\nsetup(name="ivl")\n',
      'tests/test_steps.py': `from ivl.steps import count_up, digits, halve


def test_count_up():
    assert count_up(0, 10, 2) == 5


def test_halve():
    assert halve(16) == 4


def test_digits():
    assert digits(4096) == 4
`,
    },
    count: 40,
    hangs: true,
  },
  'pytest-beside-unittest-discovery': {
    about: "a runner that gives pytest one directory and unittest's discovery the rest (jamielennox/requests-mock's tox: `pytest tests/pytest`, `python -m testtools.run discover`): the suite is both",
    mustHold: ['tests/test_cases.py::TestClamp::test_low', 'tests/pytest/test_fixture.py::test_scale'],
    failingSomewhere: 'tests/test_cases.py',
    files: {
      'ivl/__init__.py': LIB,
      'tox.ini': '[testenv]\ncommands =\n    pytest tests/pytest\n    python -m unittest {posargs:discover}\n',
      'tests/__init__.py': '',
      'tests/test_cases.py': `import unittest

from ivl import Interval, clamp, total


class TestClamp(unittest.TestCase):
    def test_low(self):
        self.assertEqual(clamp(-3, 0, 10), 0)

    def test_high(self):
        self.assertEqual(clamp(30, 0, 10), 10)

    def test_inside(self):
        self.assertEqual(clamp(4, 0, 10), 4)


class TestInterval(unittest.TestCase):
    def test_width(self):
        self.assertEqual(Interval(2, 7).width(), 5)

    def test_contains(self):
        self.assertTrue(Interval(2, 7).contains(3))
        self.assertFalse(Interval(2, 7).contains(9))

    def test_total(self):
        self.assertEqual(total([1, 2, 3]), 6)
`,
      'tests/pytest/__init__.py': '',
      'tests/pytest/test_fixture.py': `import pytest

from ivl import scale


@pytest.fixture
def values():
    return [1, 2]


def test_scale(values):
    assert scale(values, 3) == [3, 6]
`,
    },
  },
};
