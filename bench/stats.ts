import { execFileSync } from 'node:child_process';

/** Median of a non-empty list of numbers. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A fixed-width text table. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Runs `work` over `items` with at most `limit` at once, keeping the order of results. */
export async function mapPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * This machine's price of a page fault, which the validator's forked runs pay on every page
 * they write (copy-on-write) and a fresh process on every page it first touches: medians of
 * microseconds per 4 KiB page, measured with Debian's Python. Virtual machines differ by an
 * order of magnitude here, and with them every fork-based figure.
 */
export function pageFaultMicros(python = '/usr/bin/python3'): { firstTouch: number; copyOnWrite: number } {
  const script = `
import mmap, os, statistics, time
PAGES = 8192
def touch(region):
    started = time.perf_counter()
    for offset in range(0, PAGES * 4096, 4096):
        region[offset] = 1
    return (time.perf_counter() - started) / PAGES * 1e6
first, copied = [], []
for _ in range(5):
    region = mmap.mmap(-1, PAGES * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    first.append(touch(region))
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(writer, repr(touch(region)).encode())
        os._exit(0)
    os.close(writer)
    copied.append(float(os.read(reader, 64)))
    os.close(reader)
    os.waitpid(pid, 0)
    region.close()
print(statistics.median(first), statistics.median(copied))
`;
  const [firstTouch, copyOnWrite] = execFileSync(python, ['-c', script], { encoding: 'utf8' }).trim().split(' ').map(Number);
  return { firstTouch: firstTouch ?? Number.NaN, copyOnWrite: copyOnWrite ?? Number.NaN };
}
