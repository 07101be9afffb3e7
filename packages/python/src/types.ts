/** What kind of definition an entity is. */
export type EntityKind = 'function' | 'method' | 'class';

/**
 * A function, method or class of one Python file. Nested functions are not entities of
 * their own: they belong to their outer function (DESIGN.md).
 */
export interface Entity {
  kind: EntityKind;
  /** Qualified name: `func`, `Class`, `Class.method`, `Outer.Inner.method`. */
  qualifiedName: string;
  /** Simple name (last segment of qualifiedName). */
  name: string;
  /** Enclosing class's qualified name for methods, else null. */
  className: string | null;
  /** 1-based first line, including decorators. */
  startLine: number;
  /** 1-based last line. */
  endLine: number;
  /** 1-based line of the `def`/`class` keyword (after decorators). */
  defLine: number;
  /** Byte offsets of the whole definition, decorators included: [start, end). */
  startByte: number;
  endByte: number;
  /** Byte offsets of the body block. */
  bodyStartByte: number;
  bodyEndByte: number;
  isAsync: boolean;
  decorators: string[];
}

/** Entities of one file, in source order (classes before their methods). */
export interface FileEntities {
  /** Repo-relative path with forward slashes. */
  path: string;
  entities: Entity[];
  /** True when tree-sitter found syntax errors (entities are still best-effort). */
  hasErrors: boolean;
}
