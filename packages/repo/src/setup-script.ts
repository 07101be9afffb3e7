import { parsePython } from '@envgen/python';
import type { SyntaxNode } from '@envgen/python';

/** What a setup.py hands setuptools' `setup()` about requirements (see {@link readSetupRequirements}). */
export interface SetupRequirements {
  installRequires: string[];
  testsRequire: string[];
  /** `extras_require`, by extra. */
  extras: Record<string, string[]>;
}

// A name bound to another name bound to ... : how far a value is followed.
const MAX_DEPTH = 5;

/**
 * The requirements a setup.py declares in its `setup()` call, read from its syntax without
 * running it (it is the project's code): `install_requires`, `tests_require` and
 * `extras_require`. Each list is a literal of strings, a name the script binds to one
 * (every `=` and `+=` of that name counts, as in `if sys.version_info < (3, 11):
 * install_requires += ["tomli"]`), or a sum of those; the extras a dict literal or a name
 * bound to one. A value computed otherwise (read from a file, built by a function) adds nothing.
 */
export function readSetupRequirements(source: string): SetupRequirements {
  const root = parsePython(source).rootNode;
  const bindings = new Map<string, SyntaxNode[]>();
  let call: SyntaxNode | null = null;
  const visit = (node: SyntaxNode): void => {
    if (node.type === 'function_definition' || node.type === 'class_definition' || node.type === 'lambda') return;
    if ((node.type === 'assignment' || node.type === 'augmented_assignment') && node.childForFieldName('left')?.type === 'identifier') {
      const operator = node.type === 'assignment' ? '=' : node.childForFieldName('operator')?.text;
      const right = node.childForFieldName('right');
      const name = node.childForFieldName('left')?.text ?? '';
      if (right !== null && (operator === '=' || operator === '+=')) bindings.set(name, [...(bindings.get(name) ?? []), right]);
    }
    if (node.type === 'call' && call === null && /^(?:setuptools\.)?setup$/.test(node.childForFieldName('function')?.text ?? '')) call = node;
    for (const child of node.namedChildren) visit(child);
  };
  visit(root);

  const valuesOf = (node: SyntaxNode, depth: number, kinds: ReadonlySet<string>): SyntaxNode[] => {
    if (depth > MAX_DEPTH) return [];
    if (node.type === 'parenthesized_expression') return node.namedChildren.flatMap((child) => valuesOf(child, depth, kinds));
    if (node.type === 'identifier') return (bindings.get(node.text) ?? []).flatMap((bound) => valuesOf(bound, depth + 1, kinds));
    if (node.type === 'binary_operator' && node.childForFieldName('operator')?.text === '+') {
      return [node.childForFieldName('left'), node.childForFieldName('right')].flatMap((side) => (side === null ? [] : valuesOf(side, depth, kinds)));
    }
    return kinds.has(node.type) ? [node] : [];
  };
  const LISTS = new Set(['list', 'tuple']);
  const stringsOf = (node: SyntaxNode): string[] =>
    valuesOf(node, 0, LISTS).flatMap((list) => list.namedChildren.flatMap((item) => {
      const text = literalString(item);
      return text === null ? [] : [text];
    }));

  const found: SetupRequirements = { installRequires: [], testsRequire: [], extras: {} };
  const setupCall = call as SyntaxNode | null;
  for (const argument of setupCall?.childForFieldName('arguments')?.namedChildren ?? []) {
    if (argument.type !== 'keyword_argument') continue;
    const value = argument.childForFieldName('value');
    if (value === null) continue;
    const keyword = argument.childForFieldName('name')?.text;
    if (keyword === 'install_requires') found.installRequires.push(...stringsOf(value));
    else if (keyword === 'tests_require') found.testsRequire.push(...stringsOf(value));
    else if (keyword === 'extras_require') {
      for (const dict of valuesOf(value, 0, new Set(['dictionary']))) {
        for (const pair of dict.namedChildren) {
          const key = pair.type === 'pair' ? pair.childForFieldName('key') : null;
          const extra = key === null ? null : literalString(key);
          const list = pair.childForFieldName('value');
          if (extra !== null && list !== null) found.extras[extra] = [...(found.extras[extra] ?? []), ...stringsOf(list)];
        }
      }
    }
  }
  return found;
}

/** The text of a plain string literal (no f-string, no escapes), else null. */
function literalString(node: SyntaxNode): string | null {
  if (node.type !== 'string') return null;
  const parts = node.namedChildren.filter((child) => child.type !== 'string_start' && child.type !== 'string_end');
  if (parts.some((part) => part.type !== 'string_content')) return null;
  if (/^[rRbBuU]*[fF]/.test(node.text)) return null;
  return parts.map((part) => part.text).join('');
}
