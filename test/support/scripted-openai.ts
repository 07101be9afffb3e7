import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible chat server for tests: node:http on 127.0.0.1 with an
 * ephemeral port, speaking the real wire protocol (`POST /v1/chat/completions`,
 * `GET /v1/models`) so the `openai` client and our agent loop run unmodified against it.
 *
 * The script is a list of replies consumed one per chat request, or a function from the
 * request to a reply. A reply may be an injected HTTP error (a 500 or 429 the client
 * retries), native `tool_calls`, or plain text (for Hermes-style `<tool_call>` content use
 * {@link hermesToolCalls}). Every request body is recorded for assertions.
 */

/** One tool call in a scripted reply; `arguments` may be an object (JSON-encoded for you) or raw text (sent as is, e.g. bad JSON). */
export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  /** Defaults to `call_<n>` numbered across the whole server. */
  id?: string;
}

/** A successful assistant reply. */
export interface ScriptedMessage {
  content?: string | null;
  /** Sent as `reasoning_content`, as vLLM's reasoning parsers do. */
  reasoning_content?: string;
  tool_calls?: ScriptedToolCall[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finish_reason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  /** Defaults to a deterministic count from the request and reply sizes. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Milliseconds to wait before answering (to exercise client timeouts). */
  delayMs?: number;
}

/** An injected failure: the server answers with this status and an OpenAI-shaped error body. */
export interface ScriptedError {
  error: { status: number; message?: string; type?: string };
}

export type ScriptedReply = ScriptedMessage | ScriptedError;

/** The parsed body of one chat-completions request as the client sent it. */
export interface ChatRequestBody {
  model: string;
  messages: Array<Record<string, unknown> & { role: string }>;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: unknown } }>;
  tool_choice?: unknown;
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  [key: string]: unknown;
}

/** Either a fixed list of replies (one per request, in order) or a function of the request. */
export type Script = ScriptedReply[] | ((request: ChatRequestBody, index: number) => ScriptedReply | Promise<ScriptedReply>);

export interface ScriptedOpenAIOptions {
  /** The model name reported by `/v1/models` and echoed when a request names none. Default `scripted-model`. */
  model?: string;
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401. */
  apiKey?: string;
}

/** One request the server saw, in arrival order (chat requests, model listings and errors alike). */
export interface RecordedHit {
  method: string;
  path: string;
  status: number;
  authorization: string | undefined;
}

export interface ScriptedOpenAI {
  /** e.g. `http://127.0.0.1:41234/v1`, ready for `new OpenAI({ baseURL })`. */
  baseURL: string;
  /** Bodies of every `POST /v1/chat/completions`, including ones answered with an injected error. */
  requests: ChatRequestBody[];
  /** Every HTTP request with the status it got. */
  hits: RecordedHit[];
  close(): Promise<void>;
}

/** Formats tool calls as Hermes/Qwen text: one `<tool_call>{"name":..,"arguments":{..}}</tool_call>` block each. */
export function hermesToolCalls(calls: Array<{ name: string; arguments: Record<string, unknown> }>, preamble = ''): string {
  const blocks = calls.map((c) => `<tool_call>\n${JSON.stringify({ name: c.name, arguments: c.arguments })}\n</tool_call>`);
  return [preamble, ...blocks].filter((s) => s !== '').join('\n');
}

/** Starts the server; call `close()` when done. */
export async function startScriptedOpenAI(script: Script, options: ScriptedOpenAIOptions = {}): Promise<ScriptedOpenAI> {
  const model = options.model ?? 'scripted-model';
  const requests: ChatRequestBody[] = [];
  const hits: RecordedHit[] = [];
  let callCounter = 0;
  let listIndex = 0;

  const nextReply = async (body: ChatRequestBody, index: number): Promise<ScriptedReply | undefined> => {
    if (typeof script === 'function') return script(body, index);
    const reply = script[listIndex];
    if (reply !== undefined) listIndex += 1;
    return reply;
  };

  const send = (res: ServerResponse, hit: RecordedHit, status: number, payload: unknown, headers: Record<string, string> = {}): void => {
    hit.status = status;
    const text = JSON.stringify(payload);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const sendError = (res: ServerResponse, hit: RecordedHit, status: number, message: string, type = 'invalid_request_error'): void => {
    // retry-after-ms keeps the openai client's backoff short in tests.
    send(res, hit, status, { error: { message, type, param: null, code: null } }, { 'retry-after-ms': '10' });
  };

  const handleChat = async (req: IncomingMessage, res: ServerResponse, hit: RecordedHit): Promise<void> => {
    let body: ChatRequestBody;
    try {
      body = JSON.parse(await readBody(req)) as ChatRequestBody;
    } catch {
      sendError(res, hit, 400, 'scripted-openai: request body is not JSON');
      return;
    }
    const index = requests.length;
    requests.push(body);
    const reply = await nextReply(body, index);
    if (reply === undefined) {
      // 400, not 5xx: the client must not retry into an exhausted script.
      sendError(res, hit, 400, `scripted-openai: script exhausted after ${index} replies`);
      return;
    }
    if ('error' in reply) {
      sendError(res, hit, reply.error.status, reply.error.message ?? `scripted-openai: injected ${reply.error.status}`, reply.error.type ?? 'server_error');
      return;
    }
    if (reply.delayMs !== undefined) await new Promise((r) => setTimeout(r, reply.delayMs));
    const toolCalls = (reply.tool_calls ?? []).map((c) => {
      callCounter += 1;
      return {
        id: c.id ?? `call_${callCounter}`,
        type: 'function' as const,
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      };
    });
    const content = reply.content ?? null;
    const finishReason = reply.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    const promptTokens = reply.usage?.prompt_tokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
    const completionTokens =
      reply.usage?.completion_tokens ?? Math.ceil(((content ?? '').length + JSON.stringify(toolCalls).length) / 4);
    const id = `chatcmpl-${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    const created = Math.floor(Date.now() / 1000);
    const message: Record<string, unknown> = { role: 'assistant', content };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (reply.reasoning_content !== undefined) message.reasoning_content = reply.reasoning_content;
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };

    if (body.stream === true) {
      hit.status = 200;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: Record<string, unknown>, finish: string | null, withUsage = false): string =>
        `data: ${JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created,
          model: body.model ?? model,
          choices: [{ index: 0, delta, finish_reason: finish }],
          ...(withUsage ? { usage } : {}),
        })}\n\n`;
      res.write(chunk({ role: 'assistant', content: content ?? '' }, null));
      if (toolCalls.length > 0) res.write(chunk({ tool_calls: toolCalls.map((t, i) => ({ index: i, ...t })) }, null));
      res.write(chunk({}, finishReason, true));
      res.end('data: [DONE]\n\n');
      return;
    }
    send(res, hit, 200, {
      id,
      object: 'chat.completion',
      created,
      model: body.model ?? model,
      system_fingerprint: 'scripted',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage,
    });
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const authorization = req.headers.authorization;
    const hit: RecordedHit = { method: req.method ?? 'GET', path, status: 0, authorization };
    hits.push(hit);
    if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`) {
      sendError(res, hit, 401, 'scripted-openai: missing or wrong API key', 'authentication_error');
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      send(res, hit, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'scripted' }] });
      return;
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      handleChat(req, res, hit).catch((error: unknown) => {
        if (!res.headersSent) sendError(res, hit, 400, `scripted-openai: script threw: ${String(error)}`);
        else res.end();
      });
      return;
    }
    sendError(res, hit, 404, `scripted-openai: no route ${req.method ?? ''} ${path}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
