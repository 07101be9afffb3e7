import { silentLogger } from '@envgen/core';
import type { Logger, Task } from '@envgen/core';
import { isSolved, localizationReward, normalizeLocations } from '@envgen/rewards';
import type { IsSolvedOptions, LocalizationReward, Location } from '@envgen/rewards';
import type { SandboxLimits, SandboxProvider } from '@envgen/sandbox';
import { argumentsRecord, runEpisode } from './episode.js';
import type { ModelClient } from './model-client.js';
import { DEFAULT_MAX_OUTPUT_CHARS, openPersistentShell } from './persistent-shell.js';
import type { PersistentShell, ShellCommandResult } from './persistent-shell.js';
import { renderSystemPrompt, renderUserMessage } from './prompts.js';
import { AGENT_TOOLS, TERMINAL_TOOL_NAME } from './tools.js';
import type { FinishReason, Trajectory } from './trajectory.js';

/** Default model calls per episode (CodeScout's few-turn budget). */
export const DEFAULT_MAX_TURNS = 4;
/** Default and largest per-command timeouts, in seconds. */
export const DEFAULT_COMMAND_TIMEOUT_S = 30;
export const MAX_COMMAND_TIMEOUT_S = 300;

/** What a rollout needs of a task: its id, its statement and its gold. */
export type RolloutTask = Pick<Task, 'instance_id' | 'problem_statement' | 'file_changes'>;

/** Options of {@link runAgentRollout}. */
export interface AgentRolloutOptions extends TerminalCallOptions {
  task: RolloutTask;
  /** Host directory of the instance's checkout (the buggy tree). */
  checkout: string;
  sandboxProvider: SandboxProvider;
  client: ModelClient;
  runId: string;
  /** Model calls before the episode ends without an answer (default {@link DEFAULT_MAX_TURNS}). */
  maxTurns?: number;
  /** Limits of the shell's sandbox (memory, processes). */
  sandboxLimits?: Partial<SandboxLimits>;
  /** docker: the image to run the shell in. */
  image?: string;
  /** When a rollout counts as solved (default entity F1 = 1). */
  solvedBy?: IsSolvedOptions;
  signal?: AbortSignal;
  logger?: Logger;
}

const NUDGE =
  'You did not call a tool. Continue the search with terminal, or call localization_finish with the locations that must change.';

/**
 * One CodeScout-style episode: the system prompt and the issue, then up to `maxTurns`
 * model calls; every tool call of a reply runs in order in a persistent bash in the
 * sandbox on the checkout; a valid `localization_finish` ends the episode. The result is
 * the whole trajectory, scored against the task's gold. A reply without tool calls is
 * answered with a nudge (it uses a turn); an invalid finish call is answered with the
 * reason (the episode goes on). A model endpoint that fails after its retries ends the
 * episode with reason `error`.
 */
