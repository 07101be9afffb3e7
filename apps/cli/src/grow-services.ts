import { join } from 'node:path';
import type { Settings } from '@envgen/config';
import { EnvgenError } from '@envgen/core';
import type { Instance, Logger, Task } from '@envgen/core';
import { outcomeKey } from '@envgen/grow';
import type { GrowServices, RolloutOutcome, StoredInstance } from '@envgen/grow';
import { openPool } from '@envgen/pool';
import { acquireRepo, parseRepoSpec, runGit } from '@envgen/repo';
import type { ResolvedRepo } from '@envgen/repo';
import { buildInstanceEnvironment, environmentMirrorPath } from '@envgen/tasks';
import { runInject } from './inject-command.js';
import { createProgress } from './progress.js';
import { openRunSolver, rolloutTasks } from './run-command.js';
import { runTasks } from './tasks-command.js';

/**
 * Where a process running growth jobs keeps the instances it proves before they travel to the
 * pool's host: a pool of its own under `<home>/worker`, which also remembers its rejections.
 * Mirrors, baselines and environments stay in the home itself.
 */
export function workerPoolHome(home: string): string {
  return join(home, 'worker');
}

/**
 * The effects of a growth round's jobs in this process's home, built from the same code as
 * `envgen inject`, `envgen tasks` and `envgen run`.
 */
export function createGrowServices(settings: Settings, logger: Logger, env: Record<string, string | undefined>): GrowServices {
  const quiet = createProgress({ quiet: true });
  const poolHome = workerPoolHome(settings.home);
  const acquired = new Map<string, Promise<ResolvedRepo>>();
  const acquire = (spec: string): Promise<ResolvedRepo> => {
    let repo = acquired.get(spec);
    if (repo === undefined) {
      repo = acquireRepo(parseRepoSpec(spec), { home: settings.home, githubBaseUrl: settings.githubUrl, logger });
      acquired.set(spec, repo);
      repo.catch(() => acquired.delete(spec));
    }
    return repo;
  };
  const localizeTask = async (spec: string, instance: Instance, task: Task): Promise<Task> => {
    // Built in this home already (a round run in-process, or a worker's own tasks)?
    const here = environmentMirrorPath(settings.home, instance.repo);
    if (task.environment.mirror === here && (await runGit(['--git-dir', here, 'cat-file', '-e', `${task.environment.commit}^{commit}`]).then(() => true, () => false))) return task;
    const repo = await acquire(spec);
    const environment = await buildInstanceEnvironment({
      home: settings.home,
      repo: instance.repo,
      commit: instance.base_commit,
      sourceGitDir: repo.mirror,
      submodules: repo.submodules,
      instanceId: instance.instance_id,
      patch: instance.patch,
    });
    if (environment.commit !== task.environment.commit) {
      throw new EnvgenError('internal', `the environment of ${instance.instance_id} rebuilt here is commit ${environment.commit}, not ${task.environment.commit} as where its task was built`);
    }
    return { ...task, environment };
  };
  const readStored = (ids: readonly string[]): StoredInstance[] => {
    const pool = openPool(poolHome, { logger });
    try {
      return [...new Set(ids)].sort().map((id) => {
        const instance = pool.getInstance(id);
        if (instance === undefined) throw new EnvgenError('store-corrupt', `instance ${id} vanished from the worker pool at ${pool.dir}`);
        return { instance, bundle: pool.readBundle(id) };
      });
    } finally {
      pool.close();
    }
  };

  return {
    async inject(job) {
      const strategies = Object.keys(job.quotas).sort();
      const report = await runInject({ repo: job.spec, count: 0, seed: job.seed, strategies, combine: 0, quotas: job.quotas, tasks: null, poolHome }, settings, logger, quiet, env);
      return {
        repo: job.repo,
        shard: job.shard,
        arms: Object.entries(report.byStrategy).map(([strategy, tally]) => ({ repo: job.repo, strategy, candidates: tally.tried, kept: tally.kept, known: tally.known, rejected: tally.rejected })),
        instances: readStored([...report.instanceIds, ...report.knownIds]),
        seconds: report.seconds,
      };
    },

    async buildTasks(job, instances) {
      const pool = openPool(poolHome, { logger });
      try {
        for (const { instance, bundle } of instances) pool.addInstance(instance, bundle);
      } finally {
        pool.close();
      }
      const report = await runTasks({ repo: job.spec, statement: 'tests', poolHome }, settings, logger, quiet, env);
      const wanted = new Set(instances.map((item) => item.instance.instance_id));
      const reopened = openPool(poolHome, { logger });
      try {
        const tasks = [...wanted].sort().flatMap((id) => reopened.getTask(id) ?? []);
        return { tasks, failed: report.failed.filter((entry) => wanted.has(entry.instance_id)) };
      } finally {
        reopened.close();
      }
    },

    async rollouts(job, items) {
      const tasks: Task[] = [];
      for (const item of items) tasks.push(await localizeTask(job.spec, item.instance, item.task));
      const { solver } = job;
      const agent = solver.kind === 'agent' ? solver : undefined;
      const options = {
        solver: solver.kind,
        attempts: job.rollouts,
        runId: `${job.roundId}-${job.repo.replace('/', '__')}`,
        ...(agent === undefined
          ? {}
          : {
              model: agent.model,
              ...(agent.baseUrl === undefined ? {} : { baseUrl: agent.baseUrl }),
              ...(agent.toolFormat === undefined ? {} : { toolFormat: agent.toolFormat }),
              ...(agent.maxTurns === undefined ? {} : { maxTurns: agent.maxTurns }),
              ...(agent.temperature === undefined ? {} : { temperature: agent.temperature }),
            }),
      };
      const runSolver = await openRunSolver(options, settings, logger, quiet, env);
      const outcomes: RolloutOutcome[] = [];
      const { report } = await rolloutTasks(tasks, options, runSolver, settings, logger, quiet, (trajectory, attempt) => {
        outcomes.push({ key: outcomeKey(job.roundId, trajectory.instance_id, attempt), instanceId: trajectory.instance_id, reward: trajectory.reward.reward, solved: trajectory.solved });
      });
      outcomes.sort((a, b) => (a.key < b.key ? -1 : 1));
      return { outcomes, tokens: report.usage.total_tokens };
    },

    localizeTask,
  };
}
