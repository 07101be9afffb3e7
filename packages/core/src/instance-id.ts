import { sha256 } from './hash.js';

/**
 * The stable id of a bug: `<owner>__<name>.<sha8>.<strategy>__<hash8>`, where hash8 derives
 * from the patch alone, so the same bug gets the same id on every machine and run.
 */
export function makeInstanceId(input: { owner: string; name: string; commit: string; strategy: string; patch: string }): string {
  return `${input.owner}__${input.name}.${input.commit.slice(0, 8)}.${input.strategy}__${sha256(input.patch).slice(0, 8)}`;
}
