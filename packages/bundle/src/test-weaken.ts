import { ERROR_CODES, EnvgenError, isModuleOwnDoctest, parseNodeId, recentCache } from '@envgen/core';
import type { NodeIdParts } from '@envgen/core';
import { makePatch } from '@envgen/patch';
import { editHasSyntaxErrors, parsePython } from '@envgen/python';
import type { SyntaxNode } from '@envgen/python';
import { deleteDoctestExamples, isDoctestTextId } from './doctest-text.js';

/** Options of {@link makeTestWeaken}. */
export interface MakeTestWeakenOptions {
  /** Content of a repo-relative file of the clean tree, or null when it does not exist. */
  readFile: (path: string) => Promise<string | null>;
  /** pytest node ids of the tests the bug breaks (`tests/t.py::TestC::test_m[1-2]`). */
  failToPass: readonly string[];
  /**
   * The repo's test files; node ids outside them cannot be weakened and are reported
   * unresolved, except doctests of text files (see {@link isDoctestTextId}), which are test
   * files of the suite wherever they are.
   */
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
  /** Every test of the suite; when given, {@link TestWeaken.removedIds} lists those the deletions take away. */
  nodeIds?: readonly string[];
}

/** One deletion made by {@link makeTestWeaken}. */
export interface WeakenRemoval {
  nodeId: string;
  /**
   * `generated`: a test made at import (from data files, by a loop); `imported`: a module-level
   * test its module binds last by an import (`from .variants import test_x`, shadowing a `def`
   * of the same name). Both are removed from the namespace of the module that collects them.
   * `doctest`: a text file collected as one doctest (`docs/usage.rst::usage.rst`), its examples
   * deleted (see {@link deleteDoctestExamples}). `collected`: a test a collector of the
   * project's own made (one item per data file) or a doctest of a module's docstrings,
   * deselected by code appended to the nearest conftest.py (`file` is that conftest) or, with
   * none at or above it, to a test module that registers it as a plugin (`file` is that module).
   */
  kind: 'function' | 'assertion' | 'generated' | 'imported' | 'doctest' | 'collected';
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
  /** Tests gone with the weakening (of `nodeIds`, and the FAIL_TO_PASS tests deleted whole). */
  removedIds: string[];
  /** Node ids whose test could not be found in a test file (a text doctest without examples; a doctest of a source file where no test module is collected to deselect it). */
  unresolved: string[];
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

/**
 * The module-level statements that set attributes (or items of them) of the module-level
 * functions among `deleted` (nose's way of marking a test: patsy's
 * `test_redundancy_thoroughly.slow = 1`),
 * which would fail with a NameError once the function is gone, and the module with them.
 */
function attributeAssignmentsOf(root: SyntaxNode, deleted: readonly SyntaxNode[]): SyntaxNode[] {
  const names = new Set(
    deleted.filter((node) => node.parent?.type === 'module').flatMap((node) => {
      const definition = definitionOf(node)?.definition;
      const name = definition?.type === 'function_definition' ? definition.childForFieldName('name')?.text : undefined;
      return name === undefined ? [] : [name];
    }),
  );
  if (names.size === 0) return [];
  const setsAttributeOfDeleted = (statement: SyntaxNode): boolean => {
    const assignment = statement.type === 'expression_statement' && statement.namedChildCount === 1 ? statement.namedChildren[0] : null;
    if (assignment?.type !== 'assignment' && assignment?.type !== 'augmented_assignment') return false;
    let target = assignment.childForFieldName('left');
    if (target?.type !== 'attribute' && target?.type !== 'subscript') return false;
    while (target?.type === 'attribute' || target?.type === 'subscript') target = target.childForFieldName(target.type === 'attribute' ? 'object' : 'value');
    return target?.type === 'identifier' && names.has(target.text);
  };
  return root.namedChildren.filter(setsAttributeOfDeleted);
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

/** A parsed file of the clean tree. */
interface ParsedFile {
  path: string;
  source: string;
  root: SyntaxNode;
}

/** A definition (unwrapped from its decorators) with its statement and file. */
interface Definition {
  file: ParsedFile;
  definition: SyntaxNode;
  statement: SyntaxNode;
}

/** A test definition found for a node id: the statement to delete and where it lives. */
interface FoundTest extends Definition {
  qualifiedName: string;
  /**
   * A method that overrides one of the same name further along the class's bases: deleted, it
   * would let that one run under the same ids, so a `name = None` takes its place, which
   * neither unittest's loader nor pytest collects (and the base's own tests stay).
   */
  overrides?: true;
}

/** Dotted names of a class's bases (`class T(Mixin, base.Case)` → `[['Mixin'], ['base', 'Case']]`). */
function baseNames(classNode: SyntaxNode): string[][] {
  const bases = classNode.childForFieldName('superclasses');
  if (!bases) return [];
  return bases.namedChildren
    .filter((node) => node.type === 'identifier' || (node.type === 'attribute' && /^[A-Za-z_][\w.]*$/.test(node.text)))
    .map((node) => node.text.split('.'));
}

/** Directory part of a repo-relative path (`''` at the root). */
function dirnameOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/**
 * Syntax trees of the last 16 test file texts read: every weakening of one inject reads the
 * same clean test files (the trees are only read).
 */
const parsedFiles = recentCache<string, SyntaxNode>(16);

function parseTestFile(source: string): SyntaxNode {
  return parsedFiles.get(source, () => parsePython(source).rootNode);
}

/**
 * Resolves definitions across the test files: a class or function a test module uses may be
 * defined in it or imported from another module of the tree (`from tests.base import Mixin`,
 * `from .base import Mixin as M`, `import tests.base as b` ... `b.Mixin`), as unittest suites
 * with shared base classes and mixins do. Modules are looked up as Python would find them
 * under pytest: relative to the importing package, from the repo root, from `src/`, and from
 * each directory above the test file (pytest puts a test's rootless directory on sys.path).
 */
class DefinitionResolver {
  private readonly files = new Map<string, Promise<ParsedFile | null>>();
  private readonly orders = new Map<string, Promise<Definition[]>>();

  constructor(private readonly read: (path: string) => Promise<string | null>) {}

  file(path: string): Promise<ParsedFile | null> {
    let parsed = this.files.get(path);
    if (parsed === undefined) {
      parsed = this.read(path).then((source) => (source === null ? null : { path, source, root: parseTestFile(source) }));
      this.files.set(path, parsed);
    }
    return parsed;
  }

  /**
   * A class's method resolution order (C3, as Python computes it) over the classes the test
   * files define; bases found nowhere in them (`unittest.TestCase`) are left out.
   */
  order(start: Definition, inProgress: ReadonlySet<string> = new Set()): Promise<Definition[]> {
    const key = keyOf(start);
    // A class that is its own base through names the resolver mixes up: stop there.
    if (inProgress.has(key) || inProgress.size > 32) return Promise.resolve([start]);
    let order = this.orders.get(key);
    if (order === undefined) {
      order = this.computeOrder(start, new Set([...inProgress, key]));
      this.orders.set(key, order);
    }
    return order;
  }

  private async computeOrder(start: Definition, path: ReadonlySet<string>): Promise<Definition[]> {
    const bases: Definition[] = [];
    for (const base of baseNames(start.definition)) {
      const definition = await this.lookup(start.file, base, 'class_definition');
      if (definition) bases.push(definition);
    }
    const sequences: Definition[][] = [];
    for (const base of bases) sequences.push([...(await this.order(base, path))]);
    if (bases.length > 0) sequences.push([...bases]);
    const merged: Definition[] = [start];
    const taken = new Set([keyOf(start)]);
    while (sequences.length > 0) {
      const heads = sequences.map((sequence) => sequence[0] as Definition);
      const good = heads.find((head) => !sequences.some((sequence) => sequence.slice(1).some((later) => keyOf(later) === keyOf(head))));
      // No consistent order (Python would refuse the class): the first base's order first.
      const next = good ?? (heads[0] as Definition);
      if (!taken.has(keyOf(next))) merged.push(next);
      taken.add(keyOf(next));
      for (const sequence of sequences) if (sequence.length > 0 && keyOf(sequence[0] as Definition) === keyOf(next)) sequence.shift();
      for (let index = sequences.length - 1; index >= 0; index -= 1) if (sequences[index]?.length === 0) sequences.splice(index, 1);
    }
    return merged;
  }

  /** The file of module `dotted` imported from `from` with `level` leading dots, or null. */
  async module(from: string, dotted: string[], level: number): Promise<ParsedFile | null> {
    let roots: string[];
    if (level > 0) {
      let base = dirnameOf(from);
      for (let up = 1; up < level; up += 1) base = dirnameOf(base);
      roots = [base];
    } else {
      roots = ['', 'src'];
      for (let dir = dirnameOf(from); dir !== ''; dir = dirnameOf(dir)) roots.push(dir);
    }
    for (const root of roots) {
      const stem = [root, ...dotted].filter((part) => part !== '').join('/');
      if (stem === '') continue;
      for (const candidate of [`${stem}.py`, `${stem}/__init__.py`]) {
        const parsed = await this.file(candidate);
        if (parsed !== null) return parsed;
      }
    }
    return null;
  }

  /**
   * Where the name `dotted` (`Mixin` or `base.Mixin`) used at the top level of `file` is
   * defined as a `kind`, following imports up to a few modules deep.
   */
  async lookup(file: ParsedFile, dotted: string[], kind: 'function_definition' | 'class_definition', depth = 0, star = false): Promise<Definition | null> {
    if (depth > 8 || dotted.length === 0) return null;
    const [head, ...rest] = dotted as [string, ...string[]];
    if (rest.length === 0) {
      const local = findDefinitions(file.root, head, kind)[0];
      if (local) return { file, ...local };
    }
    for (const statement of importStatements(file.root)) {
      for (const binding of importBindings(statement)) {
        if (binding.bound !== head) continue;
        if (binding.name === null) {
          // `import a.b as m` / `import a`: the rest of the name lives in that module.
          const target = await this.module(file.path, binding.module, binding.level);
          if (target) return this.lookup(target, rest.length > 0 ? rest : [head], kind, depth + 1, star);
          continue;
        }
        const target = await this.module(file.path, binding.module, binding.level);
        if (target) {
          const found = await this.lookup(target, [binding.name, ...rest], kind, depth + 1, star);
          if (found) return found;
        }
        // `from pkg import mod` where mod is a module.
        const asModule = await this.module(file.path, [...binding.module, binding.name], binding.level);
        if (asModule && rest.length > 0) return this.lookup(asModule, rest, kind, depth + 1, star);
      }
    }
    // With `star`, `from test_structure import *` too, as aggregating test modules do (PyYAML's
    // test_yaml.py): to tell what a name is; deleting a `def` others import is another matter.
    for (const statement of star ? importStatements(file.root) : []) {
      const source = statement.childForFieldName('module_name');
      if (statement.type !== 'import_from_statement' || source === null || !statement.namedChildren.some((child) => child.type === 'wildcard_import')) continue;
      const level = /^\.*/.exec(source.text)?.[0].length ?? 0;
      const target = await this.module(file.path, source.text.slice(level).split('.').filter((part) => part !== ''), level);
      const found = target ? await this.lookup(target, dotted, kind, depth + 1, star) : null;
      if (found) return found;
    }
    return null;
  }
}

/**
 * Whether the last top-level binding of `name` in `file` is an import: pytest collects what the
 * name is bound to when the module finishes, which is then not the module's own `def`.
 */
function lastBoundByImport(file: ParsedFile, name: string): boolean {
  const definitions = findDefinitions(file.root, name, 'function_definition').map((found) => found.statement.startIndex);
  const imports = importStatements(file.root)
    .filter((statement) => statement.type === 'import_from_statement' && importBindings(statement).some((binding) => binding.bound === name))
    .map((statement) => statement.startIndex);
  return imports.length > 0 && Math.max(...imports) > Math.max(-1, ...definitions);
}

/** Top-level import statements, through if/try branches. */
function importStatements(block: SyntaxNode): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  for (const child of block.namedChildren) {
    if (child.type === 'import_statement' || child.type === 'import_from_statement') found.push(child);
    else if (BRANCH_TYPES.has(child.type)) found.push(...importStatements(child));
  }
  return found;
}

/** What one import binds: `bound` in the importing module, from `module` (`level` dots), `name` in it (null: the module itself). */
interface ImportBinding {
  bound: string;
  module: string[];
  level: number;
  name: string | null;
}

function importBindings(statement: SyntaxNode): ImportBinding[] {
  const bindings: ImportBinding[] = [];
  const names = statement.childrenForFieldName('name');
  if (statement.type === 'import_statement') {
    for (const node of names) {
      const dotted = (node.type === 'aliased_import' ? node.childForFieldName('name') : node)?.text.split('.') ?? [];
      const alias = node.type === 'aliased_import' ? node.childForFieldName('alias')?.text : undefined;
      // `import a.b` binds `a`; `import a.b as m` binds `m` to a.b.
      if (alias !== undefined) bindings.push({ bound: alias, module: dotted, level: 0, name: null });
      else if (dotted[0] !== undefined) bindings.push({ bound: dotted[0], module: [dotted[0]], level: 0, name: null });
    }
    return bindings;
  }
  const moduleNode = statement.childForFieldName('module_name');
  if (!moduleNode) return bindings;
  const text = moduleNode.text;
  const level = /^\.*/.exec(text)?.[0].length ?? 0;
  const module = text.slice(level).split('.').filter((part) => part !== '');
  for (const node of names) {
    const name = (node.type === 'aliased_import' ? node.childForFieldName('name') : node)?.text;
    const alias = node.type === 'aliased_import' ? node.childForFieldName('alias')?.text : undefined;
    if (name !== undefined) bindings.push({ bound: alias ?? name, module, level, name });
  }
  return bindings;
}

/**
 * The definitions a node id runs: a function of the test file (or one it imports), or a
 * method looked up through the class, its nested classes and its bases, wherever they are
 * defined.
 */
async function findTest(resolver: DefinitionResolver, file: ParsedFile, parts: NodeIdParts): Promise<FoundTest[]> {
  if (parts.classes.length === 0) {
    // A name the module defines more than once (a test copied and left behind) is collected
    // as its last definition; deleting that one alone would let an earlier one run in its
    // place under the same id. Every definition goes, as for methods below.
    const local = findDefinitions(file.root, parts.name, 'function_definition');
    if (local.length > 0) return local.map((found) => ({ file, ...found, qualifiedName: parts.name }));
    const found = await resolver.lookup(file, [parts.name], 'function_definition');
    return found ? [{ ...found, qualifiedName: parts.name }] : [];
  }
  const [outer, ...inner] = parts.classes as [string, ...string[]];
  let start = await resolver.lookup(file, [outer], 'class_definition');
  for (const name of inner) {
    const body = start?.definition.childForFieldName('body');
    const nested = body ? findDefinitions(body, name, 'class_definition')[0] : undefined;
    start = start && nested ? { file: start.file, ...nested } : null;
  }
  // Where Python looks the name up: the class's method resolution order, as far as the test files hold its bases.
  const order = start ? await resolver.order(start) : [];
  for (const [index, current] of order.entries()) {
    const body = current.definition.childForFieldName('body');
    const methods = body ? findDefinitions(body, parts.name, 'function_definition') : [];
    if (methods.length === 0) continue;
    const owner = current.definition.childForFieldName('name')?.text ?? '';
    const overrides = order.slice(index + 1).some((later) => {
      const laterBody = later.definition.childForFieldName('body');
      return laterBody !== null && findDefinitions(laterBody, parts.name, 'function_definition').length > 0;
    });
    return methods.map((found) => ({ file: current.file, ...found, qualifiedName: `${owner}.${parts.name}`, ...(overrides ? { overrides: true as const } : {}) }));
  }
  return [];
}

/** A class definition's place in the test files. */
function keyOf(definition: Definition): string {
  return `${definition.file.path}:${definition.definition.startIndex}`;
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

/**
 * Deletes whole-line statements; a block left with no statement gets `pass`. A definition
 * in `shadowed` leaves `name = None` in its place (see {@link FoundTest.overrides}).
 */
function deleteStatements(source: string, statements: SyntaxNode[], shadowed: ReadonlySet<number> = new Set()): string {
  const lines = source.split('\n');
  const removedIds = new Set(statements.filter((node) => !shadowed.has(node.startIndex)).map((node) => node.id));
  const deleted = new Set<number>();
  const replacements = new Map<number, string>();
  for (const node of statements) {
    for (let row = node.startPosition.row; row <= node.endPosition.row; row += 1) deleted.add(row);
    const name = shadowed.has(node.startIndex) ? definitionOf(node)?.definition.childForFieldName('name')?.text : undefined;
    if (name !== undefined) replacements.set(node.startPosition.row, `${/^\s*/.exec(lines[node.startPosition.row] ?? '')?.[0] ?? ''}${name} = None`);
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
 * Whether a node id the source has no definition for names a test generated at import
 * (`setattr(cls, "test_" + case, ...)` over data files, as data-driven suites do), not a
 * doctest (`module.func`, never inside a class) or a file-level item. A generated method may
 * have any name (`test_example-2.17`): only a module-level one must look like an identifier.
 */
function isGeneratedTestName(parts: NodeIdParts): boolean {
  if (parts.name === '' || parts.name.includes('/') || !parts.classes.every((name) => /^[A-Za-z_]\w*$/.test(name))) return false;
  return parts.classes.length > 0 || !parts.name.includes('.');
}

/**
 * Python appended to a test module that deletes tests generated at import once the module
 * has made them: from the class (or the base class) that holds each, or from the module.
 */
function removeGeneratedTests(entries: ReadonlyArray<[string | null, string]>): string {
  const literal = (text: string | null): string => (text === null ? 'None' : JSON.stringify(text));
  return [
    '',
    '',
    '# Tests the weakening removes from this module once it has made them (generated at import, or bound by an import).',
    'for _weakened_owner, _weakened_name in [',
    ...entries.map(([owner, name]) => `    (${literal(owner)}, ${literal(name)}),`),
    ']:',
    '    if _weakened_owner is None:',
    '        globals().pop(_weakened_name, None)',
    '        continue',
    '    _weakened_class = globals().get(_weakened_owner.split(".")[0])',
    '    for _weakened_part in _weakened_owner.split(".")[1:]:',
    '        _weakened_class = getattr(_weakened_class, _weakened_part, None)',
    '    for _weakened_base in getattr(_weakened_class, "__mro__", ()):',
    '        if _weakened_name in vars(_weakened_base):',
    '            delattr(_weakened_base, _weakened_name)',
    '            break',
    '',
  ].join('\n');
}

/**
 * Whether a test with no definition of its own a weakening can delete is one it can deselect:
 * one a collector of the project's own made (a conftest's `pytest_pycollect_makeitem` turning
 * a function into one item per data file, as PyYAML's legacy tests, the function defined or
 * made at import; `pytest_collect_file` items of a non-Python file, named or not), or a doctest in a
 * module's docstrings (`--doctest-modules`).
 */
async function isCollectedTest(resolver: DefinitionResolver, testFiles: ReadonlySet<string>, parts: NodeIdParts): Promise<boolean> {
  const module = testFiles.has(parts.file) ? await resolver.file(parts.file) : null;
  const [outer] = parts.classes;
  // Its owner is no class of the source: a function (through star imports too) or one made at import.
  const ownedByNoClass = module !== null && outer !== undefined && (await resolver.lookup(module, [outer], 'class_definition', 0, true)) === null;
  // An item may have an empty name (pygments' golden files: `tests/examplefiles/moon/example.moon::`).
  const collectsFile = !parts.file.endsWith('.py') && !isDoctestTextId(parts);
  // A docstring's examples (`ordered_set/__init__.py::ordered_set.OrderedSet.index`), or a test
  // a source module defines beside its code (`patsy/util.py::test_asarray_or_pandas`): a source
  // file's text, which a weakening never edits.
  const inSource = parts.file.endsWith('.py') && !testFiles.has(parts.file);
  return ownedByNoClass || collectsFile || isModuleDoctest(parts) || inSource;
}

/**
 * A doctest of a Python module's docstrings: of a function or class (`pkg/mod.py::pkg.mod.f`),
 * or of the module's own (`src/sortedcontainers/__init__.py::sortedcontainers`, `mod.py::mod`).
 */
function isModuleDoctest(parts: NodeIdParts): boolean {
  return (parts.file.endsWith('.py') && parts.classes.length === 0 && parts.name.includes('.')) || isModuleOwnDoctest(parts);
}

/** The nearest conftest.py among the test files at or above `file`, or null. */
async function nearestConftest(resolver: DefinitionResolver, testFiles: ReadonlySet<string>, file: string): Promise<string | null> {
  for (let dir = dirnameOf(file); ; dir = dirnameOf(dir)) {
    const conftest = dir === '' ? 'conftest.py' : `${dir}/conftest.py`;
    if (testFiles.has(conftest) && (await resolver.file(conftest)) !== null) return conftest;
    if (dir === '') return null;
  }
}

/**
 * The test module that carries a deselection where no conftest.py is at or above the
 * deselected tests (python-ordered-set's and python-tabulate's doctests): one pytest imports
 * as a test module in every run of the suite, so one of its own tests (not only doctests) is
 * in `nodeIds`; one the weakening already edits first, else the first by path. Null without one.
 */
function deselectingModule(testFiles: ReadonlySet<string>, nodeIds: readonly string[], edited: ReadonlySet<string>): string | null {
  const modules = new Set<string>();
  for (const nodeId of nodeIds) {
    const parts = parseNodeId(nodeId);
    if (parts === null || !parts.file.endsWith('.py') || !testFiles.has(parts.file) || parts.file.split('/').at(-1) === 'conftest.py') continue;
    if (!isModuleDoctest(parts)) modules.add(parts.file);
  }
  const sorted = [...modules].sort();
  return sorted.find((path) => edited.has(path)) ?? sorted[0] ?? null;
}

/** Python that drops the items whose repo-relative node ids are in `ids` (whatever the rootdir), indented by `indent`, for a file `depth` directories below the repo. */
function deselectBody(indent: string, ids: string, depth: number): string[] {
  return [
    `${indent}import os`,
    '',
    `${indent}repo = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), *[".."] * ${depth}))`,
    `${indent}prefix = os.path.relpath(str(getattr(config, "rootpath", None) or config.rootdir), repo).replace(os.sep, "/")`,
    `${indent}prefix = "" if prefix == "." else prefix + "/"`,
    `${indent}items[:] = [item for item in items if prefix + item.nodeid not in ${ids}]`,
  ];
}

/** A Python list of node ids, one per line, indented by `indent`. */
function idLines(indent: string, nodeIds: readonly string[]): string[] {
  return [...nodeIds].sort().map((nodeId) => `${indent}    ${JSON.stringify(nodeId)},`);
}

/**
 * Python appended to a test module that deselects tests by node id through a plugin the module
 * names in its `pytest_plugins` (after any it names itself), which pytest registers when it
 * imports the module, before its `pytest_collection_modifyitems` runs. The plugin is a module
 * of its own, so the test module's own functions (a module-level `pytest_generate_tests`)
 * do not become hooks of the whole session.
 */
function deselectFromTestModule(module: string, nodeIds: readonly string[]): string {
  return [
    '',
    '',
    '# Tests the weakening removes: doctests of source modules or tests a collector made, with no definition',
    '# of their own to delete and no conftest.py above them, deselected by a plugin this module names.',
    'def _weakened_plugin():',
    '    import sys',
    '    import types',
    '',
    '    weakened_ids = frozenset([',
    ...idLines('    ', nodeIds),
    '    ])',
    '',
    '    def pytest_collection_modifyitems(config, items):',
    ...deselectBody('        ', 'weakened_ids', module.split('/').length - 1),
    '',
    '    plugin = types.ModuleType("_weakened_tests", "PYTEST_DONT_REWRITE")',
    '    plugin.pytest_collection_modifyitems = pytest_collection_modifyitems',
    '    sys.modules[plugin.__name__] = plugin',
    '    return plugin.__name__',
    '',
    '',
    '_weakened_own = globals().get("pytest_plugins") or []',
    'pytest_plugins = [*(_weakened_own.split(",") if isinstance(_weakened_own, str) else _weakened_own), _weakened_plugin()]',
    '',
  ].join('\n');
}

/**
 * Python appended to a conftest.py that deselects tests by node id (repo-relative, whatever
 * the rootdir), after the conftest's own `pytest_collection_modifyitems`, which it calls with
 * the arguments that hook takes (driving it through its `yield` when it is a hook wrapper),
 * and whose marks (ordering, wrapper) it takes.
 */
function deselectCollectedTests(conftest: string, nodeIds: readonly string[]): string {
  return [
    '',
    '',
    "# Tests the weakening removes: made by the project's own collectors, with no definition of their own to delete.",
    '_weakened_ids = frozenset([',
    ...idLines('', nodeIds),
    '])',
    '_weakened_hook = globals().get("pytest_collection_modifyitems")',
    '',
    '',
    'def _weakened_deselect(config, items):',
    ...deselectBody('    ', '_weakened_ids', conftest.split('/').length - 1),
    '',
    '',
    'def _weakened_call(session, config, items):',
    '    names = _weakened_hook.__code__.co_varnames[: _weakened_hook.__code__.co_argcount]',
    '    return _weakened_hook(**{k: v for k, v in (("session", session), ("config", config), ("items", items)) if k in names})',
    '',
    '',
    'if _weakened_hook is not None and __import__("inspect").isgeneratorfunction(_weakened_hook):',
    '',
    '    def pytest_collection_modifyitems(session, config, items):',
    '        wrapped = _weakened_call(session, config, items)',
    '        next(wrapped)',
    '        result = yield',
    '        try:',
    '            wrapped.send(result)',
    '        except StopIteration as stop:',
    '            result = stop.value',
    '        _weakened_deselect(config, items)',
    '        return result',
    '',
    'else:',
    '',
    '    def pytest_collection_modifyitems(session, config, items):',
    '        if _weakened_hook is not None:',
    '            _weakened_call(session, config, items)',
    '        _weakened_deselect(config, items)',
    '',
    '',
    'if _weakened_hook is not None:',
    '    pytest_collection_modifyitems.pytest_impl = dict(getattr(_weakened_hook, "pytest_impl", None) or {})',
    '',
  ].join('\n');
}

/**
 * Builds test_weaken.diff: deletes the tests named by FAIL_TO_PASS node ids from the test
 * files that define them, with tree-sitter (the code is deleted, never commented out). A
 * parametrized id `test_x[1-2]` deletes the function `test_x`; `tests/t.py::TestC::test_m`
 * deletes the method where it is defined: in the class, or in a base class or mixin, in the
 * same file or in another test module it is imported from (that file is then part of the
 * weakening and of test_files.txt); a class or branch left empty keeps a `pass`. Every
 * changed file must still parse. A test generated at import (no definition in the source,
 * e.g. one method per case of a data file) is removed by code appended to the module that
 * collects it, deleting it from its class once the module has made it. A test a collector of
 * the project's own made, a doctest of a source module's docstrings or a test a source module
 * defines beside its code, is deselected in the
 * nearest conftest.py at or above it, or, with none, by a plugin a test module names (see
 * {@link deselectingModule}; it needs `nodeIds`). A text file collected
 * as one doctest (`docs/usage.rst::usage.rst`) loses its examples, its prose kept. With
 * `nodeIds` (the suite's tests), `removedIds` names every test the deletions take away,
 * inherited copies in other classes included.
 */
export async function makeTestWeaken(options: MakeTestWeakenOptions): Promise<TestWeaken> {
  const testFiles = new Set(options.testFiles);
  const resolver = new DefinitionResolver((path) => (testFiles.has(path) ? options.readFile(path) : Promise.resolve(null)));
  const unresolved: string[] = [];
  const removed: WeakenRemoval[] = [];
  /** Per file: the statements to delete, by their start offset. */
  const deletions = new Map<string, { file: ParsedFile; nodes: Map<number, SyntaxNode> }>();
  const deletedFunctions = new Set<string>();
  /** Per file: the start offsets of overriding methods that a `name = None` replaces. */
  const shadowed = new Map<string, Set<number>>();
  const resolve = async (nodeId: string): Promise<FoundTest[]> => {
    const parts = parseNodeId(nodeId);
    const file = parts && testFiles.has(parts.file) ? await resolver.file(parts.file) : null;
    return parts && file ? findTest(resolver, file, parts) : [];
  };
  /** Per test module: tests generated at import (no definition in the source), as (class path, name). */
  const generated = new Map<string, Array<[string | null, string]>>();
  /** Per conftest.py (or test module naming a plugin): tests with no definition of their own, deselected there. */
  const deselected = new Map<string, string[]>();
  const deselect = (file: string, nodeId: string): void => {
    const parts = parseNodeId(nodeId);
    const entries = deselected.get(file) ?? [];
    if (!entries.includes(nodeId)) entries.push(nodeId);
    deselected.set(file, entries);
    removed.push({ nodeId, kind: 'collected', file, qualifiedName: parts === null ? nodeId : [...parts.classes, parts.name].join('.'), line: 0 });
  };
  /** Tests to deselect with no conftest.py at or above them: a test module's plugin does. */
  const uncollected: string[] = [];
  /** Text files collected as doctests, without their examples. */
  const texts: Array<{ path: string; before: string; after: string }> = [];
  for (const nodeId of [...new Set(options.failToPass)].sort()) {
    const parsed = parseNodeId(nodeId);
    if (parsed && isDoctestTextId(parsed)) {
      const before = await options.readFile(parsed.file);
      const weakened = before === null ? null : deleteDoctestExamples(before);
      if (before === null || weakened === null) unresolved.push(nodeId);
      else {
        texts.push({ path: parsed.file, before, after: weakened.text });
        removed.push({ nodeId, kind: 'doctest', file: parsed.file, qualifiedName: parsed.name, line: weakened.firstLine });
      }
      continue;
    }
    const module = parsed && parsed.classes.length === 0 && testFiles.has(parsed.file) ? await resolver.file(parsed.file) : null;
    if (parsed && module && lastBoundByImport(module, parsed.name)) {
      // Deleting the imported `def` would break the import; the name leaves the collecting module instead.
      const entries = generated.get(parsed.file) ?? [];
      if (!entries.some(([owner, name]) => owner === null && name === parsed.name)) entries.push([null, parsed.name]);
      generated.set(parsed.file, entries);
      removed.push({ nodeId, kind: 'imported', file: parsed.file, qualifiedName: parsed.name, line: 0 });
      continue;
    }
    const found = await resolve(nodeId);
    if (found.length === 0) {
      const parts = parseNodeId(nodeId);
      const collected = parts !== null && (await isCollectedTest(resolver, testFiles, parts));
      const conftest = parts !== null && collected ? await nearestConftest(resolver, testFiles, parts.file) : null;
      if (conftest !== null) {
        deselect(conftest, nodeId);
        continue;
      }
      if (parts !== null && testFiles.has(parts.file) && isGeneratedTestName(parts) && (await resolver.file(parts.file)) !== null) {
        const owner = parts.classes.length > 0 ? parts.classes.join('.') : null;
        const entries = generated.get(parts.file) ?? [];
        if (!entries.some(([o, n]) => o === owner && n === parts.name)) entries.push([owner, parts.name]);
        generated.set(parts.file, entries);
        removed.push({ nodeId, kind: 'generated', file: parts.file, qualifiedName: [...parts.classes, parts.name].join('.'), line: 0 });
        continue;
      }
      if (collected) uncollected.push(nodeId);
      else unresolved.push(nodeId);
      continue;
    }
    const line = options.failingLines?.[nodeId];
    for (const { file, definition, statement, qualifiedName, overrides } of found) {
      const assertion = options.mode === 'assertions' && line !== undefined && file.path === parseNodeId(nodeId)?.file ? failingAssertion(definition, line) : null;
      const target = assertion ?? statement;
      const entry = deletions.get(file.path) ?? { file, nodes: new Map<number, SyntaxNode>() };
      deletions.set(file.path, entry);
      entry.nodes.set(target.startIndex, target);
      if (!assertion) deletedFunctions.add(`${file.path}:${target.startIndex}`);
      if (!assertion && overrides === true) shadowed.set(file.path, (shadowed.get(file.path) ?? new Set<number>()).add(target.startIndex));
      removed.push({ nodeId, kind: assertion ? 'assertion' : 'function', file: file.path, qualifiedName, line: target.startPosition.row + 1 });
    }
  }
  if (uncollected.length > 0) {
    const module = deselectingModule(testFiles, options.nodeIds ?? [], new Set([...deletions.keys(), ...generated.keys()]));
    if (module === null || (await resolver.file(module)) === null) unresolved.push(...uncollected);
    else for (const nodeId of uncollected) deselect(module, nodeId);
  }
  const changes: Array<{ path: string; before: string; after: string }> = [];
  const paths = [...new Set([...deletions.keys(), ...generated.keys(), ...deselected.keys()])].sort();
  for (const path of paths) {
    const file = deletions.get(path)?.file ?? ((await resolver.file(path)) as ParsedFile);
    const nodes = deletions.get(path)?.nodes ?? new Map<number, SyntaxNode>();
    // A whole deleted function makes its own deleted assertions moot.
    const functions = [...nodes.values()].filter((node) => !isAssertion(node));
    const statements = [...nodes.values()].filter(
      (node) => !isAssertion(node) || !functions.some((fn) => fn.startIndex <= node.startIndex && node.endIndex <= fn.endIndex),
    );
    statements.push(...attributeAssignmentsOf(file.root, functions));
    const extra = generated.get(path);
    const collected = deselected.get(path);
    if (statements.length === 0 && extra === undefined && collected === undefined) continue;
    const deleted = statements.length === 0 ? file.source : deleteStatements(file.source, statements, shadowed.get(path));
    const deselection = collected === undefined ? [] : [path.split('/').at(-1) === 'conftest.py' ? deselectCollectedTests(path, collected) : deselectFromTestModule(path, collected)];
    const appended = [...(extra === undefined ? [] : [removeGeneratedTests(extra)]), ...deselection];
    const after = appended.length === 0 ? deleted : `${deleted.replace(/\s*$/, '\n')}${appended.join('')}`;
    if (!file.root.hasError && editHasSyntaxErrors(file.source, file.root, after)) {
      throw new EnvgenError(ERROR_CODES.internal, `Weakening ${path} left a syntax error; this is a bug in envgen, please report it with the file.`);
    }
    changes.push({ path, before: file.source, after });
  }
  changes.push(...texts);
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const names = new Set(removed.filter((entry) => entry.kind === 'function').map((entry) => entry.qualifiedName.split('.').at(-1)));
  const removedIds = new Set(removed.filter((entry) => entry.kind !== 'assertion').map((entry) => entry.nodeId));
  /** Module-level names taken out of a module's namespace: every parametrization of them goes. */
  const popped = new Set(removed.filter((entry) => entry.kind === 'imported' || (entry.kind === 'generated' && !entry.qualifiedName.includes('.'))).map((entry) => `${entry.file}::${entry.qualifiedName}`));
  for (const nodeId of options.nodeIds ?? []) {
    const parts = parseNodeId(nodeId);
    const name = parts?.name;
    if (parts && parts.classes.length === 0 && popped.has(`${parts.file}::${parts.name}`)) removedIds.add(nodeId);
    if (removedIds.has(nodeId) || name === undefined || !names.has(name)) continue;
    if ((await resolve(nodeId)).some((found) => deletedFunctions.has(`${found.file.path}:${found.statement.startIndex}`))) removedIds.add(nodeId);
  }
  return {
    diff: makePatch(changes),
    testFiles: changes.map((change) => change.path).sort(),
    removed,
    removedIds: [...removedIds].sort(),
    unresolved: unresolved.sort(),
  };
}
