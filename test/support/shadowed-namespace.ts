import { execFileSync } from 'node:child_process';

/** The user site `.usersite` makes for Debian's python3: `.usersite/lib/python3.X/site-packages`. */
const USER_SITE = execFileSync('/usr/bin/python3', ['-c', "import sysconfig; print(sysconfig.get_path('purelib', 'posix_user', {'userbase': '.usersite'}))"], { encoding: 'utf8' }).trim();

/** What setuptools writes for a namespace package `ns` of an installed distribution (Debian's python3-zope.interface's `zope`). */
const NSPKG_PTH =
  "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join(sys._getframe(1).f_locals['sitedir'], *('ns',));importlib = has_mfs and __import__('importlib.util');has_mfs and __import__('importlib.machinery');m = has_mfs and sys.modules.setdefault('ns', importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('ns', [os.path.dirname(p)])));m = m or sys.modules.setdefault('ns', types.ModuleType('ns'));mp = (m or []) and m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)\n";

/**
 * A src-layout project whose package `ns.mine` lives in the namespace package `ns`, and an
 * older copy of it installed in a site directory through setuptools' `-nspkg.pth` (the user
 * site `.usersite`, which env `PYTHONUSERBASE=.usersite` makes the interpreter read, as Debian's
 * dist-packages held python3-zope.interface for zope.interface's tests): the tree's `answer()`
 * is 42, the installed one's 41. The tests check it in pytest's process and in a child.
 */
export const SHADOWED_NAMESPACE: Record<string, string> = {
  [`${USER_SITE}/ns-nspkg.pth`]: NSPKG_PTH,
  // The namespace's own __init__.py, as Debian's zope/__init__.py: then `ns.__path__` is a list, not a path that follows sys.path.
  [`${USER_SITE}/ns/__init__.py`]: "__import__('pkg_resources').declare_namespace(__name__)\n",
  [`${USER_SITE}/ns/mine/__init__.py`]: 'def answer():\n    return 41\n',
  'src/ns/mine/__init__.py': 'def answer():\n    return 42\n',
  'tests/test_ns.py': `import subprocess
import sys

from ns.mine import answer


def test_answer():
    assert answer() == 42


def test_answer_in_a_child():
    code = "from ns.mine import answer; print(answer())"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "42"
`,
};

/** The profile env that shows it: the tree's import path and the site holding the other copy. */
export const SHADOWED_NAMESPACE_ENV = { PYTHONPATH: 'src', PYTHONUSERBASE: '.usersite' };
