import { ERROR_CODES, EnvgenError } from '@envgen/core';
import { makePatch } from '@envgen/patch';
import { hasSyntaxErrors, parsePython } from '@envgen/python';
import type { SyntaxNode } from '@envgen/python';

/** Options of {@link makeTestWeaken}. */
export interface MakeTestWeakenOptions {
  /** Content of a repo-relative file of the clean tree, or null when it does not exist. */
  readFile: (path: string) => Promise<string | null>;
  /** pytest node ids of the tests the bug breaks (`tests/t.py::TestC::test_m[1-2]`). */
  failToPass: readonly string[];
  /** The repo's test files; node ids outside them cannot be weakened and are reported unresolved. */
  testFiles: readonly string[];
  /**
   * `functions` (default): delete each failing test function or method. `assertions`: where
   * `failingLines` gives the line a test failed on and that line is an assertion of a test
   * with other assertions, delete only that assertion; otherwise the whole test. The
   * assertions mode keeps more of the suite but can leave later assertions failing, so its
   * result must pass check 6 like any bundle.
   */
  mode?: 'functions' | 'assertions';
  /** Node id → 1-based line (in the test file) where the test failed; used by the `assertions` mode. */
  failingLines?: Readonly<Record<string, number>>;
}

/** One deletion made by {@link makeTestWeaken}. */
export interface WeakenRemoval {
  nodeId: string;
  kind: 'function' | 'assertion';
  file: string;
  /** `Class.method` or `func` of the test. */
  qualifiedName: string;
  /** 1-based first line of what was deleted. */
  line: number;
}

/** What {@link makeTestWeaken} made. */
export interface TestWeaken {
  /** Unified diff over test files that deletes the tests (or assertions); empty when nothing resolved. */
  diff: string;
  /** Test files the diff touches, sorted: the bundle's test_files.txt. */
  testFiles: string[];
  removed: WeakenRemoval[];
  /** Node ids whose test could not be found in a test file (doctests, generated tests...). */
  unresolved: string[];
}

interface NodeIdParts {
  file: string;
  classes: string[];
  name: string;
}

/** `file::A::B::test_x[p]` → file, class chain, function name (parameters dropped). */
function parseNodeId(nodeId: string): NodeIdParts | null {
  const parts = nodeId.split('::');
  if (parts.length < 2) return null;
  const file = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  const bracket = last.indexOf('[');
  const name = bracket >= 0 ? last.slice(0, bracket) : last;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return null;
  return { file, classes: parts.slice(1, -1), name };
}

/** The definition node inside a statement (unwrapping decorators), with the statement to delete. */
function definitionOf(statement: SyntaxNode): { definition: SyntaxNode; statement: SyntaxNode } | null {
  if (statement.type === 'function_definition' || statement.type === 'class_definition') return { definition: statement, statement };
  if (statement.type === 'decorated_definition') {
    const definition = statement.childForFieldName('definition');
    return definition ? { definition, statement } : null;
  }
  return null;
}

const BRANCH_TYPES = new Set(['if_statement', 'elif_clause', 'else_clause', 'try_statement', 'except_clause', 'finally_clause', 'with_statement', 'block']);

/**
 * Definitions named `name` in a block, looking through if/try/with branches (tests defined
 * per Python version) but never into function bodies.
 */
function findDefinitions(block: SyntaxNode, name: string, kind: 'function_definition' | 'class_definition'): Array<{ definition: SyntaxNode; statement: SyntaxNode }> {
  const found: Array<{ definition: SyntaxNode; statement: SyntaxNode }> = [];
  for (const child of block.namedChildren) {
    const unwrapped = definitionOf(child);
    if (unwrapped) {
      if (unwrapped.definition.type === kind && unwrapped.definition.childForFieldName('name')?.text === name) found.push(unwrapped);
    } else if (BRANCH_TYPES.has(child.type)) {
      found.push(...findDefinitions(child, name, kind));
    }
  }
  return found;
}

