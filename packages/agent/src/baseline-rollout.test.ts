import { describe, expect, it } from 'vitest';
import type { FileChanges } from '@envgen/core';
import { writeFixtureRepo } from '../../../test/support/fixture-repo.js';
import { rankEntities, runBaselineRollout } from './baseline-rollout.js';

const files = [
  {
    path: 'shop/cart.py',
    source:
      'class Cart:\n    def __init__(self):\n        self.items = []\n\n    def add(self, item, price):\n        self.items.append((item, price))\n\n    def total(self):\n        """Sum of the prices in the cart."""\n        return sum(price for _, price in self.items) - 1\n',
  },
  { path: 'shop/money.py', source: 'def format_money(value, currency="EUR"):\n    return f"{value:.2f} {currency}"\n\ndef parse_money(text):\n    return float(text.split()[0])\n' },
  { path: 'shop/café.py', source: '# é before the definitions shifts byte offsets\ndef brew(kind):\n    return "coffee " + kind\n' },
];

describe('rankEntities', () => {
  it('puts the method the statement is about first, with its class and file', () => {
    const ranked = rankEntities(files, 'Cart.total() is off by one: the total price of an empty cart is -1.');
    expect(ranked[0]).toMatchObject({ file: 'shop/cart.py', qualifiedName: 'Cart.total', className: 'Cart', name: 'total' });
    expect(ranked[0]?.score).toBeGreaterThan(ranked[1]?.score ?? 0);
  });

  it('ranks functions by their bodies (byte offsets past non-ASCII text included) and leaves out unrelated ones', () => {
    expect(rankEntities(files, 'parse_money("3.50 EUR") fails on the currency')[0]?.qualifiedName).toBe('parse_money');
    expect(rankEntities(files, 'brewing coffee of a kind')[0]).toMatchObject({ file: 'shop/café.py', qualifiedName: 'brew' });
    expect(rankEntities(files, 'zebra')).toEqual([]);
  });
});

describe('runBaselineRollout', () => {
  const checkout = writeFixtureRepo({
    ...Object.fromEntries(files.map((file) => [file.path, file.source])),
    'shop/__init__.py': '',
    'tests/test_cart.py': 'from shop.cart import Cart\n\ndef test_total_of_empty_cart():\n    assert Cart().total() == 0\n',
  });
  const gold: FileChanges[] = [
    { file: 'shop/cart.py', changes: { edited_entities: ['shop/cart.py:Cart.total'], edited_modules: ['shop/cart.py:Cart'], added_entities: [], added_modules: [] } },
  ];
  const task = {
    instance_id: 'fixture__shop.00000000.change_operator__00000000',
    problem_statement: {
      kind: 'tests' as const,
      text: 'tests/test_cart.py::test_total_of_empty_cart fails:\n    assert Cart().total() == 0\nAssertionError: assert -1 == 0',
      created_at: '2020-01-01T00:00:00Z',
    },
    file_changes: gold,
  };

  it('searches the source files (not the tests) and answers in the agent trajectory shape', async () => {
    const trajectory = await runBaselineRollout({ task, checkout, runId: 'r1' });
    expect(trajectory.locations).toEqual([{ file: 'shop/cart.py', class_name: 'Cart', function_name: 'total' }]);
    expect(trajectory.reward).toEqual({ reward: 3, file: 1, module: 1, entity: 1, valid: true });
    expect(trajectory).toMatchObject({ solver: 'baseline', model: null, solved: true, turns: 1, tool_calls: 1, finish: { reason: 'localization_finish' } });
    expect(trajectory.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    const assistant = trajectory.messages[2];
    expect(assistant?.role === 'assistant' && assistant.tool_calls?.[0]?.function).toEqual({
      name: 'localization_finish',
      arguments: '{"locations":[{"file":"shop/cart.py","class_name":"Cart","function_name":"total"}]}',
    });
    expect(assistant?.content).toMatch(/^BM25 over 4 source files .*\n1\. shop\/cart\.py:Cart\.total \(score/);
    expect(trajectory.messages[1]?.content).toContain('checked out at /tmp/repo');
    expect(trajectory.usage.total_tokens).toBe(0);
  });

  it('submits more than one location when asked, and scores 0 with no answer when nothing matches', async () => {
    const two = await runBaselineRollout({ task, checkout, runId: 'r2', maxLocations: 2 });
    expect(two.locations).toHaveLength(2);
    expect(two.reward.entity).toBeCloseTo(2 / 3, 12);
    const none = await runBaselineRollout({ task: { ...task, problem_statement: { ...task.problem_statement, text: 'zebra' } }, checkout, runId: 'r3' });
    expect(none).toMatchObject({ locations: null, solved: false, tool_calls: 0, finish: { reason: 'max_turns' } });
    expect(none.reward.reward).toBe(0);
  });
});