export async function runAgentRollout(options: AgentRolloutOptions): Promise<Trajectory> {
  const logger = options.logger ?? silentLogger;
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  const startedAt = new Date();
  const started = performance.now();
  let accepted: { args: unknown; locations: Location[] } | undefined;

  const shell = await openPersistentShell({
    provider: options.sandboxProvider,
    worktree: options.checkout,
    logger,
    ...(options.sandboxLimits === undefined ? {} : { limits: options.sandboxLimits }),
    ...(options.image === undefined ? {} : { image: options.image }),
  });
  const tools = [...AGENT_TOOLS];
  let episode;
  try {
    episode = await runEpisode({
      client: options.client,
      system: renderSystemPrompt({ maxTurns }),
      user: renderUserMessage({ repoPath: shell.workdir, issue: options.task.problem_statement.text }),
      tools,
      limits: { maxTurns },
      nudge: NUDGE,
      logger: logger.child({ instance: options.task.instance_id }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      runTool: async (call, args) => {
        if (call.function.name === TERMINAL_TOOL_NAME) return { content: await runTerminalCall(shell, args, options) };
        const normalized = normalizeLocations(args, { repoRoot: shell.workdir });
        if (!normalized.ok) return { content: `Error: invalid localization_finish call: ${normalized.reason}. Call localization_finish again with the corrected locations.` };
        accepted = { args, locations: normalized.locations };
        return { content: `Submitted ${normalized.locations.length} location(s):\n${JSON.stringify(normalized.locations, null, 2)}`, done: true };
      },
    });
  } finally {
    await shell.close();
  }
  const finish: { reason: FinishReason; detail?: string } =
    episode.end.reason === 'done'
      ? { reason: 'localization_finish' }
      : episode.end.reason === 'error'
        ? { reason: 'error', detail: episode.end.detail }
        : { reason: 'max_turns', detail: `no valid localization_finish in ${maxTurns} turns` };

  const reward: LocalizationReward = accepted === undefined
    ? { ...localizationReward(options.task.file_changes, null), reason: finish.detail ?? 'no localization_finish call' }
    : localizationReward(options.task.file_changes, accepted.args, { repoRoot: shell.workdir });
  return {
    instance_id: options.task.instance_id,
    run_id: options.runId,
    solver: 'agent',
    model: options.client.model,
    messages: episode.messages,
    tools,
    locations: accepted?.locations ?? null,
    finish,
    reward,
    solved: isSolved(reward, options.solvedBy),
    usage: episode.usage,
    turns: episode.turns,
    tool_calls: episode.toolCalls,
    timing: {
      started_at: startedAt.toISOString(),
      duration_ms: Math.round(performance.now() - started),
      model_ms: episode.modelMs,
      tool_ms: episode.toolMs,
    },
  };
}

/** What {@link runTerminalCall} needs of an agent's options. */
export interface TerminalCallOptions {
  /** Default per-command timeout in seconds (default {@link DEFAULT_COMMAND_TIMEOUT_S}). */
  commandTimeoutS?: number;
  /** Cap on one tool output (default 30,000 characters). */
  maxOutputChars?: number;
}

/** Runs one `terminal` call's arguments in the shell and returns the text of its `tool` message. */
export async function runTerminalCall(shell: PersistentShell, args: unknown, options: TerminalCallOptions = {}): Promise<string> {
  const record = argumentsRecord(args);
  const command = record?.['command'];
  if (typeof command !== 'string' || command.trim() === '') {
    return 'Error: terminal needs {"command": "<bash command>"} with a non-empty command string.';
  }
  const asked = record?.['timeout'];
  const defaultS = options.commandTimeoutS ?? DEFAULT_COMMAND_TIMEOUT_S;
  const timeoutS = typeof asked === 'number' && Number.isFinite(asked) && asked > 0 ? Math.min(asked, MAX_COMMAND_TIMEOUT_S) : defaultS;
  const result = await shell.run(command, { timeoutMs: Math.round(timeoutS * 1000), maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS });
  return formatTerminalObservation(result, timeoutS, shell.workdir);
}

/** The `tool` message of a terminal call: the output, then how the command ended (OpenHands style). */
export function formatTerminalObservation(result: ShellCommandResult, timeoutS: number, workdir: string): string {
  const notes: string[] = [];
  if (result.status === 'timeout') {
    notes.push(`[The command timed out after ${timeoutS} seconds and was killed${result.exitCode === null ? '' : ` (exit code ${result.exitCode})`}.]`);
  } else if (result.status === 'shell-exited') {
    notes.push(`[The command ended the shell${result.exitCode === null ? '' : ` with exit code ${result.exitCode}`}.]`);
  } else {
    notes.push(`[The command completed with exit code ${result.exitCode ?? 'unknown'}.]`);
  }
  if (result.restarted) notes.push(`[A new shell was started in ${result.cwd}: variables and functions were reset.]`);
  if (result.cwd !== workdir) notes.push(`[Current working directory: ${result.cwd}]`);
  const output = result.output === '' ? '' : result.output.endsWith('\n') ? result.output : `${result.output}\n`;
  return `${output}${notes.join('\n')}`;
}
