import { moduleFile } from './module-file.js';

/**
 * Files where a Django app's developers say which settings its tests run with, when they run
 * them with Django's own runner: a `runtests.py` or `manage.py` (at the root or in the test
 * directory), tox's commands, a Makefile, CI workflows.
 */
const RUNNER_FILE = /^(?:(?:tests?\/)?(?:runtests|manage)\.py|tox\.ini|setup\.cfg|Makefile|\.github\/workflows\/[^/]+\.ya?ml)$/;
/** `os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")`, `DJANGO_SETTINGS_MODULE=tests.settings`, `--settings=tests.settings`. */
const SETTINGS_NAMED = /DJANGO_SETTINGS_MODULE['"]?\s*\]?\s*(?:,|=|:)\s*['"]?([A-Za-z_][\w.]*)|--settings(?:=|[ \t]+)['"]?([A-Za-z_][\w.]*)/g;
/** A pytest set-up that picks Django's settings itself (pytest-django's ini key or option, a conftest that configures Django). */
const CONFIGURES_DJANGO = /DJANGO_SETTINGS_MODULE|--ds\b|django_find_project|settings\.configure\s*\(|django\.setup\s*\(/;

/** What a Django settings module sets (or a module that gathers them from another: `from .base import *`). */
const SETTINGS_TEXT = /^(?:INSTALLED_APPS|DATABASES|SECRET_KEY|ROOT_URLCONF|MIDDLEWARE)\s*=|^from\s+[\w.]+\s+import\s+\*/m;

/** A settings module a Django app's tests run with, where the project says so, and its file. */
export interface DjangoSettings {
  module: string;
  /** The file that names it (`runtests.py`). */
  from: string;
  /** The module's own file (`tests/settings.py`). */
  file: string;
}

/** Whether a path is one of the files {@link findDjangoSettings} reads. */
export function mayNameDjangoSettings(file: string): boolean {
  return RUNNER_FILE.test(file) || file === 'conftest.py' || file.endsWith('/conftest.py');
}

/** Whether a module's text is a Django settings module's. */
export function isDjangoSettings(text: string): boolean {
  return SETTINGS_TEXT.test(text);
}

/**
 * The settings modules a Django app's suite may run with, in the order to try them (check each
 * with {@link isDjangoSettings}), where its developers run it with Django's own runner
 * (`runtests.py`, `python -m django test --settings=...`), which pytest alone cannot do: every
 * module that imports a model stops at "settings are not configured". pytest-django runs the same
 * `TestCase`s given that module. `texts` holds the files {@link mayNameDjangoSettings} picks
 * (path → text), `configTexts` the project's config files, `files` every file of the project,
 * `roots` where its packages are imported from (`src`). None when the pytest config or a
 * conftest configures Django already, or when no named module is a file of the project (a
 * settings module of an installed package, or `settings.configure(...)` in the runner itself).
 */
export function findDjangoSettings(texts: ReadonlyMap<string, string>, configTexts: readonly string[], files: readonly string[], roots: readonly string[]): DjangoSettings[] {
  const conftests = [...texts].filter(([file]) => !RUNNER_FILE.test(file)).map(([, text]) => text);
  // tox.ini and setup.cfg are both a runner file and a pytest config: only their pytest sections count here.
  if (configTexts.some((text) => CONFIGURES_DJANGO.test(pytestSections(text))) || conftests.some((text) => CONFIGURES_DJANGO.test(text))) return [];
  const found: DjangoSettings[] = [];
  for (const [from, text] of [...texts].filter(([file]) => RUNNER_FILE.test(file)).sort(([a], [b]) => a.localeCompare(b))) {
    for (const match of text.matchAll(SETTINGS_NAMED)) {
      const module = match[1] ?? match[2] ?? '';
      const file = moduleFile(files, roots, module);
      if (file !== undefined && !found.some((entry) => entry.module === module)) found.push({ module, from, file });
    }
  }
  return found;
}

/** The `[pytest]`, `[tool:pytest]`, `[tool.pytest]` (pytest 9's native table) and `[tool.pytest.ini_options]` sections of a config file. */
function pytestSections(text: string): string {
  return text
    .split(/^(?=\[)/m)
    .filter((section) => /^\[(?:pytest|tool:pytest|tool\.pytest|tool\.pytest\.ini_options)\]/.test(section))
    .join('');
}
