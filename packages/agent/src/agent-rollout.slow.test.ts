import { afterAll, describe, expect, it } from 'vitest';
import type { FileChanges } from '@envgen/core';
import { createSandboxProvider } from '@envgen/sandbox';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { hermesToolCalls, startScriptedOpenAI } from '../../../test/support/scripted-openai.js';
import type { Script, ScriptedOpenAI } from '../../../test/support/scripted-openai.js';
import { runAgentRollout } from './agent-rollout.js';
import type { AgentRolloutOptions } from './agent-rollout.js';
import { createModelClient } from './model-client.js';
import type { ModelClientOptions } from './model-client.js';
import type { Trajectory } from './trajectory.js';

const provider = createSandboxProvider('local');
const checkout = writeFixtureRepo(
  {
    'shop/__init__.py': '',
    'shop/cart.py': 'class Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return sum(price for price in self.items) - 1\n',
    'shop/util.py': 'def money(value):\n    return f"${value:.2f}"\n',
    'tests/test_cart.py': 'from shop.cart import Cart\n\ndef test_total():\n    assert Cart().total() == 0\n',
  },
  { git: true },
);
const gold: FileChanges[] = [
  { file: 'shop/cart.py', changes: { edited_entities: ['shop/cart.py:Cart.total'], edited_modules: ['shop/cart.py:Cart'], added_entities: [], added_modules: [] } },
];
const task = {
  instance_id: 'fixture__shop.00000000.change_operator__00000000',
  problem_statement: { kind: 'tests' as const, text: 'Cart().total() returns -1 for an empty cart; it should be 0.', created_at: '2020-01-01T00:00:00Z' },
  file_changes: gold,
};
const FINISH = { name: 'localization_finish', arguments: { locations: [{ file: 'shop/cart.py', class_name: 'Cart', function_name: 'total' }] } };

