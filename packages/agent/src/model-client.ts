import { APIConnectionError, APIError, OpenAI } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { ERROR_CODES, EnvgenError, describeError } from '@envgen/core';
import type { TokenUsage } from '@envgen/core';
import { parseHermesToolCalls, renderHermesToolsSection } from './hermes.js';
import type { ChatMessage, ToolCall } from './trajectory.js';
import type { ToolSchema } from './tools.js';

/**
 * How tools reach the model: `native` sends the `tools` parameter (tool calls come back
 * as `tool_calls`, or as `<tool_call>` text, which is read too); `hermes` puts the schemas
 * in the system prompt and reads `<tool_call>` text only, for servers without tool
 * parsing; `auto` starts native and switches to hermes when the server refuses tools.
 */
export type ToolFormat = 'auto' | 'native' | 'hermes';

/** Options of {@link createModelClient}. */
export interface ModelClientOptions {
  /** e.g. `http://host:8000/v1` (default: the `openai` package's, the OpenAI API). */
  baseURL?: string;
  model: string;
  /** Sent as a bearer token; servers that check none accept any (default `EMPTY`). */
  apiKey?: string;
  toolFormat?: ToolFormat;
  temperature?: number;
  /** Cap on completion tokens of one model call. */
  maxTokens?: number;
  /** Per request (default 10 minutes). */
  timeoutMs?: number;
  /** Retries of 408/409/429/5xx and connection errors, with backoff (default 2). */
  maxRetries?: number;
}

/** One assistant reply, with its tool calls read in whichever format the server used. */
export interface ModelReply {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  /** Tool calls whose block could not be read, by call id: answered with this error. */
  callErrors: Map<string, string>;
  usage: TokenUsage;
  finishReason: string | null;
}

/** A chat endpoint the agent talks to; one per run, shared by its rollouts. */
export interface ModelClient {
  readonly model: string;
  /** The format in use now (`auto` resolves to native or hermes after the first call). */
  readonly toolFormat: Exclude<ToolFormat, 'auto'>;
  /** The system prompt to send with these tools in the current format. */
  systemPrompt(base: string, tools: readonly ToolSchema[]): string;
  complete(messages: readonly ChatMessage[], tools: readonly ToolSchema[], signal?: AbortSignal): Promise<ModelReply>;
  /** Checks the endpoint answers (`GET /models`); throws `llm-failed` saying what to fix. */
  check(): Promise<void>;
}

// What vLLM answers when tools are sent to a server started without tool parsing.
const TOOLS_REFUSED = /tool[ _-]?choice|tool-call-parser|enable-auto-tool-choice|does not support tools|tools are not supported/i;

