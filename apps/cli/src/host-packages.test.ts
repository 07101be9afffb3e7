import { describe, expect, it } from 'vitest';
import { findMissingPackages, hostDpkgQuery } from './host-packages.js';

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
