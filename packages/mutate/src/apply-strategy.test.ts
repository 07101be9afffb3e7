import { createRng, isEnvgenError } from '@envgen/core';
import { extractEntities } from '@envgen/python';
import { beforeAll, describe, expect, it } from 'vitest';
import { applyStrategy, generateCandidates } from './apply-strategy.js';
import { mutated } from './mutate-test-helpers.fixture.js';
import { STRATEGIES, selectStrategies } from './registry.js';
import { SAMPLE_MODULE } from './sample-module.fixture.js';
import type { MutationCandidate } from './apply-strategy.js';
import type { Strategy } from './types.js';

const SOURCE = 'def f(a):\n    return a + 1\n';
const entityOf = (source: string, name: string) => {
  const entity = extractEntities(source, 'mod.py').entities.find((candidate) => candidate.qualifiedName === name);
  if (entity === undefined) throw new Error(`no entity ${name}`);
  return entity;
};
const fixedEdit = (newSource: string): Strategy => ({
  name: 'fixed',
  family: 'procedural',
  appliesTo: ['function'],
  apply: () => ({ newSource, description: 'fixed edit' }),
});

describe('applyStrategy', () => {
  const input = { source: SOURCE, entity: entityOf(SOURCE, 'f'), path: 'mod.py', rng: createRng(1) };

  it('keeps an edit that parses and changes the syntax tree', () => {
    expect(applyStrategy(fixedEdit('def f(a):\n    return a - 1\n'), input)).toEqual({
      status: 'kept',
      edit: { newSource: 'def f(a):\n    return a - 1\n', description: 'fixed edit' },
    });
  });

  it('drops edits that do not parse or only touch comments and whitespace', () => {
    expect(applyStrategy(fixedEdit('def f(a):\n    return a +\n'), input)).toEqual({ status: 'dropped', reason: 'syntax-error' });
    expect(applyStrategy(fixedEdit('def f(a):  # note\n    return a+1\n'), input)).toEqual({ status: 'dropped', reason: 'unchanged-tree' });
  });

  it('reports no-site for a strategy without a site or for another entity kind', () => {
    expect(applyStrategy(STRATEGIES.invert_if_else as Strategy, input)).toEqual({ status: 'dropped', reason: 'no-site' });
    expect(applyStrategy(STRATEGIES.remove_class_base as Strategy, input)).toEqual({ status: 'dropped', reason: 'no-site' });
  });

  it('refuses an entity extracted from another source', () => {
    const stale = { ...input, source: `# moved\n${SOURCE}` };
    expect(() => applyStrategy(STRATEGIES.change_operator as Strategy, stale)).toThrow(/extract entities from the same text/);
    try {
      applyStrategy(STRATEGIES.change_operator as Strategy, stale);
    } catch (error) {
      expect(isEnvgenError(error, 'internal')).toBe(true);
    }
  });
});

describe('byte offsets, decorators and async code', () => {
  it('edits the right characters after multi-byte text (é, €, CJK, emoji) in and before the entity', () => {
    const source = 'TITLE = "héllo 😀 — 価格"\n\n\ndef price(x):\n    label = "€ 😀"\n    return x * 2 + len(label)\n';
    expect(mutated('change_operator', source, 'price', 1)).toBe(source.replace('x * 2', 'x / 2'));
    expect(mutated('swap_operands', source, 'price', 2)).toBe(source.replace('x * 2', '2 * x'));
    expect(mutated('remove_function_body', source, 'price', 1)).toBe('TITLE = "héllo 😀 — 価格"\n\n\ndef price(x):\n    return None\n');
  });

  it('mutates decorated async methods in their body, never in their decorators', () => {
    const source = `class Client:
    @retry(times=3)
    @staticmethod
    async def fetch(url, timeout=5):
        async with session(url) as s:
            return await s.get(timeout=timeout - 1)
`;
    const outs = new Set(Array.from({ length: 20 }, (_, seed) => mutated('change_constant', source, 'Client.fetch', seed)));
    expect([...outs].sort()).toEqual(
      [
        source.replace('timeout=5', 'timeout=4'),
        source.replace('timeout=5', 'timeout=6'),
        source.replace('timeout - 1', 'timeout - 0'),
        source.replace('timeout - 1', 'timeout - 2'),
      ].sort(),
    );
    expect(mutated('remove_wrapper', source, 'Client.fetch', 1)).toBe(`class Client:
    @retry(times=3)
    @staticmethod
    async def fetch(url, timeout=5):
        return await s.get(timeout=timeout - 1)
`);
    expect(mutated('remove_function_body', source, 'Client.fetch', 1)).toBe(`class Client:
    @retry(times=3)
    @staticmethod
    async def fetch(url, timeout=5):
        return None
`);
  });
});