/** Creates the client of an OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp, OpenAI). */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const openai = new OpenAI({
    ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    apiKey: options.apiKey ?? 'EMPTY',
    timeout: options.timeoutMs ?? 600_000,
    maxRetries: options.maxRetries ?? 2,
  });
  let format: Exclude<ToolFormat, 'auto'> = options.toolFormat === 'hermes' ? 'hermes' : 'native';
  const canSwitch = (options.toolFormat ?? 'auto') === 'auto';
  let callCounter = 0;

  const request = async (messages: readonly ChatMessage[], tools: readonly ToolSchema[], signal?: AbortSignal) => {
    const body = {
      model: options.model,
      messages: messages.map(toRequestMessage),
      ...(format === 'native' ? { tools: tools as OpenAI.Chat.Completions.ChatCompletionTool[], tool_choice: 'auto' as const } : {}),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    };
    return openai.chat.completions.create(body, signal === undefined ? {} : { signal });
  };

  return {
    model: options.model,
    get toolFormat() {
      return format;
    },
    systemPrompt(base, tools) {
      return format === 'hermes' ? `${base}\n\n${renderHermesToolsSection(tools)}` : base;
    },
    async complete(messages, tools, signal) {
      let completion;
      try {
        completion = await request(messages, tools, signal);
      } catch (error) {
        if (canSwitch && format === 'native' && error instanceof APIError && error.status === 400 && TOOLS_REFUSED.test(error.message)) {
          // The server takes no tools: describe them in the system prompt instead.
          format = 'hermes';
          const [first, ...rest] = messages;
          const resent = first?.role === 'system' ? [{ role: 'system' as const, content: this.systemPrompt(first.content, tools) }, ...rest] : messages;
          try {
            completion = await request(resent, tools, signal);
          } catch (retryError) {
            throw modelError(openai.baseURL, options.model, retryError);
          }
        } else {
          throw modelError(openai.baseURL, options.model, error);
        }
      }
      const choice = completion.choices[0];
      if (choice === undefined) throw new EnvgenError(ERROR_CODES.llmFailed, `the model at ${openai.baseURL} answered with no choices`);
      // vLLM's reasoning parsers answer in `reasoning_content` (older) or `reasoning` (newer).
      const raw = choice.message as typeof choice.message & { reasoning_content?: string | null; reasoning?: string | null };
      const callErrors = new Map<string, string>();
      let content = raw.content ?? null;
      let toolCalls: ToolCall[] = [];
      const native = (raw.tool_calls ?? []).filter((call) => call.type === 'function');
      if (native.length > 0) {
        toolCalls = native.map((call) => ({
          id: call.id || nextId(),
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments ?? '' },
        }));
      } else if (content !== null && content.includes('<tool_call>')) {
        const parsed = parseHermesToolCalls(content);
        content = parsed.text;
        toolCalls = parsed.calls.map((call) => {
          const id = nextId();
          if (call.error !== undefined) callErrors.set(id, call.error);
          return { id, type: 'function', function: { name: call.name, arguments: call.arguments } };
        });
      }
      const message: ModelReply['message'] = { role: 'assistant', content };
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      const reasoning = raw.reasoning_content ?? raw.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') message.reasoning_content = reasoning;
      const usage = completion.usage;
      return {
        message,
        callErrors,
        finishReason: choice.finish_reason ?? null,
        usage: {
          prompt_tokens: usage?.prompt_tokens ?? 0,
          completion_tokens: usage?.completion_tokens ?? 0,
          total_tokens: usage?.total_tokens ?? (usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0),
        },
      };
    },
    async check() {
      try {
        await openai.models.list();
      } catch (error) {
        // Some servers serve chat without listing models; only an unreachable or refusing server is fatal.
        if (error instanceof APIError && !(error instanceof APIConnectionError) && (error.status === 404 || error.status === 405)) return;
        throw modelError(openai.baseURL, options.model, error);
      }
    },
  };

  function nextId(): string {
    callCounter += 1;
    return `call_${callCounter.toString().padStart(4, '0')}`;
  }
}

/** The message as sent back to the server: reasoning is not replayed (chat templates drop it). */
function toRequestMessage(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role !== 'assistant') return message;
  const sent: ChatCompletionMessageParam = { role: 'assistant', content: message.content };
  if (message.tool_calls !== undefined) sent.tool_calls = message.tool_calls;
  return sent;
}

function modelError(baseURL: string, model: string, error: unknown): EnvgenError {
  if (error instanceof EnvgenError) return error;
  let hint = 'check --base-url and --model';
  if (error instanceof APIConnectionError) hint = `is the server running? start it (e.g. vllm serve ${model}) or fix --base-url`;
  else if (error instanceof APIError && (error.status === 401 || error.status === 403)) hint = 'pass the right key with --api-key or OPENAI_API_KEY';
  else if (error instanceof APIError && error.status === 404) hint = `does it serve the model "${model}"? check --model and the URL's /v1 suffix`;
  return new EnvgenError(ERROR_CODES.llmFailed, `the model endpoint ${baseURL} failed: ${describeError(error)}; ${hint}`, { cause: error });
}
