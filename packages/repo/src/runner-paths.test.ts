import { describe, expect, it } from 'vitest';
import { findRunnerOptions, findRunnerTestPaths, mayNameTestPaths } from './runner-paths.js';

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

  it("puts in the variables a runner file defines: a workflow's env, a Makefile's, tox's setenv", () => {
    const make = 'UNIT := tests/unit\nFUNCTIONAL = tests/functional\ntest:\n\tpytest $(UNIT) ${FUNCTIONAL}\n';
    expect(find({ Makefile: make })?.paths).toEqual(['tests/functional', 'tests/unit']);
    const workflow = 'env:\n  SUITE: "tests/unit"\njobs:\n  a:\n    steps:\n      - run: python -m pytest ${{ env.SUITE }}\n';
    expect(find({ '.github/workflows/a.yml': workflow })).toEqual({ paths: ['tests/unit'], from: ['.github/workflows/a.yml: python -m pytest tests/unit'] });
    // A command's prefix is no definition; an undefined variable still reads as no path.
    expect(find({ Makefile: 'test:\n\tPYTHONPATH=. pytest tests/unit\n\tpytest $$PYTHONPATH\n' })).toBeNull();
  });

  it('skips commands that only install or mention pytest, and comments', () => {
    const workflow = 'run: |\n  python -m pip install pytest pytest-cov\n  # pytest extra\n  echo pytest\n  python -m pytest tests\n';
    expect(find({ '.github/workflows/a.yml': workflow })?.paths).toEqual(['tests']);
    expect(find({ '.github/workflows/a.yml': 'run: pip install pytest\n' })).toBeNull();
  });

  it("reads the directory unittest's discovery starts from, and stestr's test_path (bandit: tox runs `stestr run`)", () => {
    expect(find({ '.stestr.conf': '[DEFAULT]\ntest_path=./tests\ntop_dir=./\n', 'tox.ini': '[testenv]\ncommands =\n    stestr run {posargs}\n' })).toEqual({ paths: ['tests'], from: ['.stestr.conf: test_path=./tests'] });
    const make = 'test:\n\tpython3 -m unittest discover -v -p "test_*.py" -s tests/unit\n\tPYTHONPATH=. coverage run -m unittest discover tests/functional\n';
    expect(find({ Makefile: make })?.paths).toEqual(['tests/functional', 'tests/unit']);
    // Discovery from the current directory, or modules named: the whole tree, as pytest finds it.
    expect(find({ Makefile: 'test:\n\tpython -m unittest discover\n' })).toBeNull();
    expect(find({ Makefile: 'test:\n\tpython -m unittest tests.test_lexer\n' })).toBeNull();
    // Beside pytest's own commands, a discovery over the whole tree adds the modules it loads:
    // here the top-level test_top.py, not the tests directory, which holds no package.
    expect(find({ Makefile: 'test:\n\tpytest tests/unit\n\tpython -m unittest discover -s .\n' })?.paths).toEqual(['test_top.py', 'tests/unit']);
  });

  it("joins pytest's commands and the unittest discoveries beside them (requests-mock's tox: `pytest tests/pytest`, `python -m testtools.run discover`)", () => {
    const files = ['requests_mock/mocker.py', 'tests/__init__.py', 'tests/base.py', 'tests/test_mocker.py', 'tests/pytest/__init__.py', 'tests/pytest/test_with_pytest.py', 'doc/test_example.py'];
    const tox = '[testenv]\ncommands =\n    pytest tests/pytest\n    python -m testtools.run {posargs:discover}\n';
    expect(findRunnerTestPaths(new Map([['tox.ini', tox]]), files)).toEqual({ paths: ['tests'], from: ['tox.ini: pytest tests/pytest', 'tox.ini: python -m testtools.run {posargs:discover}'] });
    // Its pattern and start directory as unittest reads them.
    const make = 'test:\n\tpytest tests/pytest\n\tpython -m subunit.run discover -p "*_check.py" .\n';
    expect(findRunnerTestPaths(new Map([['Makefile', make]]), [...files, 'tests/mocker_check.py'])?.paths).toEqual(['tests']);
    expect(findRunnerTestPaths(new Map([['Makefile', make]]), files)?.paths).toEqual(['tests/pytest']);
  });

  it('reads only runner files', () => {
    expect(['.github/workflows/ci.yaml', 'tox.ini', 'Makefile', '.travis.yml', '.gitlab-ci.yml', '.stestr.conf'].every(mayNameTestPaths)).toBe(true);
    expect(['setup.cfg', 'docs/Makefile', 'noxfile.py', '.github/dependabot.yml'].some(mayNameTestPaths)).toBe(false);
  });
});

describe('findRunnerOptions', () => {
  const options = (texts: Record<string, string>) => findRunnerOptions(new Map(Object.entries(texts)), FILES);
  // hgrecco/pint 0.23: each job's `env:` gives TEST_OPTS, the tests run as `pytest $TEST_OPTS`; another workflow runs the benchmarks.
  const ci = 'jobs:\n  test-linux:\n    env:\n      TEST_OPTS: "-rfsxEX -s --cov=pint --cov-config=.coveragerc --benchmark-skip"\n    steps:\n      - name: Run Tests\n        run: |\n          pytest $TEST_OPTS\n  test-windows:\n    env:\n      TEST_OPTS: "-rfsxEX -s -k issue1498b --benchmark-skip"\n';
  const bench = 'jobs:\n  benchmarks:\n    steps:\n      - name: Run benchmarks\n        uses: CodSpeedHQ/action@v1\n        with:\n          run: pytest . --codspeed\n';

  it("adopts --benchmark-skip where a command that runs the tests gives it, through a variable of its file (pint's `pytest $TEST_OPTS`)", () => {
    expect(options({ '.github/workflows/ci.yml': ci, '.github/workflows/bench.yml': bench })).toEqual({
      options: ['--benchmark-skip'],
      from: [
        '.github/workflows/ci.yml: pytest -rfsxEX -s --cov=pint --cov-config=.coveragerc --benchmark-skip',
        '.github/workflows/ci.yml: pytest -rfsxEX -s -k issue1498b --benchmark-skip',
      ],
    });
    expect(find({ '.github/workflows/ci.yml': ci })).toBeNull();
  });

  it('takes --benchmark-disable where no command skips, and ignores the runs of the benchmarks themselves', () => {
    const make = 'test:\n\tpytest tests --benchmark-disable\nbench:\n\tpytest tests --benchmark-only --benchmark-skip\n';
    expect(options({ Makefile: make })).toEqual({ options: ['--benchmark-disable'], from: ['Makefile: pytest tests --benchmark-disable'] });
    expect(options({ Makefile: 'bench:\n\tpytest --benchmark-only\n', 'tox.ini': '[testenv]\ncommands = pytest {posargs}\n' })).toBeNull();
  });
});
