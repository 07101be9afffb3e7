import { describe, expect, it } from 'vitest';
import { linuxEnvironment, markerHolds, readMarkerEnvironment } from './markers.js';

const here = linuxEnvironment('3.11.2');

describe('markerHolds', () => {
  it.each([
    ['python_version < "3.8"', false],
    ["python_version >= '3.8'", true],
    ['python_version>"2.7"', true],
    ['python_version <= "3.11"', true],
    ['python_version == "3.11"', true],
    ['python_full_version >= "3.11.1"', true],
    ['python_version ~= "3.9"', true],
    ['python_version ~= "3.12.0"', false],
    ['sys_platform == "win32"', false],
    ["sys_platform != 'win32' and python_version < '3.12'", true],
    ['sys_platform == "win32" or platform_system == "Linux"', true],
    ['(sys_platform == "darwin" or sys_platform == "win32") and python_version >= "3"', false],
    ['platform_python_implementation == "PyPy"', false],
    ['"linux" in sys_platform', true],
    ['os_name not in "nt java"', true],
  ])('%s → %s', (marker, holds) => {
    expect(markerHolds(marker, here)).toBe(holds);
  });

  it('cannot tell a marker on what the environment does not give, nor one that does not parse, unless the rest decides it', () => {
    expect(markerHolds('extra == "test"', here)).toBeNull();
    expect(markerHolds('extra == "test" and sys_platform == "win32"', here)).toBe(false);
    expect(markerHolds('extra == "test" or sys_platform == "linux"', here)).toBe(true);
    expect(markerHolds('python_version <', here)).toBeNull();
    expect(markerHolds('python_version < "3.8" garbage', here)).toBeNull();
    expect(markerHolds('platform_release >= "5"', here)).toBeNull();
  });
});

describe('readMarkerEnvironment', () => {
  it("reads Debian's python3, and gives none for a python that does not run", async () => {
    expect((await readMarkerEnvironment('/usr/bin/python3'))?.['python_version']).toMatch(/^3\.\d+$/);
    expect(await readMarkerEnvironment('/nonexistent/python3')).toBeUndefined();
  });
});