/** Simple names of a class's bases (`class TestB(TestA)` → `TestA`). */
function baseNames(classNode: SyntaxNode): string[] {
  const bases = classNode.childForFieldName('superclasses');
  return bases ? bases.namedChildren.filter((node) => node.type === 'identifier').map((node) => node.text) : [];
}

/** The test's function statements: methods are looked up through same-file base classes too. */
function findTest(root: SyntaxNode, parts: NodeIdParts): Array<{ definition: SyntaxNode; statement: SyntaxNode; qualifiedName: string }> {
  if (parts.classes.length === 0) {
    return findDefinitions(root, parts.name, 'function_definition').map((found) => ({ ...found, qualifiedName: parts.name }));
  }
  let scope: SyntaxNode | null = root;
  let classNode: SyntaxNode | null = null;
  for (const className of parts.classes) {
    classNode = scope ? (findDefinitions(scope, className, 'class_definition')[0]?.definition ?? null) : null;
    scope = classNode?.childForFieldName('body') ?? null;
  }
  const seen = new Set<number>();
  const queue = classNode ? [classNode] : [];
  while (queue.length > 0) {
    const current = queue.shift();
    if (!current || seen.has(current.id)) continue;
    seen.add(current.id);
    const body = current.childForFieldName('body');
    const methods = body ? findDefinitions(body, parts.name, 'function_definition') : [];
    if (methods.length > 0) {
      const owner = current.childForFieldName('name')?.text ?? '';
      return methods.map((found) => ({ ...found, qualifiedName: `${owner}.${parts.name}` }));
    }
    for (const base of baseNames(current)) {
      const baseNode = findDefinitions(root, base, 'class_definition')[0]?.definition;
      if (baseNode) queue.push(baseNode);
    }
  }
  return [];
}

function isAssertion(statement: SyntaxNode): boolean {
  if (statement.type === 'assert_statement') return true;
  if (statement.type !== 'expression_statement') return false;
  const call = statement.namedChildren[0];
  const callee = call?.type === 'call' ? call.childForFieldName('function') : null;
  // unittest's self.assertEqual(...), pytest.raises is not an assertion statement.
  return callee?.type === 'attribute' && /^assert/.test(callee.childForFieldName('attribute')?.text ?? '');
}

/** Statements of a function body, through nested blocks (loops, ifs, withs) but not nested functions. */
function bodyStatements(block: SyntaxNode): SyntaxNode[] {
  const statements: SyntaxNode[] = [];
  for (const child of block.namedChildren) {
    if (child.type === 'comment') continue;
    statements.push(child);
    if (child.type === 'function_definition' || child.type === 'class_definition' || child.type === 'decorated_definition') continue;
    for (const nested of child.namedChildren) {
      if (nested.type === 'block') statements.push(...bodyStatements(nested));
      else if (BRANCH_TYPES.has(nested.type)) statements.push(...nested.namedChildren.filter((n) => n.type === 'block').flatMap(bodyStatements));
    }
  }
  return statements;
}

/** The assertion statement on `line` (1-based) of a test with at least one other assertion. */
function failingAssertion(definition: SyntaxNode, line: number): SyntaxNode | null {
  const body = definition.childForFieldName('body');
  if (!body) return null;
  const assertions = bodyStatements(body).filter(isAssertion);
  const hit = assertions.find((node) => node.startPosition.row + 1 <= line && line <= node.endPosition.row + 1);
  return hit && assertions.length > 1 ? hit : null;
}

