import { describe, expect, it } from 'vitest';
import { findMissingPackages, findUnavailablePackages, hostAptCache, hostDpkgQuery } from './host-packages.js';

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
