import { EnvgenError } from '@envgen/core';
import { formatPatch, isPatchProblem, parsePatch, reversePatch } from '@envgen/patch';

/** One failing test as the `tests` statement shows it. */
export interface FailingTest {
  nodeId: string;
  /** The test's source, or null when it could not be found (a doctest, a generated test). */
  source: string | null;
}

/** Limits of the `tests` statement. */
export interface TestsStatementOptions {
  /** Tests whose source is shown (the rest are only named). Default 3. */
  maxSources?: number;
  /** Lines of one test's source. Default 60. */
  maxSourceLines?: number;
  /** Characters of failure output. Default 4000. */
  maxOutputChars?: number;
  /** Failing tests named. Default 20. */
  maxNamed?: number;
}

/** Cuts `text` to `max` characters, keeping its head and tail around a marker that says how much went. */
export function trimMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.7);
  const tail = max - head;
  return `${text.slice(0, head)}\n[... ${text.length - head - tail} characters trimmed ...]\n${text.slice(text.length - tail)}`;
}

const FRAME = /^(\S+?\.py):(\d+): in (\S+)$/;

/**
 * Removes the frames of non-test code from pytest `--tb=short` output: they point straight at
 * the buggy lines, which is the answer the agent must find. What the tests assert and the error
 * (`E ...` lines) stay.
 */
export function hideSourceFrames(output: string, isTestFile: (path: string) => boolean): string {
  const kept: string[] = [];
  let hiding = false;
  let hidden = 0;
  for (const line of output.split('\n')) {
    const frame = FRAME.exec(line);
    if (frame) {
      hiding = !isTestFile(frame[1] ?? '');
      if (hiding) hidden += 1;
    } else if (hiding && !line.startsWith('    ')) {
      hiding = false;
    }
    if (!hiding) kept.push(line);
  }
  const text = kept.join('\n');
  return hidden === 0 ? text : `${text}\n(${hidden} traceback frame(s) outside the tests are hidden)`;
}

/** Keeps pytest's FAILURES section (where tests fail), or the whole output when there is none. */
function failuresSection(output: string): string {
  const start = output.search(/^=+ FAILURES =+$/m);
  const fromStart = start === -1 ? output : output.slice(start);
  const end = fromStart.search(/^(=+ (short test summary info|warnings summary|\d+ (failed|passed)).*=+|\d+ (failed|passed|errors?)\b.* in [\d.]+s)$/m);
  return (end === -1 ? fromStart : fromStart.slice(0, end)).trim();
}

/**
 * The `tests` problem statement: which tests fail, their source and their failure output,
 * trimmed to a sensible size.
 */
export function makeTestsStatement(failing: readonly FailingTest[], output: string, options: TestsStatementOptions = {}): string {
  if (failing.length === 0) throw new EnvgenError('usage', 'a tests statement needs at least one failing test');
  const maxSources = options.maxSources ?? 3;
  const maxLines = options.maxSourceLines ?? 60;
  const maxNamed = options.maxNamed ?? 20;
  const named = failing.slice(0, maxNamed).map((test) => `- ${test.nodeId}`);
  if (failing.length > maxNamed) named.push(`- ... and ${failing.length - maxNamed} more`);
  const parts = [`These tests fail and should pass:\n${named.join('\n')}`];
  const sources = failing.filter((test) => test.source !== null).slice(0, maxSources);
  for (const test of sources) {
    const lines = (test.source ?? '').split('\n');
    const body = lines.length > maxLines ? [...lines.slice(0, maxLines), `    # ... ${lines.length - maxLines} more lines`] : lines;
    parts.push(`Source of ${test.nodeId}:\n\`\`\`python\n${body.join('\n')}\n\`\`\``);
  }
  const failures = failuresSection(output);
  if (failures !== '') parts.push(`Failure output (pytest):\n\`\`\`\n${trimMiddle(failures, options.maxOutputChars ?? 4000)}\n\`\`\``);
  return parts.join('\n\n');
}

/** The fixed instruction of the `self-play` statement. */
export const SELF_PLAY_INSTRUCTION =
  'The diff below restores tests that were removed from this repository. With them restored, they fail: the code under test has a bug. Find the code that must change so that these tests pass.';

/** The `self-play` problem statement: the reversed test_weaken.diff with a fixed instruction. */
export function makeSelfPlayStatement(testWeakenDiff: string): string {
  const parsed = parsePatch(testWeakenDiff);
  if (isPatchProblem(parsed)) throw new EnvgenError('store-corrupt', `the bundle's test_weaken.diff is malformed (${parsed.message}); re-run envgen inject for its repo`);
  const restored = formatPatch(reversePatch(parsed));
  if (restored.trim() === '') throw new EnvgenError('store-corrupt', "the bundle's test_weaken.diff is empty, so there is nothing to restore; use --statement tests");
  return `${SELF_PLAY_INSTRUCTION}\n\n\`\`\`diff\n${restored.trimEnd()}\n\`\`\``;
}
