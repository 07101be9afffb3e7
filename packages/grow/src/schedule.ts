import { CronExpressionParser } from 'cron-parser';
import { EnvgenError, describeError } from '@envgen/core';

/** The first time after `from` that the cron `expression` names (five fields, or six with seconds); a usage error when it is not one. */
export function nextRunAt(expression: string, from: Date = new Date()): Date {
  try {
    return CronExpressionParser.parse(expression, { currentDate: from }).next().toDate();
  } catch (error) {
    throw new EnvgenError('usage', `${JSON.stringify(expression)} is not a cron expression (${describeError(error)}); e.g. "0 2 * * *" for 02:00 every night`, { cause: error });
  }
}
