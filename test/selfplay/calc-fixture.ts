import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePatch } from '@envgen/patch';
import { writeFixtureRepo } from '../support/fixture-repo.js';

/** clamp as it was before the last commit fixed it. */
export const BUGGY_CALC = 'def clamp(x, lo, hi):\n    return min(lo, max(x, hi))\n\n\ndef area(w, h):\n    return w * h\n';
export const FIXED_CALC = 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\ndef area(w, h):\n    return w * h\n';
export const CLAMP_TEST = 'def test_clamp():\n    assert clamp(5, 0, 3) == 3\n    assert clamp(-1, 0, 3) == 0\n\n\n';
export const CALC_TESTS = `from calc import area, clamp\n\n\n${CLAMP_TEST}def test_area():\n    assert area(2, 3) == 6\n`;

/** What a model might write as its bundle's script and parser: pytest -rA and its summary lines. */
export const RA_SCRIPT = '#!/bin/bash\npython3 -m pytest -rA -p no:cacheprovider --tb=no -q tests\n';
export const RA_PARSER = [
  'import json, re, sys',
  'results = {}',
  'for line in sys.stdin.read().splitlines():',
  '    m = re.match(r"^(PASSED|FAILED|ERROR) (\\S+)", line)',
  '    if m:',
  '        results[m.group(2)] = "passed" if m.group(1) == "PASSED" else "failed"',
  'print(json.dumps(results))',
  '',
].join('\n');

/** The bug (the fix of the last commit reverted) and its weakening (test_clamp deleted). */
export const CLAMP_BUG = makePatch([{ path: 'calc.py', before: FIXED_CALC, after: BUGGY_CALC }]);
export const CLAMP_WEAKEN = makePatch([{ path: 'tests/test_calc.py', before: CALC_TESTS, after: CALC_TESTS.replace(CLAMP_TEST, '') }]);

/** A small repo whose last commit ("fix clamp") fixed a bug its tests catch. */
export function writeCalcRepo(): string {
  const repo = writeFixtureRepo({ 'calc.py': BUGGY_CALC, 'tests/test_calc.py': CALC_TESTS }, { git: true, name: 'calc' });
  writeFileSync(join(repo, 'calc.py'), FIXED_CALC);
  const env = { ...process.env, GIT_AUTHOR_NAME: 'f', GIT_AUTHOR_EMAIL: 'f@x.invalid', GIT_COMMITTER_NAME: 'f', GIT_COMMITTER_EMAIL: 'f@x.invalid' };
  execFileSync('git', ['-C', repo, 'add', '-A'], { env });
  execFileSync('git', ['-C', repo, 'commit', '-qm', 'fix clamp'], { env });
  return repo;
}
