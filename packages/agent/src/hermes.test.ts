import { describe, expect, it } from 'vitest';
import { parseHermesToolCalls, renderHermesToolsSection } from './hermes.js';
import { AGENT_TOOLS } from './tools.js';

describe('parseHermesToolCalls', () => {
  it('reads every block in order and keeps the text around them', () => {
    const content = 'Let me look.\n<tool_call>\n{"name": "terminal", "arguments": {"command": "ls"}}\n</tool_call>\n<tool_call>{"name":"terminal","arguments":{"command":"rg -n foo","timeout":5}}</tool_call>';
    expect(parseHermesToolCalls(content)).toEqual({
      text: 'Let me look.',
      calls: [
        { name: 'terminal', arguments: '{"command":"ls"}' },
        { name: 'terminal', arguments: '{"command":"rg -n foo","timeout":5}' },
      ],
    });
  });

  it('accepts a last block cut off before its closing tag and string arguments', () => {
    const parsed = parseHermesToolCalls('<tool_call>{"name": "localization_finish", "arguments": "{\\"locations\\": []}"}');
    expect(parsed).toEqual({ text: null, calls: [{ name: 'localization_finish', arguments: '{"locations": []}' }] });
  });

  it('turns bad JSON into a call with an error, keeping the name when it can be read', () => {
    const parsed = parseHermesToolCalls('<tool_call>{"name": "terminal", "arguments": {"command": "ls"</tool_call>');
    expect(parsed.calls).toHaveLength(1);
    expect(parsed.calls[0]?.name).toBe('terminal');
    expect(parsed.calls[0]?.error).toMatch(/not valid JSON/);
    expect(parseHermesToolCalls('<tool_call>[1,2]</tool_call>').calls[0]).toMatchObject({ name: 'invalid_tool_call', error: expect.stringMatching(/JSON object/) });
    expect(parseHermesToolCalls('<tool_call>{"arguments": {}}</tool_call>').calls[0]?.error).toMatch(/no "name"/);
  });

  it('finds no calls in plain text', () => {
    expect(parseHermesToolCalls('I think the bug is in foo.py')).toEqual({ text: 'I think the bug is in foo.py', calls: [] });
  });
});

describe('renderHermesToolsSection', () => {
  it('lists each schema as one JSON line inside <tools> and shows the call format', () => {
    const section = renderHermesToolsSection(AGENT_TOOLS);
    const lines = section.split('\n');
    const start = lines.indexOf('<tools>');
    expect(lines.slice(start + 1, start + 3).map((line) => (JSON.parse(line) as { function: { name: string } }).function.name)).toEqual([
      'terminal',
      'localization_finish',
    ]);
    expect(section).toContain('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>');
  });
});
