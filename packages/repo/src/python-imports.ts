/**
 * An import statement (`import a.b as c, d`, `from .x import (y, z)` over several lines), read
 * by its text: the indent before it, the module after `from`, and what follows `import` up to a
 * comment or the line's end, or the closing parenthesis.
 */
const IMPORT_STATEMENT = /^([ \t]*)(?:from[ \t]+([\w.]+)[ \t]+)?import[ \t]+(\([^)]*\)?|[^\n#;]*)/gm;

/** One import statement of a Python text. */
export interface ImportStatement {
  /** At column 0: run when the module is imported (not under `try`, `if` or a function). */
  moduleLevel: boolean;
  /** The dotted modules it imports: `import a.b as c, d` → a.b, d; `from .x import y` → .x. */
  modules: string[];
  /** The names `from … import` takes from its module: `from a import (b, c as d)` → b, c. */
  names: string[];
}

/** The import statements of a Python text, in order. */
export function importStatements(text: string): ImportStatement[] {
  const statements: ImportStatement[] = [];
  for (const [, indent, from, imported] of text.matchAll(IMPORT_STATEMENT)) {
    // Each comma-separated `name` or `name as alias`, up to the first that is neither (prose
    // in a docstring that starts with `import`, `*`): the name, not its alias.
    const items: string[] = [];
    for (const item of (imported ?? '').replace(/#[^\n]*/g, '').replace(/[()]/g, '').split(',')) {
      const name = /^\s*([A-Za-z_][\w.]*)(?:\s+as\s+\w+)?\s*$/.exec(item)?.[1];
      if (name === undefined) break;
      items.push(name);
    }
    statements.push(from === undefined ? { moduleLevel: indent === '', modules: items, names: [] } : { moduleLevel: indent === '', modules: [from], names: items });
  }
  return statements;
}

/** The top-level module names a Python text imports at module level (`__future__` and relative imports left out). */
export function moduleLevelImports(text: string): string[] {
  const names = new Set<string>();
  for (const statement of importStatements(text)) {
    if (!statement.moduleLevel) continue;
    for (const module of statement.modules) {
      const top = module.split('.')[0] ?? '';
      if (top !== '' && top !== '__future__') names.add(top);
    }
  }
  return [...names].sort();
}

/**
 * The module names the import statements of a Python text name anywhere in it, each dotted part
 * and each name taken from a module (`from .util import square` → util, square; `import a.b as
 * c` → a, b): by basename, so `stem` stands for any module whose file is `stem.py`.
 */
export function importedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const statement of importStatements(text)) {
    for (const name of [...statement.modules.flatMap((module) => module.split('.')), ...statement.names]) if (name !== '') names.add(name);
  }
  return names;
}
