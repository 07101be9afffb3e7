import { describeError, isEnvgenError, silentLogger } from '@envgen/core';
import type { Logger, TokenUsage } from '@envgen/core';
import type { ModelClient } from './model-client.js';
import type { ToolSchema } from './tools.js';
import type { ChatMessage, ToolCall } from './trajectory.js';

/** What may end an episode before its tool says it is done. */
export interface EpisodeLimits {
  /** Model calls. */
  maxTurns: number;
  /** Total tokens (prompt + completion) over the episode; checked after each model call. */
  maxTokens?: number;
  /** Wall-clock budget of the episode in ms; checked before each model call. */
  wallTimeMs?: number;
}

/**
 * How an episode ended: `done` (a tool ended it, e.g. a valid answer), one of its limits, or
 * `error` (the model endpoint failed after its retries: not the policy's doing).
 */
export type EpisodeEnd =
  | { reason: 'done'; tool: string }
  | { reason: 'max_turns' | 'max_tokens' | 'wall_time' | 'error'; detail: string };

/** The `tool` message of one call, and whether the call ends the episode. */
export interface ToolOutcome {
  content: string;
  done?: boolean;
}

/** Options of {@link runEpisode}. */
export interface RunEpisodeOptions {
  client: ModelClient;
  /** The system prompt before the client adds anything (Hermes tool descriptions). */
  system: string;
  user: string;
  tools: readonly ToolSchema[];
  limits: EpisodeLimits;
  /** Sent as a user message after a reply without tool calls. */
  nudge: string;
  /** Runs one call whose arguments parsed as JSON (`args` is whatever the JSON held). */
  runTool(call: ToolCall, args: unknown): Promise<ToolOutcome>;
  signal?: AbortSignal;
  logger?: Logger;
}

/** One episode's conversation and what it cost. */
export interface Episode {
  /** system, user, then assistant turns (with `tool_calls`) each followed by one `tool` message per call. */
  messages: ChatMessage[];
  end: EpisodeEnd;
  usage: TokenUsage;
  turns: number;
  toolCalls: number;
  modelMs: number;
  toolMs: number;
}

function listNames(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}

/**
 * The tool-calling loop shared by every agent: the system prompt and the task, then model
 * calls until a tool ends the episode or a limit is reached. Every tool call of a reply runs
 * in order; bad JSON arguments, unreadable Hermes blocks and unknown tools are answered with
 * an error the model can act on; a reply without tool calls gets the nudge (it uses a turn).
 */
export async function runEpisode(options: RunEpisodeOptions): Promise<Episode> {
  const logger = options.logger ?? silentLogger;
  const started = performance.now();
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const tools = [...options.tools];
  const names = tools.map((tool) => tool.function.name);
  const { maxTurns, maxTokens, wallTimeMs } = options.limits;
  let modelMs = 0;
  let toolMs = 0;
  let turns = 0;
  let toolCalls = 0;
  let end: EpisodeEnd = { reason: 'max_turns', detail: `no ending tool call in ${maxTurns} turns` };
  const messages: ChatMessage[] = [
    { role: 'system', content: options.client.systemPrompt(options.system, tools) },
    { role: 'user', content: options.user },
  ];
  let doneBy: string | undefined;
  while (doneBy === undefined) {
    if (turns >= maxTurns) break;
    if (wallTimeMs !== undefined && performance.now() - started >= wallTimeMs) {
      end = { reason: 'wall_time', detail: `the episode's ${Math.round(wallTimeMs / 1000)} s ran out after ${turns} turns` };
      break;
    }
    turns += 1;
    const asked = performance.now();
    let reply;
    try {
      reply = await options.client.complete(messages, tools, options.signal);
    } catch (error) {
      if (!isEnvgenError(error, 'llm-failed')) throw error;
      end = { reason: 'error', detail: describeError(error) };
      logger.warn('model call failed; the episode ends', { error: describeError(error) });
      break;
    } finally {
      modelMs += performance.now() - asked;
    }
    // The first call may have switched the client to Hermes text: keep the prompt it sent.
    const system = messages[0];
    if (system?.role === 'system') system.content = options.client.systemPrompt(options.system, tools);
    usage.prompt_tokens += reply.usage.prompt_tokens;
    usage.completion_tokens += reply.usage.completion_tokens;
    usage.total_tokens += reply.usage.total_tokens;
    messages.push(reply.message);
    const calls = reply.message.tool_calls ?? [];
    if (calls.length === 0) messages.push({ role: 'user', content: options.nudge });
    for (const call of calls) {
      toolCalls += 1;
      const ran = performance.now();
      let content: string;
      if (doneBy !== undefined) {
        content = `Not run: the episode already ended with ${doneBy}.`;
      } else {
        const outcome = await runCall(call, reply.callErrors.get(call.id), names, options);
        content = outcome.content;
        if (outcome.done === true) doneBy = call.function.name;
      }
      toolMs += performance.now() - ran;
      messages.push({ role: 'tool', tool_call_id: call.id, name: call.function.name, content });
    }
    if (doneBy === undefined && maxTokens !== undefined && usage.total_tokens >= maxTokens) {
      end = { reason: 'max_tokens', detail: `the episode used ${usage.total_tokens} tokens, over its budget of ${maxTokens}` };
      break;
    }
  }
  if (doneBy !== undefined) end = { reason: 'done', tool: doneBy };
  return { messages, end, usage, turns, toolCalls, modelMs: Math.round(modelMs), toolMs: Math.round(toolMs) };
}

async function runCall(call: ToolCall, parseError: string | undefined, names: readonly string[], options: RunEpisodeOptions): Promise<ToolOutcome> {
  if (parseError !== undefined) return { content: `Error: ${parseError}` };
  if (!names.includes(call.function.name)) {
    return { content: `Error: there is no tool named "${call.function.name}"; the tools are ${listNames(names)}.` };
  }
  let args: unknown;
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch (error) {
    return { content: `Error: the arguments of ${call.function.name} are not valid JSON (${describeError(error)}); send a JSON object matching the tool's schema.` };
  }
  return options.runTool(call, args);
}

/** The arguments as a record, or undefined when they are not a JSON object. */
export function argumentsRecord(args: unknown): Record<string, unknown> | undefined {
  return typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
}
