function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

// dpkg's character order: `~` sorts before everything (even the end), letters before other symbols.
function order(c: string | undefined): number {
  if (c === undefined || isDigit(c)) return 0;
  if (c === '~') return -1;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  return c.charCodeAt(0) + 256;
}

function compareFragment(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    while ((i < a.length && !isDigit(a[i])) || (j < b.length && !isDigit(b[j]))) {
      const diff = order(a[i]) - order(b[j]);
      if (diff !== 0) return diff;
      i += 1;
      j += 1;
    }
    while (a[i] === '0') i += 1;
    while (b[j] === '0') j += 1;
    let firstDiff = 0;
    while (isDigit(a[i]) && isDigit(b[j])) {
      if (firstDiff === 0) firstDiff = a.charCodeAt(i) - b.charCodeAt(j);
      i += 1;
      j += 1;
    }
    if (isDigit(a[i])) return 1;
    if (isDigit(b[j])) return -1;
    if (firstDiff !== 0) return firstDiff;
  }
  return 0;
}

function splitVersion(version: string): { epoch: number; upstream: string; revision: string } {
  const colon = version.indexOf(':');
  const epoch = colon >= 0 ? Number(version.slice(0, colon)) : 0;
  const rest = colon >= 0 ? version.slice(colon + 1) : version;
  const dash = rest.lastIndexOf('-');
  return dash >= 0 ? { epoch, upstream: rest.slice(0, dash), revision: rest.slice(dash + 1) } : { epoch, upstream: rest, revision: '' };
}

/** Compares two Debian versions like `dpkg --compare-versions`: negative, zero or positive. */
export function compareDebianVersions(a: string, b: string): number {
  const left = splitVersion(a);
  const right = splitVersion(b);
  if (left.epoch !== right.epoch) return left.epoch - right.epoch;
  return compareFragment(left.upstream, right.upstream) || compareFragment(left.revision, right.revision);
}
