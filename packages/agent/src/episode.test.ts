import { afterAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAI } from '../../../test/support/scripted-openai.js';
import type { Script, ScriptedOpenAI } from '../../../test/support/scripted-openai.js';
import { runEpisode } from './episode.js';
import type { EpisodeLimits } from './episode.js';
import { createModelClient } from './model-client.js';
import type { ToolSchema } from './tools.js';

const servers: ScriptedOpenAI[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const tool = (name: string): ToolSchema => ({ type: 'function', function: { name, description: name, parameters: { type: 'object', properties: {} } } });
const TOOLS = [tool('echo'), tool('str_replace_editor'), tool('submit')];

async function episode(script: Script, limits: EpisodeLimits) {
  const server = await startScriptedOpenAI(script);
  servers.push(server);
  const ran: string[] = [];
  const result = await runEpisode({
    client: createModelClient({ baseURL: server.baseURL, model: 'scripted-model', maxRetries: 0 }),
    system: 'system',
    user: 'task',
    tools: TOOLS,
    limits,
    nudge: 'call a tool',
    runTool: async (call) => {
      ran.push(call.function.name);
      return { content: `ran ${call.function.name}`, done: call.function.name === 'submit' };
    },
  });
  return { result, ran, server };
}

describe('runEpisode: the shared tool loop and its limits', () => {
  it('ends at the tool that says done, answering later calls of the same reply without running them', async () => {
    const { result, ran } = await episode([{ tool_calls: [{ name: 'echo', arguments: {} }, { name: 'submit', arguments: {} }, { name: 'echo', arguments: {} }] }], { maxTurns: 5 });
    expect(result.end).toEqual({ reason: 'done', tool: 'submit' });
    expect(ran).toEqual(['echo', 'submit']);
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', content: 'Not run: the episode already ended with submit.' });
  });

  it('names every tool when the model calls one that does not exist', async () => {
    const { result } = await episode([{ tool_calls: [{ name: 'browse', arguments: {} }] }], { maxTurns: 1 });
    expect(result.messages.at(-1)).toMatchObject({ content: 'Error: there is no tool named "browse"; the tools are echo, str_replace_editor and submit.' });
    expect(result.end).toEqual({ reason: 'max_turns', detail: 'no ending tool call in 1 turns' });
  });

  it('stops once the tokens used pass the budget', async () => {
    const { result, server } = await episode(() => ({ tool_calls: [{ name: 'echo', arguments: {} }], usage: { prompt_tokens: 600, completion_tokens: 100 } }), { maxTurns: 10, maxTokens: 1000 });
    expect(server.requests).toHaveLength(2);
    expect(result.end).toEqual({ reason: 'max_tokens', detail: 'the episode used 1400 tokens, over its budget of 1000' });
  });

  it('stops before the next model call once the wall time is spent', async () => {
    const { result, server } = await episode(() => ({ tool_calls: [{ name: 'echo', arguments: {} }], delayMs: 150 }), { maxTurns: 10, wallTimeMs: 200 });
    expect(server.requests).toHaveLength(2);
    expect(result.end).toMatchObject({ reason: 'wall_time' });
    expect(result.turns).toBe(2);
  });
});
