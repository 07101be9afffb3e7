import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { makeInstanceId } from '@envgen/core';
import type { BundleFiles, Instance, Task } from '@envgen/core';
import { openPool } from './pool.js';

const STRATEGIES = ['change_operator', 'invert_if_else', 'remove_function_body'] as const;
const REPOS = ['pytoolz/toolz', 'uiri/toml'] as const;

/** The `index`-th synthetic instance: distinct patch per index, repo and strategy cycling. */
export function makeSyntheticInstance(index: number, overrides: Partial<Instance> = {}): Instance {
  const repo = REPOS[index % REPOS.length] ?? REPOS[0];
  const strategy = overrides.strategy ?? STRATEGIES[index % STRATEGIES.length] ?? STRATEGIES[0];
  const [owner = '', name = ''] = repo.split('/');
  const commit = `${index % REPOS.length}`.repeat(40);
  const patch =
    overrides.patch ??
    `diff --git a/${name}/core.py b/${name}/core.py\n--- a/${name}/core.py\n+++ b/${name}/core.py\n@@ -${index + 1},1 +${index + 1},1 @@\n-    return x + ${index}\n+    return x - ${index}\n`;
  return {
    instance_id: makeInstanceId({ owner, name, commit, strategy, patch }),
    repo,
    base_commit: commit,
    patch,
    FAIL_TO_PASS: [`tests/test_core.py::test_add_${index}`],
    PASS_TO_PASS: ['tests/test_core.py::test_other', 'tests/test_core.py::test_more'],
    strategy,
    family: strategy === 'remove_function_body' ? 'removal' : 'procedural',
    seed: index,
    entities: [`${name}/core.py:add`],
    description: `synthetic bug ${index}`,
    created_at: new Date(Date.UTC(2025, 0, 1, 0, 0, index % 60)).toISOString(),
    ...overrides,
  };
}

/** A bundle whose files name the instance, so a mixed-up bundle is detectable. */
export function makeSyntheticBundle(instance: Instance): BundleFiles {
  return {
    'bug_inject.diff': instance.patch,
    'test_weaken.diff': `# weakens ${instance.instance_id}\n`,
    'test_files.txt': 'tests/test_core.py\n',
    'test_script.sh': `#!/bin/sh\n# ${instance.instance_id}\npython -m pytest -rA\n`,
    'test_parser.py': `# ${instance.instance_id}\nimport json, sys\nprint(json.dumps({}))\n`,
  };
}

/**
 * Where test pools go: tmpfs when there is one. The tests are about the index and the
 * listing; on this machine's disk each bundle directory costs ~5-10 ms to create.
 */
export function scratchBase(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/** A task for a synthetic instance: gold on its one function, a `tests` statement. */
export function makeSyntheticTask(instance: Instance, overrides: Partial<Task> = {}): Task {
  const [, name = ''] = instance.repo.split('/');
  return {
    instance_id: instance.instance_id,
    file_changes: [
      { file: `${name}/core.py`, changes: { edited_entities: [`${name}/core.py:add`], edited_modules: [`${name}/core.py:add`], added_entities: [], added_modules: [] } },
    ],
    problem_statement: { kind: 'tests', text: `${instance.FAIL_TO_PASS.join('\n')} fails`, created_at: instance.created_at },
    environment: { mirror: '/nonexistent/envs.git', ref: `refs/envgen/${instance.instance_id}`, commit: 'e'.repeat(40) },
    image_name: 'envgen/python:bookworm',
    ...overrides,
  };
}

/**
 * Fills the pool under `home` with synthetic instances 0…tasked+untasked-1 (each with the
 * fields `overrides(index)` gives), the first `tasked` with the task `task(instance, index)`
 * (a {@link makeSyntheticTask} by default).
 */
export function fillSyntheticPool(
  home: string,
  tasked: number,
  untasked = 0,
  task: (instance: Instance, index: number) => Task = (instance) => makeSyntheticTask(instance),
  overrides: (index: number) => Partial<Instance> = () => ({}),
): void {
  const pool = openPool(home);
  try {
    for (let index = 0; index < tasked + untasked; index += 1) {
      const instance = makeSyntheticInstance(index, overrides(index));
      pool.addInstance(instance, makeSyntheticBundle(instance));
      if (index < tasked) pool.putTask(task(instance, index));
    }
  } finally {
    pool.close();
  }
}