describe('determinism', () => {
  const { entities } = extractEntities(SAMPLE_MODULE, 'inventory.py');

  it('gives the same edit for the same seed, and different edits across seeds and entities', () => {
    for (const strategy of selectStrategies()) {
      const outputs = new Set<string>();
      for (const entity of entities.filter((candidate) => strategy.appliesTo.includes(candidate.kind))) {
        const run = (seed: number) => strategy.apply({ source: SAMPLE_MODULE, entity, path: 'inventory.py', rng: createRng(seed) });
        const first = run(11);
        expect(run(11)).toEqual(first);
        for (const edit of [first, run(12)]) if (edit !== null) outputs.add(edit.newSource);
      }
      expect(outputs.size, strategy.name).toBeGreaterThan(1);
    }
  }, 120_000);

  it('varies the edit with the seed on one entity with many sites', () => {
    const entity = entities.find((candidate) => candidate.qualifiedName === 'summarize');
    if (entity === undefined) throw new Error('fixture lost summarize');
    const variable = ['shuffle_statements', 'remove_assignment', 'change_constant', 'change_operator', 'swap_operands', 'remove_block'];
    for (const name of variable) {
      const strategy = STRATEGIES[name] as Strategy;
      const outputs = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((seed) => strategy.apply({ source: SAMPLE_MODULE, entity, path: 'x.py', rng: createRng(seed) })?.newSource));
      expect(outputs.size, name).toBeGreaterThan(1);
    }
  });
});

describe('generateCandidates', () => {
  const { entities } = extractEntities(SAMPLE_MODULE, 'inventory.py');
  const options = {
    source: SAMPLE_MODULE,
    path: 'inventory.py',
    entities,
    strategies: selectStrategies(['remove_class_base', 'change_constant']),
    seed: 42,
    attempts: 3,
  };
  let candidates: MutationCandidate[] = [];
  beforeAll(async () => {
    candidates = await generateCandidates(options);
  });

  it('tries each applicable strategy on each entity, attempts times, and nothing else', () => {
    const classes = entities.filter((entity) => entity.kind === 'class').length;
    expect(candidates.filter((c) => c.strategy === 'remove_class_base')).toHaveLength(classes * 3);
    expect(candidates.filter((c) => c.strategy === 'change_constant')).toHaveLength((entities.length - classes) * 3);
  });

  it('records a seed that reproduces each kept edit, and keeps each new source once', () => {
    const kept = candidates.filter((c) => c.status === 'kept');
    expect(kept.length).toBeGreaterThan(5);
    for (const candidate of kept) {
      const outcome = applyStrategy(STRATEGIES[candidate.strategy] as Strategy, {
        source: SAMPLE_MODULE,
        entity: entityOf(SAMPLE_MODULE, candidate.entity),
        path: 'inventory.py',
        rng: createRng(candidate.seed),
      });
      expect(outcome).toEqual({ status: 'kept', edit: candidate.edit });
    }
    expect(new Set(kept.map((c) => c.status === 'kept' && c.edit.newSource)).size).toBe(kept.length);
    // Item has only `object` as base and Inventory two bases: three tries on Inventory repeat an edit.
    expect(candidates.filter((c) => c.status === 'dropped' && c.reason === 'duplicate').length).toBeGreaterThan(0);
  });

  it('is deterministic for a seed', async () => {
    expect(await generateCandidates(options)).toEqual(candidates);
    expect(await generateCandidates({ ...options, seed: 43 })).not.toEqual(candidates);
  });
});

describe('selectStrategies', () => {
  it('returns every strategy by default, and the named ones in order', () => {
    expect(selectStrategies().map((s) => s.name)).toEqual(Object.keys(STRATEGIES));
    expect(Object.keys(STRATEGIES)).toHaveLength(15);
    expect(selectStrategies(['remove_block', 'swap_operands']).map((s) => s.name)).toEqual(['remove_block', 'swap_operands']);
  });

  it('names the unknown strategies and lists the valid ones', () => {
    expect(() => selectStrategies(['swap_operands', 'flip_everything'])).toThrow(
      /unknown mutation strategy "flip_everything"; valid strategies are: invert_if_else, shuffle_statements, .*remove_block$/,
    );
  });
});
