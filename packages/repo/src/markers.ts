/*
 * PEP 508 environment markers (`python_version < "3.8" and sys_platform != "win32"`), evaluated
 * for the machine the tests run on. Three-valued: a marker that names what the environment does
 * not give (`extra`), or that does not parse, is `null`, which no caller takes for false.
 */

import { runProgram } from './run-program.js';

/** The marker variables of the environment the tests run in (PEP 508's names). */
export type MarkerEnvironment = Readonly<Record<string, string>>;

/** Debian's python3 on Linux, at `pythonVersion` (`3.11.2`). */
export function linuxEnvironment(pythonVersion: string, machine = 'x86_64'): MarkerEnvironment {
  const [major = '3', minor = '0'] = pythonVersion.split('.');
  return {
    python_version: `${major}.${minor}`,
    python_full_version: pythonVersion,
    sys_platform: 'linux',
    platform_system: 'Linux',
    os_name: 'posix',
    platform_machine: machine,
    implementation_name: 'cpython',
    platform_python_implementation: 'CPython',
    implementation_version: pythonVersion,
  };
}

const TOKEN = /\s*(?:(\()|(\))|("[^"]*"|'[^']*')|(<=|>=|==|!=|~=|===|<|>)|(not\s+in\b|in\b|and\b|or\b|not\b)|([A-Za-z_][A-Za-z0-9_.]*))/y;

type Token = { kind: 'open' | 'close' | 'string' | 'op' | 'word' | 'name'; text: string };

function tokenize(marker: string): Token[] | null {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < marker.length) {
    if (/^\s*$/.test(marker.slice(TOKEN.lastIndex))) break;
    const match = TOKEN.exec(marker);
    if (match === null) return null;
    const [, open, close, string, op, word, name] = match;
    if (open !== undefined) tokens.push({ kind: 'open', text: open });
    else if (close !== undefined) tokens.push({ kind: 'close', text: close });
    else if (string !== undefined) tokens.push({ kind: 'string', text: string.slice(1, -1) });
    else if (op !== undefined) tokens.push({ kind: 'op', text: op });
    else if (word !== undefined) tokens.push({ kind: 'word', text: word.replace(/\s+/, ' ') });
    else tokens.push({ kind: 'name', text: name ?? '' });
  }
  return tokens;
}

/** A release as numbers (`3.11` → [3, 11]), or null where the text is no plain release. */
function release(text: string): number[] | null {
  return /^\d+(\.\d+)*$/.test(text) ? text.split('.').map(Number) : null;
}

function compareReleases(a: number[], b: number[]): number {
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function compare(left: string, op: string, right: string): boolean | null {
  if (op === 'in') return right.includes(left);
  if (op === 'not in') return !right.includes(left);
  if (op === '===') return left === right;
  const [a, b] = [release(left), release(right)];
  if (a === null || b === null) {
    if (op === '==') return left === right;
    if (op === '!=') return left !== right;
    return null;
  }
  if (op === '~=') return b.length >= 2 && compareReleases(a, b) >= 0 && compareReleases(a.slice(0, b.length - 1), b.slice(0, -1)) === 0;
  const order = compareReleases(a, b);
  // A wildcard-free `==` compares releases padded with zeros, as PEP 440 does (`3.8` == `3.8.0`).
  return { '<': order < 0, '<=': order <= 0, '>': order > 0, '>=': order >= 0, '==': order === 0, '!=': order !== 0 }[op] ?? null;
}

/** Whether `marker` holds in `environment`: true, false, or null where it cannot be told. */
export function markerHolds(marker: string, environment: MarkerEnvironment): boolean | null {
  const tokens = tokenize(marker);
  if (tokens === null || tokens.length === 0) return null;
  let position = 0;
  const peek = (): Token | undefined => tokens[position];
  const value = (): string | null | undefined => {
    const token = tokens[position++];
    if (token?.kind === 'string') return token.text;
    if (token?.kind === 'name') return environment[token.text] ?? null;
    return undefined;
  };
  const expression = (): boolean | null | undefined => {
    if (peek()?.kind === 'open') {
      position++;
      const inner = or();
      return tokens[position++]?.kind === 'close' ? inner : undefined;
    }
    const left = value();
    const op = tokens[position++];
    const right = value();
    if (left === undefined || right === undefined || op === undefined || (op.kind !== 'op' && !['in', 'not in'].includes(op.text))) return undefined;
    return left === null || right === null ? null : compare(left, op.text, right);
  };
  /** Operands joined by `word`, combined left to right in Kleene's three-valued logic. */
  const joined =
    (word: string, operand: () => boolean | null | undefined, decides: boolean) =>
    (): boolean | null | undefined => {
      let result = operand();
      while (result !== undefined && peek()?.text === word) {
        position++;
        const next = operand();
        result = next === undefined ? undefined : result === decides || next === decides ? decides : result === null || next === null ? null : !decides;
      }
      return result;
    };
  const and = joined('and', expression, false);
  const or = joined('or', and, true);
  const result = or();
  return result === undefined || position !== tokens.length ? null : result;
}

const environments = new Map<string, Promise<MarkerEnvironment | undefined>>();

/**
 * The marker environment of `python` on this machine (asked once per interpreter), or
 * undefined where it does not run: then no marker is evaluated. The tests run on this
 * machine's Debian (the `local` and `none` sandboxes) or in an image of the same release.
 */
export function readMarkerEnvironment(python: string): Promise<MarkerEnvironment | undefined> {
  let known = environments.get(python);
  if (known === undefined) {
    known = runProgram(python, ['-c', 'import platform; print(platform.python_version(), platform.machine())'])
      .then((result) => {
        const [version, machine] = result.stdout.trim().split(/\s+/);
        return result.ok && version !== undefined && /^\d+\.\d+/.test(version) ? linuxEnvironment(version, machine) : undefined;
      })
      .catch(() => undefined);
    environments.set(python, known);
  }
  return known;
}
