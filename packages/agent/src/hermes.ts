import type { ToolSchema } from './tools.js';

/** One tool call read from Hermes-style text. */
export interface TextToolCall {
  name: string;
  /** The arguments as JSON text (re-encoded when the block parsed, else the raw block). */
  arguments: string;
  /** Why the block could not be read; the call is answered with this error. */
  error?: string;
}

/** What {@link parseHermesToolCalls} found in a message's text. */
export interface ParsedText {
  /** The text outside the `<tool_call>` blocks, trimmed; null when nothing is left. */
  text: string | null;
  calls: TextToolCall[];
}

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/**
 * Reads Hermes/Qwen tool calls from assistant text: every `<tool_call>{"name": ...,
 * "arguments": {...}}</tool_call>` block, in order (a last block cut off before its closing
 * tag counts too). A block that is not valid JSON of that shape still yields a call, with
 * the name if one can be read and an `error` to send back, so the model learns what went
 * wrong instead of the turn silently vanishing.
 */
export function parseHermesToolCalls(content: string): ParsedText {
  const calls: TextToolCall[] = [];
  const outside: string[] = [];
  let position = 0;
  for (;;) {
    const open = content.indexOf(OPEN, position);
    if (open < 0) {
      outside.push(content.slice(position));
      break;
    }
    outside.push(content.slice(position, open));
    const close = content.indexOf(CLOSE, open + OPEN.length);
    const body = content.slice(open + OPEN.length, close < 0 ? content.length : close);
    calls.push(readBlock(body));
    position = close < 0 ? content.length : close + CLOSE.length;
  }
  const text = outside.join('').trim();
  return { text: text === '' ? null : text, calls };
}

function readBlock(raw: string): TextToolCall {
  const body = raw.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    const name = /"name"\s*:\s*"([^"\\]{1,100})"/.exec(body)?.[1] ?? 'invalid_tool_call';
    return {
      name,
      arguments: body,
      error: `the <tool_call> block is not valid JSON (${error instanceof Error ? error.message : String(error)}); write <tool_call>{"name": "terminal", "arguments": {"command": "ls"}}</tool_call>`,
    };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { name: 'invalid_tool_call', arguments: body, error: 'the <tool_call> block must hold a JSON object with "name" and "arguments"' };
  }
  const record = parsed as Record<string, unknown>;
  const name = record['name'];
  if (typeof name !== 'string' || name === '') {
    return { name: 'invalid_tool_call', arguments: body, error: 'the <tool_call> object has no "name" string' };
  }
  const args = record['arguments'] ?? record['parameters'] ?? {};
  return { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

/**
 * The tools section a Hermes/Qwen chat template would put in the system prompt, for
 * servers that take no `tools` parameter: the schemas inside `<tools>` and how to call them.
 */
export function renderHermesToolsSection(tools: readonly ToolSchema[]): string {
  return [
    '# Tools',
    '',
    'You may call one or more functions to assist with the user query.',
    '',
    'You are provided with function signatures within <tools></tools> XML tags:',
    '<tools>',
    ...tools.map((tool) => JSON.stringify(tool)),
    '</tools>',
    '',
    'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
    '<tool_call>',
    '{"name": <function-name>, "arguments": <args-json-object>}',
    '</tool_call>',
  ].join('\n');
}
