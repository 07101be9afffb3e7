import { importedNames } from './python-imports.js';

/** A class statement's name and bases: `class Name(Base, mixins.Other):`. */
const CLASS_STATEMENT = /^[ \t]*class\s+(\w+)\s*\(([^)]*)\)\s*:/gm;
/** A test method: indented, so a class's. */
const TEST_METHOD = /^[ \t]+(?:async\s+)?def\s+test\w*\s*\(/m;
/** unittest's own case classes, by the last part of their dotted name. */
const UNITTEST_CASES = ['TestCase', 'IsolatedAsyncioTestCase'];
/** Modules no runner collects tests from: a package's own and its entry point, pytest's conftest. */
const NO_TESTS = new Set(['__init__.py', '__main__.py', 'conftest.py']);

/**
 * The modules of a unittest suite that pytest would not collect from their directory: test
 * files (`sources`, path → text) that `collected` (pytest's `python_files`) leaves out, that
 * define a `unittest.TestCase` subclass (through any chain of the suite's own base classes)
 * with `test*` methods, and that no collected module or conftest imports (there they are a
 * pytest suite's base classes, whose tests run through the modules that subclass them), in a
 * directory unittest's discovery enters (the top one, or a package). peewee's `tests/models.py`,
 * run by its `runtests.py` with unittest, is one. Named on pytest's command line, such a module
 * is collected whatever its name. Read from the text (class statements, imports), without
 * running anything.
 */
export function findUnittestModules(sources: ReadonlyMap<string, string>, collected: (file: string) => boolean): string[] {
  const classes = [...sources].flatMap(([file, text]) =>
    [...text.matchAll(CLASS_STATEMENT)].map((match) => ({ file, name: match[1] ?? '', bases: (match[2] ?? '').split(',').map((base) => base.trim().split('.').pop() ?? '') })),
  );
  const cases = new Set(UNITTEST_CASES);
  for (let grew = true; grew; ) {
    grew = false;
    for (const { name, bases } of classes) {
      if (!cases.has(name) && bases.some((base) => cases.has(base))) {
        cases.add(name);
        grew = true;
      }
    }
  }
  // unittest's discovery imports modules from its start directory and the packages below it
  // only: a directory without `__init__.py` below the top one holds data, such as a linter's
  // sample inputs (PyCQA/flake8-bugbear's `tests/eval_files/b908.py`, a TestCase it checks).
  const discoverable = (file: string): boolean => {
    const dir = file.slice(0, Math.max(file.lastIndexOf('/'), 0));
    return !dir.includes('/') || sources.has(`${dir}/__init__.py`);
  };
  const defining = [...sources].filter(
    ([file, text]) =>
      !collected(file) && discoverable(file) && !NO_TESTS.has(file.slice(file.lastIndexOf('/') + 1)) && TEST_METHOD.test(text) && classes.some((entry) => entry.file === file && cases.has(entry.name)),
  );
  // The collected modules and the conftests pytest loads: what they import (`from pkg.stem
  // import`, `import a, pkg.stem`, `from pkg import (a, stem)`) is a pytest suite's helper.
  const imported = new Set([...sources].filter(([file]) => collected(file) || file.slice(file.lastIndexOf('/') + 1) === 'conftest.py').flatMap(([, text]) => [...importedNames(text)]));
  return defining
    .filter(([file]) => !imported.has(file.slice(file.lastIndexOf('/') + 1, -'.py'.length)))
    .map(([file]) => file)
    .sort();
}
