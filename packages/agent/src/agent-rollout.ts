import { describeError, isEnvgenError, silentLogger } from '@envgen/core';
import type { Logger, Task, TokenUsage } from '@envgen/core';
import { isSolved, localizationReward, normalizeLocations } from '@envgen/rewards';
import type { IsSolvedOptions, LocalizationReward, Location } from '@envgen/rewards';
import type { SandboxLimits, SandboxProvider } from '@envgen/sandbox';
import type { ModelClient } from './model-client.js';
import { DEFAULT_MAX_OUTPUT_CHARS, openPersistentShell } from './persistent-shell.js';
import type { PersistentShell, ShellCommandResult } from './persistent-shell.js';
import { renderSystemPrompt, renderUserMessage } from './prompts.js';
import { AGENT_TOOLS, LOCALIZATION_FINISH_TOOL_NAME, TERMINAL_TOOL_NAME } from './tools.js';
import type { ChatMessage, FinishReason, ToolCall, Trajectory } from './trajectory.js';

/** Default model calls per episode (CodeScout's few-turn budget). */
export const DEFAULT_MAX_TURNS = 4;
/** Default and largest per-command timeouts, in seconds. */
export const DEFAULT_COMMAND_TIMEOUT_S = 30;
export const MAX_COMMAND_TIMEOUT_S = 300;

/** What a rollout needs of a task: its id, its statement and its gold. */
export type RolloutTask = Pick<Task, 'instance_id' | 'problem_statement' | 'file_changes'>;

/** Options of {@link runAgentRollout}. */
export interface AgentRolloutOptions {
  task: RolloutTask;
  /** Host directory of the instance's checkout (the buggy tree). */
  checkout: string;
  sandboxProvider: SandboxProvider;
  client: ModelClient;
  runId: string;
  /** Model calls before the episode ends without an answer (default {@link DEFAULT_MAX_TURNS}). */
  maxTurns?: number;
  /** Default per-command timeout in seconds; the model may ask for up to {@link MAX_COMMAND_TIMEOUT_S}. */
  commandTimeoutS?: number;
  /** Cap on one tool output (default 30,000 characters). */
  maxOutputChars?: number;
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
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let modelMs = 0;
  let toolMs = 0;
  let turns = 0;
  let toolCalls = 0;
  let finish: { reason: FinishReason; detail?: string } = { reason: 'max_turns', detail: `no valid localization_finish in ${maxTurns} turns` };
  let accepted: { args: unknown; locations: Location[] } | undefined;

  const shell = await openPersistentShell({
    provider: options.sandboxProvider,
    worktree: options.checkout,
    logger,
    ...(options.sandboxLimits === undefined ? {} : { limits: options.sandboxLimits }),
    ...(options.image === undefined ? {} : { image: options.image }),
  });
  const tools = [...AGENT_TOOLS];
  const messages: ChatMessage[] = [
    { role: 'system', content: options.client.systemPrompt(renderSystemPrompt({ maxTurns }), tools) },
    { role: 'user', content: renderUserMessage({ repoPath: shell.workdir, issue: options.task.problem_statement.text }) },
  ];
  try {
    while (turns < maxTurns && accepted === undefined) {
      turns += 1;
      const asked = performance.now();
      let reply;
      try {
        reply = await options.client.complete(messages, tools, options.signal);
      } catch (error) {
        if (!isEnvgenError(error, 'llm-failed')) throw error;
        finish = { reason: 'error', detail: describeError(error) };
        logger.warn('model call failed; the rollout ends without an answer', { instance: options.task.instance_id, error: describeError(error) });
        break;
      } finally {
        modelMs += performance.now() - asked;
      }
      // The first call may have switched the client to Hermes text: keep the prompt it sent.
      const system = messages[0];
      if (system?.role === 'system') system.content = options.client.systemPrompt(renderSystemPrompt({ maxTurns }), tools);
      usage.prompt_tokens += reply.usage.prompt_tokens;
      usage.completion_tokens += reply.usage.completion_tokens;
      usage.total_tokens += reply.usage.total_tokens;
      messages.push(reply.message);
      const calls = reply.message.tool_calls ?? [];
      if (calls.length === 0) {
        messages.push({ role: 'user', content: NUDGE });
        continue;
      }
      for (const call of calls) {
        toolCalls += 1;
        const ran = performance.now();
        const answer = accepted !== undefined
          ? 'Not run: the episode already ended with localization_finish.'
          : await runToolCall(call, reply.callErrors.get(call.id), shell, options, (args, locations) => {
              accepted = { args, locations };
            });
        toolMs += performance.now() - ran;
        messages.push({ role: 'tool', tool_call_id: call.id, name: call.function.name, content: answer });
      }
    }
  } finally {
    await shell.close();
  }
  if (accepted !== undefined) finish = { reason: 'localization_finish' };

  const reward: LocalizationReward = accepted === undefined
    ? { ...localizationReward(options.task.file_changes, null), reason: finish.detail ?? 'no localization_finish call' }
    : localizationReward(options.task.file_changes, accepted.args, { repoRoot: shell.workdir });
  return {
    instance_id: options.task.instance_id,
    run_id: options.runId,
    solver: 'agent',
    model: options.client.model,
    messages,
    tools,
    locations: accepted?.locations ?? null,
    finish,
    reward,
    solved: isSolved(reward, options.solvedBy),
    usage,
    turns,
    tool_calls: toolCalls,
    timing: {
      started_at: startedAt.toISOString(),
      duration_ms: Math.round(performance.now() - started),
      model_ms: Math.round(modelMs),
      tool_ms: Math.round(toolMs),
    },
  };
}

/** Runs one tool call and returns the text of its `tool` message. */
async function runToolCall(
  call: ToolCall,
  parseError: string | undefined,
  shell: PersistentShell,
  options: AgentRolloutOptions,
  accept: (args: unknown, locations: Location[]) => void,
): Promise<string> {
  if (parseError !== undefined) return `Error: ${parseError}`;
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch (error) {
    return `Error: the arguments of ${call.function.name} are not valid JSON (${describeError(error)}); send a JSON object matching the tool's schema.`;
  }
  const record = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
  switch (call.function.name) {
    case TERMINAL_TOOL_NAME: {
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
    case LOCALIZATION_FINISH_TOOL_NAME: {
      const normalized = normalizeLocations(args, { repoRoot: shell.workdir });
      if (!normalized.ok) return `Error: invalid localization_finish call: ${normalized.reason}. Call localization_finish again with the corrected locations.`;
      accept(args, normalized.locations);
      return `Submitted ${normalized.locations.length} location(s):\n${JSON.stringify(normalized.locations, null, 2)}`;
    }
    default:
      return `Error: there is no tool named "${call.function.name}"; the tools are ${TERMINAL_TOOL_NAME} and ${LOCALIZATION_FINISH_TOOL_NAME}.`;
  }
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
