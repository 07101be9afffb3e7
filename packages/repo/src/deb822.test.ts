import { describe, expect, it } from 'vitest';
import { parseDeb822Sources, parseOneLineSources } from './apt-sources.js';
import { findSourceStanzas, findSourcesOfBinary, parseChecksums, parseDeb822, parseDependsField, selectTestPackages } from './deb822.js';
import { compareDebianVersions } from './debian-version.js';

const INDEX = `Package: toolz
Binary: python3-toolz, python-toolz-doc
Version: 0.12.0-1
Build-Depends: debhelper-compat (= 13), dh-python, python3-docutils, python3-sphinx, python3-all, python3-pytest, python3-setuptools
Checksums-Sha256:
 b0fc 1545 toolz_0.12.0-1.dsc
 04d5 94809 toolz_0.12.0.orig.tar.gz
Directory: pool/main/t/toolz

Package: toolz-extra
Binary: python3-toolz-extra
Version: 1.0-1

Package: toolz
Binary: python3-toolz
Version: 0.11.2-2
`;

describe('deb822', () => {
  it('parses paragraphs with continuation lines and comments', () => {
    const [stanza] = parseDeb822('# comment\nA: 1\nB:\n two\n three\n\n\nC: x\n');
    expect(stanza).toEqual({ A: '1', B: '\ntwo\nthree' });
    expect(parseDeb822('A: 1\n\nC: x')).toHaveLength(2);
  });

  it('finds every stanza of a source without matching prefixes', () => {
    expect(findSourceStanzas(INDEX, 'toolz').map((stanza) => stanza['Version'])).toEqual(['0.12.0-1', '0.11.2-2']);
    expect(findSourceStanzas(INDEX, 'toolz-extra')).toHaveLength(1);
    expect(findSourceStanzas(INDEX, 'tool')).toHaveLength(0);
    expect(findSourcesOfBinary(INDEX, 'python-toolz-doc')).toEqual(['toolz']);
  });

  it('reads checksums', () => {
    const [stanza] = findSourceStanzas(INDEX, 'toolz');
    expect(parseChecksums(stanza?.['Checksums-Sha256'] ?? '').get('toolz_0.12.0.orig.tar.gz')).toEqual({ sha256: '04d5', size: 94809 });
  });

  it('reduces Build-Depends to package names', () => {
    expect(parseDependsField('a (>= 1) [amd64] <!nocheck>, b:any | c, python3-all-dev:native,\n d <!nodoc> <pkg.x>')).toEqual(['a', 'b', 'python3-all-dev', 'd']);
  });

  it('keeps test packages and drops build and doc tooling', () => {
    const packages = selectTestPackages({
      'Build-Depends': 'debhelper-compat (= 13), dh-python, dh-sequence-python3, python3-all, python3-sphinx, python3-setuptools-scm, pybuild-plugin-pyproject, flit, python3-yaml, python3-pathspec (>= 0.5.3)',
      'Build-Depends-Indep': 'python3-json-pointer, python3-hatchling, python3-wheel, python3-pip, sphinx-rtd-theme-common, libpython3-all-dev, python3-poetry-core',
    });
    expect(packages).toEqual(['python3-json-pointer', 'python3-pathspec', 'python3-pytest', 'python3-yaml']);
  });
});

describe('compareDebianVersions', () => {
  it('orders versions like dpkg', () => {
    const ordered = ['1.0~rc1-1', '1.0-1', '1.0-1+deb12u1', '1.0a-1', '1.0.1-1', '1.10-1', '1:0.1-1'];
    const shuffled = [ordered[3], ordered[6], ordered[0], ordered[5], ordered[2], ordered[1], ordered[4]] as string[];
    expect(shuffled.sort(compareDebianVersions)).toEqual(ordered);
    expect(compareDebianVersions('0.13.0-1.1~deb12u1', '0.13.0-1.1')).toBeLessThan(0);
    expect(compareDebianVersions('2.1.2-1', '2.1.2-1')).toBe(0);
  });
});

describe('apt sources', () => {
  it('reads deb822 .sources files', () => {
    const text = `Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main contrib

Types: deb
URIs: http://deb.debian.org/debian-security/
Suites: bookworm-security
Components: main
Enabled: no

Types: deb
URIs: mirror+file:/etc/apt/mirrors.txt
Suites: bookworm
Components: main
`;
    expect(parseDeb822Sources(text)).toEqual([
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm', components: ['main', 'contrib'] },
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm-updates', components: ['main', 'contrib'] },
    ]);
  });

  it('reads one-line sources.list files', () => {
    const text = 'deb [signed-by=/k.gpg] http://deb.debian.org/debian bookworm main # c\n# deb http://x y z\ndeb-src https://m.example/debian/ sid main non-free\n';
    expect(parseOneLineSources(text)).toEqual([
      { uri: 'http://deb.debian.org/debian', suite: 'bookworm', components: ['main'] },
      { uri: 'https://m.example/debian', suite: 'sid', components: ['main', 'non-free'] },
    ]);
  });
});
