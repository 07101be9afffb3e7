import { describe, expect, it } from 'vitest';
import { findMissingPackages, findOlderPackages, findUnavailablePackages, hostAptCache, hostDpkgQuery } from './host-packages.js';

describe('findMissingPackages', () => {
  it('reports the names dpkg does not list as installed', async () => {
    const query = async () => 'python3-pytest ii \npython3-yaml un \n';
    expect(await findMissingPackages(['python3-pytest', 'python3-yaml', 'python3-nope'], query)).toEqual(['python3-yaml', 'python3-nope']);
  });

  it('reports nothing when dpkg cannot answer, and asks nothing for no names', async () => {
    expect(await findMissingPackages(['python3-pytest'], async () => '')).toEqual([]);
    expect(await findMissingPackages([], async () => { throw new Error('not called'); })).toEqual([]);
  });

  it('reads the host for real', async () => {
    expect(await findMissingPackages(['coreutils', 'envgen-no-such-package'], hostDpkgQuery)).toEqual(['envgen-no-such-package']);
  });
});

describe('findUnavailablePackages', () => {
  const policy = ['python3:', '  Installed: 3.11.2-1+b1', '  Candidate: 3.11.2-1+b1', 'python3-yaml:', '  Installed: (none)', '  Candidate: 6.0-3+b2', 'python3-gone:', '  Installed: (none)', '  Candidate: (none)', ''].join('\n');

  it('reports the names apt has no candidate for: unknown, or known without one', async () => {
    expect(await findUnavailablePackages(['python3-yaml', 'python3-gone', 'python3-pympler'], async () => policy)).toEqual(['python3-gone', 'python3-pympler']);
  });

  it('reports nothing where apt has no package lists, and asks nothing for no names', async () => {
    expect(await findUnavailablePackages(['python3-yaml'], async () => '')).toEqual([]);
    expect(await findUnavailablePackages([], async () => { throw new Error('not called'); })).toEqual([]);
  });

  it('reads the host for real', async () => {
    // A machine whose apt never fetched package lists can tell nothing.
    const lists = /Candidate: (?!\(none\))/.test(await hostAptCache(['policy', 'python3']));
    expect(await findUnavailablePackages(['coreutils', 'envgen-no-such-package'], hostAptCache)).toEqual(lists ? ['envgen-no-such-package'] : []);
  });
});

describe('findOlderPackages', () => {
  const required = (pkg: string, version: string) => ({ package: pkg, version, requirement: `${pkg.replace('python3-', '')}>=${version}` });

  it('reports the installed packages older than the declared lower bounds, by upstream version (no epoch, no Debian revision)', async () => {
    const query = async () => 'python3-parso 0.8.3-1 ii \npython3-yaml 6.0-3+b2 ii \npython3-attr 1:22.2.0-1 ii \npython3-gone 9.0-1 un \n';
    const wanted = [required('python3-parso', '0.8.6'), required('python3-yaml', '6.0'), required('python3-attr', '23.1'), required('python3-gone', '10'), required('python3-rc', '2.0~rc1')];
    expect(await findOlderPackages(wanted, query)).toEqual([
      { ...required('python3-parso', '0.8.6'), installed: '0.8.3-1' },
      { ...required('python3-attr', '23.1'), installed: '1:22.2.0-1' },
    ]);
    // A pre-release bound is met by its release.
    expect(await findOlderPackages([required('python3-rc', '2.0~rc1')], async () => 'python3-rc 2.0-1 ii \n')).toEqual([]);
  });

  it('asks nothing for no bounds, and reads the host for real', async () => {
    expect(await findOlderPackages([], async () => { throw new Error('not called'); })).toEqual([]);
    expect(await findOlderPackages([required('coreutils', '999')], hostDpkgQuery)).toMatchObject([{ package: 'coreutils', requirement: 'coreutils>=999' }]);
  });
});
