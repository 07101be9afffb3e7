"""What envgen's runs and a bundle's ``test_script.sh`` do alike, so both run a project's tests as
its user's pytest does: the project importable in every process the tests start, as
``pip install -e .`` makes it, the same Hypothesis examples in every run, and the errors of
finalizers in the same tests in every run.

envgen's pytest plugin (``envgen_pytest``) imports this module. ``test_script.sh`` runs without
envgen installed: its reporter carries this file's text (``packages/bundle``'s test script).
Python 3.8-3.13, standard library only; the modules only some runs need are imported where they
are used. PYTEST_DONT_REWRITE.
"""
import atexit
import os
import sys
import sysconfig


def _tree_namespaces_first(directories):
    """The tree's portions first in the namespace packages an installed distribution made
    before any path of the tree was looked at; their names.

    setuptools' ``-nspkg.pth`` files (Debian's python3-zope.interface has one) make the
    namespace package a module whose ``__path__`` is a list of the site directory's portion
    alone, when the interpreter starts: ``src/zope`` was never searched, and the tests
    imported the installed copy of the project (zope.interface: 20 test files did not
    collect). An editable install of the project makes its tree's portion the one imported."""
    fixed = []
    stdlib = sysconfig.get_paths()["stdlib"] + os.sep
    for directory in directories:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            module = sys.modules.get(name)
            search = getattr(module, "__path__", None)
            portion = os.path.join(directory, name)
            if not isinstance(search, list) or portion in search or (getattr(module, "__file__", None) or "").startswith(stdlib):
                continue
            if not os.path.isdir(portion) or os.path.exists(os.path.join(portion, "__init__.py")):
                continue
            search.insert(0, portion)
            fixed.append(name)
    return fixed


def install_project(entries):
    """The project importable in the processes its tests start, wherever they start and
    whatever they do with ``PYTHONPATH``, as an editable install makes it.

    ``entries``: the project's import path, relative to the working directory (the repo root,
    where pytest starts) or absolute. A ``.pth`` in a user site directory of this process's own
    (``PYTHONUSERBASE``, removed when this process exits) names them and the root, absolute.
    Once per process tree: a warm server installs it before it forks its runs."""
    import shutil
    import site
    import tempfile

    root = os.getcwd()
    directories = [os.path.join(root, entry) for entry in entries if entry] + [root]
    # A child imports such a namespace package from the tree's paths, before the site
    # directories' .pth files run (a user site's run first): theirs then add to it.
    lines = directories + ["import %s" % name for name in _tree_namespaces_first(directories)]
    # The user site a child would have used still works in it, and is the one it names: the
    # base and site directory of its own (``site.getuserbase()``, which jupyter_core's paths
    # are made of) are this process's, as without envgen.
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        lines.append("import site; site.addsitedir(%r)" % site.getusersitepackages())
    lines.append("import site; site.USER_BASE = %r; site.USER_SITE = %r" % (site.getuserbase(), site.getusersitepackages()))
    base = tempfile.mkdtemp(prefix="envgen-site-")
    owner = os.getpid()
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(base, ignore_errors=True))
    directory = sysconfig.get_path("purelib", os.name + "_user", {"userbase": base})
    os.makedirs(directory)
    with open(os.path.join(directory, "envgen-project.pth"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.environ["PYTHONUSERBASE"] = base


def pin_hypothesis_seed(config):
    """What ``--hypothesis-seed=0`` does where Hypothesis's plugin is loaded and the project set
    no seed, once a test module or the tests have imported Hypothesis (call it as each test is
    set up): its plugin would import Hypothesis when pytest starts, for every project, and a
    suite that looks at the modules imported (dill's walks them all) would see Hypothesis and
    ``unittest.mock``, which plain pytest does not import."""
    if getattr(config.option, "hypothesis_seed", "") is not None:
        return
    core = sys.modules.get("hypothesis.core")
    if core is not None and getattr(core, "global_force_seed", 0) is None:
        core.global_force_seed = 0


def _unraisable_fails_tests():
    """Whether the warning filters in force (a test's, while it runs) make the warning pytest
    reports a finalizer's exception with an error (``filterwarnings = error``, ``-W error``),
    which fails the test it is reported in. A filter limited to some messages, modules or lines
    may apply: an error one counts, another does not end the search."""
    import warnings

    category = getattr(sys.modules.get("pytest"), "PytestUnraisableExceptionWarning", None)
    if category is None:
        return False
    for action, message, kind, module, lineno in warnings.filters:
        if not issubclass(category, kind):
            continue
        if action == "error":
            return True
        if message is None and module is None and not lineno:
            return False
    return False


def collect_failure_garbage():
    """Call at the end of a failed test's teardown, inside pytest's handling of the phase: where
    a finalizer's exception fails the test it is reported in, what the failure left in reference
    cycles is finalized in this test.

    A bug that makes objects fail half-made leaves them in the cycles of the failure's traceback
    (pytest's own frames hold it, and ``sys.last_value`` until the next test's call); their
    finalizers raise when the cyclic collector frees them, and with the warnings an error, that
    fails whichever test is running then. When the collector runs depends on everything the
    process allocated before: a warm run forked from a checkpoint collects at other moments than
    a fresh pytest, and two runs of one bug failed different tests (tqdm's half-made bars).
    Here the failure is let go of as the next test's call would (``sys.last_value`` and its
    kin, which only a debugger reads) and the collector runs: such an error fails a test that
    failed already, in every run. Passing tests are left as they are: a clean run collects as
    plain pytest's does. A pytest from 8.4 on reports what a phase's finalizers raised as its
    last hook of the phase, before this: there the error fails the next test's setup, in every
    run alike."""
    if not _unraisable_fails_tests():
        return
    import gc

    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)
    gc.collect()
