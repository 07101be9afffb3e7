import { describe, expect, it } from 'vitest';
import { matchesAnyGlob } from './glob.js';
import { findUnittestModules } from './unittest-modules.js';

const collected = (file: string): boolean => matchesAnyGlob(file, ['test_*.py', '*_test.py']);

describe('findUnittestModules', () => {
  it("names the modules of a unittest suite pytest's python_files leaves out, through the suite's own base classes", () => {
    const sources = new Map([
      ['tests/__init__.py', 'from .models import *\nfrom .fields import *\n'],
      ['tests/__main__.py', 'import unittest\nfrom tests import *\nunittest.main()\n'],
      ['tests/base.py', 'import unittest\n\n\nclass ModelTestCase(unittest.TestCase):\n    def assertCount(self, n):\n        pass\n'],
      ['tests/models.py', 'from .base import ModelTestCase\n\n\nclass TestModels(ModelTestCase):\n    def test_save(self):\n        pass\n'],
      ['tests/fields.py', 'from tests import base\n\n\nclass DbCase(base.ModelTestCase):\n    pass\n\n\nclass TestFields(DbCase):\n    async def test_null(self):\n        pass\n'],
      ['tests/helpers.py', 'def make():\n    return 1\n'],
      ['tests/plain.py', 'class Thing(object):\n    def test_like(self):\n        pass\n'],
      ['tests/test_utils.py', 'from .base import ModelTestCase\n\n\nclass TestUtils(ModelTestCase):\n    def test_x(self):\n        pass\n'],
    ]);
    // base.py has no test methods; plain.py no TestCase; helpers.py neither.
    expect(findUnittestModules(sources, collected)).toEqual(['tests/fields.py', 'tests/models.py']);
  });

  it("leaves out modules in a directory below the top one that is no package, which unittest's discovery does not enter (PyCQA/flake8-bugbear's sample inputs)", () => {
    const sample = 'import unittest\n\n\nclass SomeTestCase(unittest.TestCase):\n    def test_something(self):\n        a\n';
    const sources = new Map([
      ['tests/__init__.py', ''],
      ['tests/test_bugbear.py', 'def test_x():\n    pass\n'],
      ['tests/eval_files/b908.py', sample],
      ['tests/unit/__init__.py', ''],
      ['tests/unit/cases.py', sample],
      ['tests/top.py', sample],
    ]);
    expect(findUnittestModules(sources, collected)).toEqual(['tests/top.py', 'tests/unit/cases.py']);
  });

  it("leaves out a pytest suite's base-class modules, which the collected modules import", () => {
    for (const importLine of ['from .mixins import SharedCases', 'from tests.mixins import SharedCases', 'import tests.mixins', 'from . import helpers, mixins', 'import mixins', 'import os, tests.mixins', 'import os as o, mixins', 'from . import (\n    helpers,\n    mixins,\n)']) {
      const sources = new Map([
        ['tests/mixins.py', 'from unittest import TestCase\n\n\nclass SharedCases(TestCase):\n    def test_shared(self):\n        pass\n'],
        ['tests/test_json.py', `${importLine}\n\n\nclass TestJson(SharedCases):\n    pass\n`],
      ]);
      expect(findUnittestModules(sources, collected), importLine).toEqual([]);
    }
    const helpers = new Map([
      ['tests/helpers.py', 'import unittest\n\n\nclass Base(unittest.TestCase):\n    def test_base(self):\n        pass\n'],
      ['tests/conftest.py', 'from tests.helpers import *\n'],
    ]);
    expect(findUnittestModules(helpers, collected)).toEqual([]);
    // A module whose name only ends like it is no import of it.
    const sources = new Map([
      ['tests/mixins.py', 'import unittest\n\n\nclass SharedCases(unittest.IsolatedAsyncioTestCase):\n    def test_shared(self):\n        pass\n'],
      ['tests/test_json.py', 'from .json_mixins import Other\n'],
    ]);
    expect(findUnittestModules(sources, collected)).toEqual(['tests/mixins.py']);
  });
});
