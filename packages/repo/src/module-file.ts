/** The file of a module by its dotted name (`tests.settings`, `pkg.sub`), from the root or one of `roots` (`src`), if `files` (repo-relative) has it. */
export function moduleFile(files: readonly string[], roots: readonly string[], module: string): string | undefined {
  const path = module.split('.').join('/');
  return [...roots.map((root) => `${root}/`), ''].flatMap((prefix) => [`${prefix}${path}.py`, `${prefix}${path}/__init__.py`]).find((file) => files.includes(file));
}
