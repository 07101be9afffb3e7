/** A pytest node id taken apart the way pytest builds it. */
export interface NodeIdParts {
  /** The file part, relative to pytest's rootdir (`tests/test_x.py`). */
  file: string;
  /** Classes from the outermost in (`TestA`, `TestA::Inner` → `['TestA', 'Inner']`). */
  classes: string[];
  /** The test's name without parameters (`test_b`); for a doctest, the doctest's name. */
  name: string;
  /** The parameter id inside the brackets, or null (`test_b[sum(a)::integer as x]` → `sum(a)::integer as x`). */
  params: string | null;
}

/**
 * Parses `file::Class::test[params]`. pytest appends the parameter id in brackets to the last
 * part verbatim, so it may hold `::`, brackets, quotes and spaces: the parameters start at the
 * first `[` after the file part and run to the final `]`. Null when there is no `::`.
 */
export function parseNodeId(nodeId: string): NodeIdParts | null {
  const fileEnd = nodeId.indexOf('::');
  if (fileEnd < 0) return null;
  const bracket = nodeId.indexOf('[', fileEnd);
  const parametrized = bracket >= 0 && nodeId.endsWith(']');
  const head = parametrized ? nodeId.slice(0, bracket) : nodeId;
  const parts = head.split('::');
  return {
    file: parts[0] ?? '',
    classes: parts.slice(1, -1),
    name: parts[parts.length - 1] ?? '',
    params: parametrized ? nodeId.slice(bracket + 1, -1) : null,
  };
}

/** The file part of a node id (`tests/t.py::T::test[a::b]` → `tests/t.py`); the id itself when it has none. */
export function nodeIdFile(nodeId: string): string {
  return parseNodeId(nodeId)?.file ?? nodeId;
}

/**
 * Whether the node id names the doctest of a module's own docstring, which pytest names by
 * the module (`mod.py::mod`, `src/pkg/__init__.py::pkg`): no function or class of the module
 * of that name.
 */
export function isModuleOwnDoctest(parts: NodeIdParts): boolean {
  if (!parts.file.endsWith('.py') || parts.classes.length > 0) return false;
  const [module, parent] = parts.file.slice(0, -'.py'.length).split('/').reverse();
  return parts.name === (module === '__init__' ? parent : module);
}

/** The node id without its parameters (`tests/t.py::test[a::b]` → `tests/t.py::test`). */
export function unparametrizedNodeId(nodeId: string): string {
  const parts = parseNodeId(nodeId);
  return parts === null ? nodeId : [parts.file, ...parts.classes, parts.name].join('::');
}

/**
 * Node ids that name the same test differently in two runs of one suite: a parametrized
 * test whose parameter ids are made at import from the time, a random value or an address
 * (`test_parse[11:22:00 2026-11-24]`) collects as many cases in both runs under other
 * names. For each parametrized test present in both runs with the same number of cases,
 * the ids only one run has are returned (both runs' names). A test whose cases are missing
 * from one run (its module no longer collects) or whose count changed is not volatile:
 * those ids are gone, not renamed.
 */
export function volatileIds(first: Iterable<string>, second: Iterable<string>): Set<string> {
  const casesOf = (ids: Iterable<string>): Map<string, Set<string>> => {
    const cases = new Map<string, Set<string>>();
    for (const id of ids) {
      const parts = parseNodeId(id);
      if (parts === null || parts.params === null) continue;
      const base = [parts.file, ...parts.classes, parts.name].join('::');
      let set = cases.get(base);
      if (set === undefined) cases.set(base, (set = new Set()));
      set.add(id);
    }
    return cases;
  };
  const ours = casesOf(first);
  const theirs = casesOf(second);
  const volatile = new Set<string>();
  for (const [base, mine] of ours) {
    const other = theirs.get(base);
    if (other === undefined || other.size !== mine.size) continue;
    for (const id of mine) if (!other.has(id)) volatile.add(id);
    for (const id of other) if (!mine.has(id)) volatile.add(id);
  }
  return volatile;
}
