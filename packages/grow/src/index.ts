export { allocateBudget, DEFAULT_EXPLORE } from './allocate.js';
export type { AllocateOptions, ArmPlan, ArmStats } from './allocate.js';
export { collectArmStats } from './arm-stats.js';
export type { Arm, ArmTally, CollectArmStatsOptions, OutcomeGroup } from './arm-stats.js';
export { planRound } from './plan-round.js';
export type { PlanRoundOptions, RepoWork, RoundPlan } from './plan-round.js';
export { outcomeKey, processInject, processRollouts, processTasks } from './round-jobs.js';
export type {
  GrowJobData,
  GrowServices,
  InjectJobData,
  InjectResult,
  RolloutOutcome,
  RolloutsJobData,
  RolloutsResult,
  RoundJobData,
  SolverItem,
  SolverSpec,
  StoredInstance,
  TasksJobData,
  TasksResult,
} from './round-jobs.js';
export { finishRound } from './finish-round.js';
export type { RepoOutcome } from './finish-round.js';
export { countJobs, runRoundInProcess } from './run-in-process.js';
export type { RoundEvent, RoundStage, RunInProcessOptions } from './run-in-process.js';
export { HOST_QUEUE, JOBS_QUEUE, SCHEDULER_ID, enqueueRound, obliterateQueues, readQueueStatus, roundFlow, scheduleRounds, startHost, startWorker, waitForRound } from './queue.js';
export type { JobSummary, QueueConnection, QueueStatus, RetryOptions, RoundTemplate, StartHostOptions, StartWorkerOptions } from './queue.js';
export { nextRunAt } from './schedule.js';