/** Deletes whole-line statements; a block left with no statement gets `pass`. */
function deleteStatements(source: string, statements: SyntaxNode[]): string {
  const lines = source.split('\n');
  const removedIds = new Set(statements.map((node) => node.id));
  const deleted = new Set<number>();
  const replacements = new Map<number, string>();
  for (const node of statements) {
    for (let row = node.startPosition.row; row <= node.endPosition.row; row += 1) deleted.add(row);
  }
  const seenBlocks = new Set<number>();
  for (const node of statements) {
    const block = node.parent;
    if (!block || block.type === 'module' || seenBlocks.has(block.id)) continue;
    seenBlocks.add(block.id);
    const children = block.namedChildren.filter((child) => child.type !== 'comment');
    const first = children[0];
    if (first && children.every((child) => removedIds.has(child.id))) {
      const indent = /^\s*/.exec(lines[first.startPosition.row] ?? '')?.[0] ?? '';
      replacements.set(first.startPosition.row, `${indent}pass`);
    }
  }
  const kept: string[] = [];
  for (const [row, line] of lines.entries()) {
    const replacement = replacements.get(row);
    if (replacement !== undefined) kept.push(replacement);
    else if (!deleted.has(row)) kept.push(line);
  }
  return kept.join('\n');
}

/**
 * Builds test_weaken.diff: deletes the tests named by FAIL_TO_PASS node ids from their test
 * files with tree-sitter (the code is deleted, never commented out). A parametrized id
 * `test_x[1-2]` deletes the function `test_x`; `tests/t.py::TestC::test_m` deletes the method
 * (found through same-file base classes when inherited); a class or branch left empty keeps a
 * `pass`. Every changed file must still parse.
 */
export async function makeTestWeaken(options: MakeTestWeakenOptions): Promise<TestWeaken> {
  const testFiles = new Set(options.testFiles);
  const byFile = new Map<string, Array<{ nodeId: string; parts: NodeIdParts }>>();
  const unresolved: string[] = [];
  for (const nodeId of [...new Set(options.failToPass)].sort()) {
    const parts = parseNodeId(nodeId);
    if (!parts || !testFiles.has(parts.file)) {
      unresolved.push(nodeId);
      continue;
    }
    byFile.set(parts.file, [...(byFile.get(parts.file) ?? []), { nodeId, parts }]);
  }
  const removed: WeakenRemoval[] = [];
  const changes: Array<{ path: string; before: string; after: string }> = [];
  for (const [file, tests] of [...byFile.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const source = await options.readFile(file);
    if (source === null) {
      unresolved.push(...tests.map((test) => test.nodeId));
      continue;
    }
    const root = parsePython(source).rootNode;
    const toDelete = new Map<number, SyntaxNode>();
    for (const { nodeId, parts } of tests) {
      const found = findTest(root, parts);
      if (found.length === 0) {
        unresolved.push(nodeId);
        continue;
      }
      const line = options.failingLines?.[nodeId];
      for (const { definition, statement, qualifiedName } of found) {
        const assertion = options.mode === 'assertions' && line !== undefined ? failingAssertion(definition, line) : null;
        const target = assertion ?? statement;
        toDelete.set(target.id, target);
        removed.push({ nodeId, kind: assertion ? 'assertion' : 'function', file, qualifiedName, line: target.startPosition.row + 1 });
      }
    }
    // A whole deleted function makes its own deleted assertions moot.
    const functions = [...toDelete.values()].filter((node) => !isAssertion(node));
    const statements = [...toDelete.values()].filter(
      (node) => !isAssertion(node) || !functions.some((fn) => fn.startIndex <= node.startIndex && node.endIndex <= fn.endIndex),
    );
    if (statements.length === 0) continue;
    const after = deleteStatements(source, statements);
    if (hasSyntaxErrors(after) && !root.hasError) {
      throw new EnvgenError(ERROR_CODES.internal, `Weakening ${file} left a syntax error; this is a bug in envgen, please report it with the file.`);
    }
    changes.push({ path: file, before: source, after });
  }
  return {
    diff: makePatch(changes),
    testFiles: changes.map((change) => change.path).sort(),
    removed,
    unresolved: unresolved.sort(),
  };
}
