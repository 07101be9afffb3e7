import { describe, expect, it } from 'vitest';
import { findRunnerTestPaths, mayNameTestPaths } from './runner-paths.js';

const FILES = ['jmespath/lexer.py', 'tests/test_lexer.py', 'tests/unit/test_a.py', 'tests/functional/test_b.py', 'extra/test_hypothesis.py', 'test_top.py'];

function find(texts: Record<string, string>) {
  return findRunnerTestPaths(new Map(Object.entries(texts)), FILES);
}

describe('findRunnerTestPaths', () => {
  it('reads the paths a CI workflow gives pytest, from the directory it changes into (jmespath: `cd tests/ && py.test --cov jmespath`)', () => {
    const workflow = 'jobs:\n  build:\n    steps:\n    - name: Test with pytest\n      run: |\n        cd tests/ && py.test --cov jmespath --cov-report term-missing\n';
    expect(find({ '.github/workflows/run-tests.yml': workflow })).toEqual({ paths: ['tests'], from: ['.github/workflows/run-tests.yml: py.test --cov jmespath --cov-report term-missing'] });
  });

  it("reads tox's commands, Makefile recipes and wrapped runs, and joins what they name", () => {
    const tox = '[testenv]\ncommands =\n    {envpython} -m pytest {posargs:tests/unit}\n    coverage run -m pytest -k "not slow" {toxinidir}/tests/functional::test_b\n';
    const make = 'test:\n\tPYTHONPATH=. uv run pytest -x test_top.py\n\t$(PYTHON) -m pytest tests/unit\n';
    expect(find({ 'tox.ini': tox, Makefile: make })?.paths).toEqual(['test_top.py', 'tests/functional', 'tests/unit']);
  });

  it('is null where a command runs pytest over the whole tree, or names what it cannot read as paths', () => {
    const named = 'run: pytest tests/unit\n';
    expect(find({ '.github/workflows/a.yml': named, 'tox.ini': '[testenv]\ncommands = pytest {posargs}\n' })).toBeNull();
    expect(find({ '.github/workflows/a.yml': `${named}      run: python -m pytest\n` })).toBeNull();
    expect(find({ '.github/workflows/a.yml': `${named}      run: pytest --pyargs jmespath\n` })).toBeNull();
    expect(find({ '.github/workflows/a.yml': `${named}      run: pytest $TEST_DIRS\n` })).toBeNull();
    expect(find({ '.github/workflows/a.yml': `${named}      run: pytest ../elsewhere\n` })).toBeNull();
  });

  it('skips commands that only install or mention pytest, and comments', () => {
    const workflow = 'run: |\n  python -m pip install pytest pytest-cov\n  # pytest extra\n  echo pytest\n  python -m pytest tests\n';
    expect(find({ '.github/workflows/a.yml': workflow })?.paths).toEqual(['tests']);
    expect(find({ '.github/workflows/a.yml': 'run: pip install pytest\n' })).toBeNull();
  });

  it('reads only runner files', () => {
    expect(['.github/workflows/ci.yaml', 'tox.ini', 'Makefile', '.travis.yml', '.gitlab-ci.yml'].every(mayNameTestPaths)).toBe(true);
    expect(['setup.cfg', 'docs/Makefile', 'noxfile.py', '.github/dependabot.yml'].some(mayNameTestPaths)).toBe(false);
  });
});
