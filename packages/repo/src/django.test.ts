import { describe, expect, it } from 'vitest';
import { findDjangoSettings, isDjangoSettings, mayNameDjangoSettings } from './django.js';

const FILES = ['runtests.py', 'tox.ini', 'tests/settings.py', 'tests/test_models.py', 'src/app/settings/__init__.py', 'shelf/models.py'];

describe('findDjangoSettings', () => {
  it("reads the settings module a Django runner's suite runs with where its developers name it", () => {
    const named = [
      ['runtests.py', 'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")\nexecute_from_command_line(argv)\n'],
      ['runtests.py', "os.environ['DJANGO_SETTINGS_MODULE'] = 'tests.settings'\n"],
      ['tox.ini', '[testenv]\ncommands =\n    coverage run -m django test --settings=tests.settings {posargs}\n'],
      ['tox.ini', '[testenv]\ncommands = django-admin test --settings tests.settings\n'],
      ['tox.ini', '[testenv]\nsetenv =\n    DJANGO_SETTINGS_MODULE = tests.settings\n'],
    ] as const;
    for (const [file, text] of named) {
      expect(findDjangoSettings(new Map([[file, text]]), [], FILES, ['src']), text).toEqual([{ module: 'tests.settings', from: file, file: 'tests/settings.py' }]);
    }
    // A package of settings under src/, found where the project imports from.
    expect(findDjangoSettings(new Map([['Makefile', 'test:\n\tDJANGO_SETTINGS_MODULE=app.settings python -m django test\n']]), [], FILES, ['src'])).toEqual([
      { module: 'app.settings', from: 'Makefile', file: 'src/app/settings/__init__.py' },
    ]);
  });

  it('names nothing where pytest is set up for Django already, or the module is no file of the project', () => {
    const runner = new Map([['runtests.py', 'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")\n']]);
    // pytest-django's ini key or option in the pytest config.
    expect(findDjangoSettings(runner, ['[pytest]\nDJANGO_SETTINGS_MODULE = tests.settings\n'], FILES, [])).toEqual([]);
    expect(findDjangoSettings(runner, ['[tool.pytest.ini_options]\naddopts = "--ds=tests.settings"\n'], FILES, [])).toEqual([]);
    expect(findDjangoSettings(runner, ['[tool.pytest]\nDJANGO_SETTINGS_MODULE = "tests.settings"\n'], FILES, [])).toEqual([]);
    // A conftest that configures Django itself.
    for (const conftest of ['import django\nfrom django.conf import settings\n\nsettings.configure(INSTALLED_APPS=[])\ndjango.setup()\n', 'import os\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")\n']) {
      expect(findDjangoSettings(new Map([...runner, ['tests/conftest.py', conftest]]), [], FILES, [])).toEqual([]);
    }
    // tox.ini's other sections are no pytest config: its commands still name the settings.
    expect(findDjangoSettings(new Map([['tox.ini', '[testenv]\ncommands = python -m django test --settings=tests.settings\n\n[flake8]\nmax-line-length = 99\n']]), ['[flake8]\nmax-line-length = 99\n'], FILES, [])).toHaveLength(1);
    // An installed package's settings, or none at all (settings.configure in the runner).
    expect(findDjangoSettings(new Map([['runtests.py', 'os.environ["DJANGO_SETTINGS_MODULE"] = "otherpkg.settings"\n']]), [], FILES, [])).toEqual([]);
    expect(findDjangoSettings(new Map([['runtests.py', 'settings.configure(INSTALLED_APPS=["shelf"])\n']]), [], FILES, [])).toEqual([]);
  });

  it('reads runners, tox, Makefiles, workflows and conftests only; a settings module by what it sets', () => {
    expect(['runtests.py', 'tests/runtests.py', 'manage.py', 'tox.ini', 'Makefile', '.github/workflows/ci.yml', 'tests/conftest.py'].every(mayNameDjangoSettings)).toBe(true);
    expect(['setup.py', 'tests/test_x.py', 'docs/conf.py'].some(mayNameDjangoSettings)).toBe(false);
    expect(isDjangoSettings('SECRET_KEY = "x"\nINSTALLED_APPS = ["shelf"]\n')).toBe(true);
    expect(isDjangoSettings('from .base import *\n')).toBe(true);
    expect(isDjangoSettings('DEBUG = True\n')).toBe(false);
  });
});