const servers: ScriptedOpenAI[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function rollout(script: Script, overrides: Partial<AgentRolloutOptions> = {}, client: Partial<ModelClientOptions> = {}) {
  const server = await startScriptedOpenAI(script);
  servers.push(server);
  const trajectory = await runAgentRollout({
    task,
    checkout,
    sandboxProvider: provider,
    client: createModelClient({ baseURL: server.baseURL, model: 'scripted-model', ...client }),
    runId: 'test-run',
    ...overrides,
  });
  return { server, trajectory };
}

function toolMessages(trajectory: Trajectory): string[] {
  return trajectory.messages.flatMap((message) => (message.role === 'tool' ? [message.content] : []));
}

describe('the agent loop against a scripted OpenAI-compatible server, on a real checkout in the sandbox', () => {
  it('runs parallel native tool calls in order in one persistent shell and scores a correct finish 3', async () => {
    const { server, trajectory } = await rollout([
      {
        content: 'Searching.',
        reasoning_content: 'The total is off by one.',
        tool_calls: [
          { name: 'terminal', arguments: { command: 'rg -n "def total" shop' } },
          { name: 'terminal', arguments: { command: 'cd shop && pwd' } },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20 },
      },
      { tool_calls: [{ name: 'terminal', arguments: { command: 'sed -n 5,6p cart.py' } }, FINISH], usage: { prompt_tokens: 200, completion_tokens: 30 } },
    ]);
    expect(trajectory.finish).toEqual({ reason: 'localization_finish' });
    expect(trajectory.reward).toEqual({ reward: 3, file: 1, module: 1, entity: 1, valid: true });
    expect(trajectory.solved).toBe(true);
    expect(trajectory.locations).toEqual([{ file: 'shop/cart.py', class_name: 'Cart', function_name: 'total' }]);
    expect(trajectory.usage).toEqual({ prompt_tokens: 300, completion_tokens: 50, total_tokens: 350 });
    expect(trajectory).toMatchObject({ solver: 'agent', model: 'scripted-model', run_id: 'test-run', turns: 2, tool_calls: 4 });
    expect(trajectory.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'tool']);
    const [rg, cd, sed, finish] = toolMessages(trajectory);
    expect(rg).toBe('shop/cart.py:5:    def total(self):\n[The command completed with exit code 0.]');
    expect(cd).toBe('/tmp/repo/shop\n[The command completed with exit code 0.]\n[Current working directory: /tmp/repo/shop]');
    // The relative path works because the shell kept the directory of the previous call.
    expect(sed).toContain('        return sum(price for price in self.items) - 1\n[The command completed with exit code 0.]');
    expect(finish).toMatch(/^Submitted 1 location/);
    // Reasoning is kept in the trajectory but not sent back (chat templates drop it).
    expect(trajectory.messages[2]).toMatchObject({ role: 'assistant', content: 'Searching.', reasoning_content: 'The total is off by one.' });
    // What the server saw: both tools offered, the issue in <issue_description>, results fed back by call id.
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.tools?.map((tool) => tool.function.name)).toEqual(['terminal', 'localization_finish']);
    expect(server.requests[0]?.messages[1]?.content).toContain('<issue_description>\nCart().total() returns -1 for an empty cart; it should be 0.\n</issue_description>');
    expect(server.requests[0]?.messages[1]?.content).toContain('/tmp/repo');
    const second = server.requests[1]?.messages ?? [];
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(second[2]).toEqual({ role: 'assistant', content: 'Searching.', tool_calls: [expect.objectContaining({ id: 'call_1' }), expect.objectContaining({ id: 'call_2' })] });
    expect(second[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: rg });
    expect(second[4]).toMatchObject({ role: 'tool', tool_call_id: 'call_2', content: cd });
    expect(trajectory.timing.duration_ms).toBeGreaterThanOrEqual(trajectory.timing.tool_ms);
  });

  it('reads Hermes <tool_call> text, answers bad JSON with an error the model can act on, and still scores the finish', async () => {
    const { trajectory } = await rollout([
      { content: hermesToolCalls([{ name: 'terminal', arguments: { command: 'grep -rn "total" --include=*.py shop' } }], '<think>look for total</think>') },
      { content: '<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"\n</tool_call>' },
      { content: hermesToolCalls([FINISH]) },
    ]);
    expect(trajectory.finish.reason).toBe('localization_finish');
    expect(trajectory.reward.reward).toBe(3);
    const [assistant] = trajectory.messages.filter((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({
      role: 'assistant',
      content: '<think>look for total</think>',
      tool_calls: [{ type: 'function', function: { name: 'terminal', arguments: '{"command":"grep -rn \\"total\\" --include=*.py shop"}' } }],
    });
    const [grep, bad] = toolMessages(trajectory);
    expect(grep).toContain('shop/cart.py:5:    def total(self):');
    expect(bad).toMatch(/^Error: the <tool_call> block is not valid JSON .*write <tool_call>\{"name": "terminal"/);
  });

  it('answers native tool calls with bad JSON arguments, unknown tools and an invalid finish, then accepts a corrected finish', async () => {
    const { trajectory } = await rollout([
      {
        tool_calls: [
          { name: 'terminal', arguments: '{"command": "ls"' },
          { name: 'browse', arguments: { url: 'x' } },
          { name: 'terminal', arguments: { cmd: 'ls' } },
          { name: 'localization_finish', arguments: { locations: [{ file: '/etc/passwd' }] } },
        ],
      },
      { tool_calls: [{ name: 'localization_finish', arguments: { locations: [{ file: '/tmp/repo/shop/cart.py', function_name: 'Cart.total' }] } }] },
    ]);
    const [badJson, unknown, noCommand, badFinish] = toolMessages(trajectory);
    expect(badJson).toMatch(/^Error: the arguments of terminal are not valid JSON/);
    expect(unknown).toBe('Error: there is no tool named "browse"; the tools are terminal and localization_finish.');
    expect(noCommand).toMatch(/^Error: terminal needs \{"command"/);
    expect(badFinish).toMatch(/^Error: invalid localization_finish call: locations\[0\]\.file "\/etc\/passwd" is not inside the repo/);
    // An absolute path inside the checkout and a dotted function name are normalized.
    expect(trajectory.locations).toEqual([{ file: 'shop/cart.py', class_name: 'Cart', function_name: 'total' }]);
    expect(trajectory.reward.reward).toBe(3);
  });

  it('cuts long output at 30,000 characters and kills a command at the timeout the model asked for', async () => {
    const { trajectory } = await rollout([
      { tool_calls: [{ name: 'terminal', arguments: { command: 'seq 1 100000' } }, { name: 'terminal', arguments: { command: 'sleep 20; echo late', timeout: 1 } }] },
      { tool_calls: [{ name: 'terminal', arguments: { command: 'echo alive' } }, FINISH] },
    ]);
    const [seq, sleep, alive] = toolMessages(trajectory);
    expect(seq?.length).toBeLessThan(30_100);
    expect(seq).toMatch(/^1\n2\n3\n/);
    expect(seq).toMatch(/\[\.\.\. \d+ characters omitted \.\.\.\]/);
    expect(seq).toMatch(/\n100000\n\[The command completed with exit code 0\.\]$/);
    expect(sleep).toMatch(/\[The command timed out after 1 seconds and was killed\.\]$/);
    expect(sleep).not.toMatch(/^late$/m);
    expect(alive).toBe('alive\n[The command completed with exit code 0.]');
    expect(trajectory.timing.tool_ms).toBeLessThan(10_000);
  });

  it('ends with reward 0 when the turns run out without a finish, nudging a reply without tool calls', async () => {
    const { server, trajectory } = await rollout(
      (_request, index) => (index === 1 ? { content: 'I am not sure.' } : { tool_calls: [{ name: 'terminal', arguments: { command: `echo turn ${index}` } }] }),
      { maxTurns: 3 },
    );
    expect(server.requests).toHaveLength(3);
    expect(trajectory.turns).toBe(3);
    expect(trajectory.finish).toEqual({ reason: 'max_turns', detail: 'no valid localization_finish in 3 turns' });
    expect(trajectory.reward).toMatchObject({ reward: 0, valid: false });
    expect(trajectory.solved).toBe(false);
    expect(trajectory.locations).toBeNull();
    expect(trajectory.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool']);
    expect(trajectory.messages[5]).toMatchObject({ role: 'user', content: expect.stringMatching(/did not call a tool/) });
    expect(server.requests[0]?.messages[0]?.content).toContain('at most 3 turns');
  });

  it('retries an injected 500 and 429 and switches to Hermes text when the server refuses tools', async () => {
    const { server, trajectory } = await rollout((request, index) => {
      if (index === 0) return { error: { status: 500 } };
      if (index === 1) return { error: { status: 429 } };
      if (request.tools !== undefined) {
        return { error: { status: 400, message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' } };
      }
      return { content: hermesToolCalls([FINISH]) };
    });
    expect(server.hits.map((hit) => hit.status)).toEqual([500, 429, 400, 200]);
    expect(server.requests[3]?.tools).toBeUndefined();
    expect(server.requests[3]?.messages[0]?.content).toContain('<tools>\n{"type":"function","function":{"name":"terminal"');
    // The trajectory keeps the system prompt the model actually saw.
    expect(trajectory.messages[0]?.content).toContain('<tools>');
    expect(trajectory.reward.reward).toBe(3);
  });

  it('ends with reason error, not a scored answer, when the endpoint keeps failing', async () => {
    const { trajectory } = await rollout(() => ({ error: { status: 503 } }), {}, { maxRetries: 1 });
    expect(trajectory.finish.reason).toBe('error');
    expect(trajectory.finish.detail).toMatch(/503/);
    expect(trajectory.reward.reward).toBe(0);
  });
});
