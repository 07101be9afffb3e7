import Parser from 'tree-sitter';
import Python from 'tree-sitter-python';
import { EnvgenError, ERROR_CODES, describeError } from '@envgen/core';

/** A tree-sitter syntax tree of one Python source. */
export type Tree = Parser.Tree;
/** A node of a {@link Tree}. */
export type SyntaxNode = Parser.SyntaxNode;

// Node types that carry no program structure: comparing trees skips them.
const IGNORED_TYPES = new Set(['comment', 'line_continuation']);

let sharedParser: Parser | undefined;

function getParser(): Parser {
  if (sharedParser === undefined) {
    const parser = new Parser();
    parser.setLanguage(Python as Parser.Language);
    sharedParser = parser;
  }
  return sharedParser;
}

/**
 * Parses Python source with tree-sitter-python (one shared parser; any file size).
 * Note that the node binding's `startIndex`/`endIndex` are UTF-16 code-unit offsets into
 * `source` (JavaScript string indices); use {@link createOffsetMap} for UTF-8 bytes.
 */
export function parsePython(source: string): Tree {
  let tree: Tree | undefined;
  try {
    // tree-sitter 0.25's node binding reads a string through a 32 KiB buffer in chunks, so
    // sources of any size parse without a bufferSize (older bindings failed past 32 KiB).
    tree = getParser().parse(source);
  } catch (error) {
    throw new EnvgenError(
      ERROR_CODES.parseFailed,
      `tree-sitter could not parse a Python source of ${source.length} characters: ${describeError(error)}; check the file is text`,
      { cause: error },
    );
  }
  if (tree === undefined) {
    throw new EnvgenError(ERROR_CODES.parseFailed, 'tree-sitter returned no tree for a Python source; check the file is text');
  }
  return tree;
}

/** True when tree-sitter finds an error or a missing token anywhere in `source`. */
export function hasSyntaxErrors(source: string): boolean {
  return parsePython(source).rootNode.hasError;
}

/**
 * Yields the structure of a tree in preorder: node types on entry and exit, leaf texts, the
 * exact text of string contents. Comments and line continuations are skipped, so sources that
 * differ only in comments or whitespace yield the same sequence.
 */
function* walkStructure(tree: Tree): Generator<string> {
  const cursor = tree.walk();
  for (;;) {
    const type = cursor.nodeType;
    if (!IGNORED_TYPES.has(type)) {
      yield `(${type}`;
      if (type === 'string_content') yield cursor.nodeText;
      if (cursor.gotoFirstChild()) continue;
      yield `=${cursor.nodeText}`;
      yield ')';
    }
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) return;
      yield ')';
    }
  }
}

/**
 * True when `a` and `b` parse to the same syntax tree, ignoring comments and whitespace
 * (string contents and every token's text still count). Either may be given parsed.
 */
export function sameSyntaxTree(a: string | Tree, b: string | Tree): boolean {
  const left = walkStructure(typeof a === 'string' ? parsePython(a) : a);
  const right = walkStructure(typeof b === 'string' ? parsePython(b) : b);
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done === true || y.done === true) return x.done === y.done;
    if (x.value !== y.value) return false;
  }
}
