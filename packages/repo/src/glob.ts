const cache = new Map<string, RegExp>();

/**
 * A regular expression for a repo-relative glob. `*` and `?` stay within one path segment, `**`
 * spans segments (and `**` plus a slash also matches no directory at all). A glob without `/` matches the basename anywhere in
 * the tree, like pytest's `python_files` and gitignore.
 */
export function globToRegExp(glob: string): RegExp {
  const known = cache.get(glob);
  if (known) return known;
  const anchored = glob.includes('/') ? glob.replace(/^\//, '') : `**/${glob}`;
  let source = '';
  for (let i = 0; i < anchored.length; i += 1) {
    const c = anchored[i] ?? '';
    if (c === '*' && anchored[i + 1] === '*') {
      const slash = anchored[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const regex = new RegExp(`^${source}$`);
  cache.set(glob, regex);
  return regex;
}

/** True when the repo-relative `path` matches any of `globs`. */
export function matchesAnyGlob(path: string, globs: readonly string[]): boolean {
  return globs.some((glob) => globToRegExp(glob).test(path));
}
