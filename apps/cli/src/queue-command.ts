import type { QueueStatus } from '@envgen/grow';
import { formatTable } from './pool-command.js';

/** The human form of the queue's status. */
export function formatQueueStatus(status: QueueStatus): string {
  const states = ['waiting', 'waiting-children', 'active', 'delayed', 'completed', 'failed'];
  const counts = formatTable(['queue', ...states], Object.entries(status.counts).map(([queue, byState]) => [queue, ...states.map((state) => String(byState[state] ?? 0))]), new Set([1, 2, 3, 4, 5, 6]));
  const job = (entry: QueueStatus['active'][number]) => `  ${entry.name} ${entry.repo ?? ''} (${entry.id}, try ${entry.attemptsMade + 1})${entry.failedReason === null ? '' : `: ${entry.failedReason}`}`;
  return [
    counts,
    `rounds in progress  ${status.rounds.length === 0 ? 'none' : status.rounds.join(', ')}`,
    `schedule            ${status.schedule === null ? 'none' : `${status.schedule.pattern ?? '?'}, next ${status.schedule.next ?? '?'}`}`,
    `workers             ${status.workers} connected`,
    ...(status.active.length === 0 ? [] : ['active:', ...status.active.map(job)]),
    ...(status.failed.length === 0 ? [] : ['failed:', ...status.failed.map(job)]),
  ].join('\n');
}
