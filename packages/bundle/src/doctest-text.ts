import type { NodeIdParts } from '@envgen/core';

/**
 * A text file pytest collects as one doctest (`--doctest-glob`, `*.rst`/`*.txt` named on the
 * command line, the default `test*.txt`): its node id is `path::basename`, one test for the
 * whole file, and the file is a test file of the suite though it holds no Python code
 * (`docs/usage/compare.rst::compare.rst`, `README.md::README.md`). A path that names no file of
 * the repo (absolute, or leaving it) is not one.
 */
export function isDoctestTextId(parts: NodeIdParts): boolean {
  const segments = parts.file.split('/');
  return (
    !parts.file.endsWith('.py') &&
    parts.classes.length === 0 &&
    parts.params === null &&
    parts.name === segments.at(-1) &&
    !parts.file.startsWith('/') &&
    !segments.includes('..') &&
    !segments.includes('.')
  );
}

const PS1 = /^[ \t]*>>>/;
const PS2 = /^[ \t]*\.\.\./;

/**
 * The text without its doctest examples, read as Python's `doctest.DocTestParser` reads them:
 * an example is a `>>>` line, the `...` lines that follow it, and its expected output (the
 * non-blank lines up to a blank line or the next `>>>`). The prose stays. Deleting every
 * example deletes the file's one test, as the weakening deletes a failing test function
 * whole: pytest collects no doctest from a text without examples. Null when it has none.
 */
export function deleteDoctestExamples(text: string): { text: string; firstLine: number } | null {
  const lines = text.split('\n');
  const kept: string[] = [];
  let firstLine = 0;
  for (let index = 0; index < lines.length; ) {
    if (!PS1.test(lines[index] ?? '')) {
      kept.push(lines[index] ?? '');
      index++;
      continue;
    }
    if (firstLine === 0) firstLine = index + 1;
    index++;
    while (index < lines.length && PS2.test(lines[index] ?? '')) index++;
    while (index < lines.length && (lines[index] ?? '').trim() !== '' && !PS1.test(lines[index] ?? '')) index++;
  }
  return firstLine === 0 ? null : { text: kept.join('\n'), firstLine };
}
