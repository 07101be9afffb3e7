import { describe, expect, it } from 'vitest';
import { extractEntities, findEnclosingEntity } from './entities.js';
import type { Entity } from './types.js';

const SOURCE = [
  'import functools', //                                     1
  '', //                                                     2
  '@functools.cache', //                                     3
  '@other', //                                               4
  'def top(a):', //                                          5
  '    def helper():', //                                    6
  '        return a', //                                     7
  '    return helper()', //                                  8
  '', //                                                     9
  'async def fetch(url):', //                               10
  '    return await get(url)', //                           11
  '', //                                                    12
  'class Outer(Base):', //                                  13
  '    size = 3', //                                        14
  '', //                                                    15
  '    @property', //                                       16
  '    def area(self):', //                                 17
  '        return self.size ** 2', //                       18
  '', //                                                    19
  '    @area.setter', //                                    20
  '    def area(self, value):', //                          21
  '        self.size = value', //                           22
  '', //                                                    23
  '    class Inner:', //                                    24
  '        def method(self):', //                           25
  '            class Local:', //                            26
  '                def hidden(self): pass', //              27
  '            return Local', //                            28
  '', //                                                    29
  '    if PY3:', //                                         30
  '        def compat(self):', //                           31
  '            pass', //                                    32
  '    else:', //                                           33
  '        async def compat(self):', //                     34
  '            pass', //                                    35
  '', //                                                    36
  'try:', //                                                37
  '    def fast(): pass', //                                38
  'except ImportError:', //                                 39
  '    def fast(): return 0', //                            40
  '', //                                                    41
].join('\n');

function byName(entities: Entity[], name: string): Entity[] {
  return entities.filter((entity) => entity.qualifiedName === name);
}

function only(entities: Entity[], name: string): Entity {
  const found = byName(entities, name);
  expect(found).toHaveLength(1);
  return found[0] as Entity;
}

describe('extractEntities', () => {
  const { entities, hasErrors, path } = extractEntities(SOURCE, 'pkg/mod.py');

  it('lists functions, methods and classes in source order with qualified names', () => {
    expect(path).toBe('pkg/mod.py');
    expect(hasErrors).toBe(false);
    expect(entities.map((entity) => `${entity.kind}:${entity.qualifiedName}`)).toEqual([
      'function:top',
      'function:fetch',
      'class:Outer',
      'method:Outer.area',
      'method:Outer.area',
      'class:Outer.Inner',
      'method:Outer.Inner.method',
      'method:Outer.compat',
      'method:Outer.compat',
      'function:fast',
      'function:fast',
    ]);
  });

  it('spans decorated definitions from the first decorator and records the def line', () => {
    const top = only(entities, 'top');
    expect(top).toMatchObject({ startLine: 3, defLine: 5, endLine: 8, decorators: ['functools.cache', 'other'], isAsync: false });
    expect(SOURCE.slice(top.startByte, top.endByte)).toMatch(/^@functools\.cache[\s\S]*return helper\(\)$/);
    expect(SOURCE.slice(top.bodyStartByte, top.bodyEndByte)).toMatch(/^def helper\(\):[\s\S]*return helper\(\)$/);
  });

  it('marks async definitions and property accessors', () => {
    expect(only(entities, 'fetch')).toMatchObject({ isAsync: true, startLine: 10, defLine: 10, endLine: 11 });
    const [getter, setter] = byName(entities, 'Outer.area');
    expect(getter).toMatchObject({ kind: 'method', name: 'area', className: 'Outer', decorators: ['property'], startLine: 16, defLine: 17 });
    expect(setter).toMatchObject({ decorators: ['area.setter'], startLine: 20, defLine: 21, endLine: 22 });
    expect(byName(entities, 'Outer.compat').map((entity) => entity.isAsync)).toEqual([false, true]);
  });

  it('names nested classes and their methods, and leaves what a function defines to it', () => {
    expect(only(entities, 'Outer.Inner')).toMatchObject({ kind: 'class', className: null, startLine: 24, endLine: 28 });
    expect(only(entities, 'Outer.Inner.method')).toMatchObject({ className: 'Outer.Inner', name: 'method' });
    expect(entities.some((entity) => ['helper', 'Local', 'hidden'].includes(entity.name))).toBe(false);
    expect(only(entities, 'Outer')).toMatchObject({ startLine: 13, endLine: 35, decorators: [] });
  });

  it('gives UTF-8 byte offsets when non-ASCII text precedes a definition', () => {
    const prefix = '# héllo ✓ 😀\nNAME = "naïve"\n';
    const source = `${prefix}def f():\n    return "ü"\n`;
    const [entity] = extractEntities(source, 'u.py').entities;
    const bytes = Buffer.from(source, 'utf8');
    expect(entity?.startByte).toBe(Buffer.byteLength(prefix, 'utf8'));
    expect(entity?.startByte).not.toBe(prefix.length);
    expect(bytes.subarray(entity?.startByte, entity?.endByte).toString('utf8')).toBe('def f():\n    return "ü"');
    expect(entity).toMatchObject({ startLine: 3, endLine: 4 });
  });

  it('recovers definitions from a file with syntax errors and says so', () => {
    const result = extractEntities('def ok():\n    return 1\n\ndef broken(:\n    pass\n', 'e.py');
    expect(result.hasErrors).toBe(true);
    expect(result.entities.map((entity) => entity.qualifiedName)).toContain('ok');
  });

  it('parses files far larger than 32 KiB with non-ASCII characters throughout', () => {
    const chunk = 'def f{i}():\n    return "ünïcödé 😀 {i}"\n\n';
    const source = Array.from({ length: 3000 }, (_, i) => chunk.replaceAll('{i}', String(i))).join('');
    expect(source.length).toBeGreaterThan(100_000);
    const result = extractEntities(source, 'big.py');
    expect(result.hasErrors).toBe(false);
    expect(result.entities).toHaveLength(3000);
    const last = result.entities[2999] as Entity;
    expect(last).toMatchObject({ qualifiedName: 'f2999', startLine: 3 * 2999 + 1 });
    const bytes = Buffer.from(source, 'utf8');
    expect(bytes.subarray(last.startByte, last.endByte).toString('utf8')).toBe('def f2999():\n    return "ünïcödé 😀 2999"');
  });
});

describe('findEnclosingEntity', () => {
  const { entities } = extractEntities(SOURCE, 'pkg/mod.py');
  const nameAt = (line: number, includeDecorators?: boolean): string | null =>
    findEnclosingEntity(entities, line, includeDecorators === undefined ? {} : { includeDecorators })?.qualifiedName ?? null;

  it('maps a line in a nested function to its outer function', () => {
    expect(nameAt(7)).toBe('top');
  });

  it('prefers the innermost method, then the innermost class, else null', () => {
    expect(nameAt(18)).toBe('Outer.area');
    expect(nameAt(27)).toBe('Outer.Inner.method');
    expect(nameAt(24)).toBe('Outer.Inner');
    expect(nameAt(14)).toBe('Outer');
    expect(nameAt(30)).toBe('Outer');
    expect(nameAt(32)).toBe('Outer.compat');
    expect(nameAt(1)).toBeNull();
    expect(nameAt(12)).toBeNull();
    expect(nameAt(38)).toBe('fast');
  });

  it('counts decorator lines in the definition unless told otherwise', () => {
    expect(nameAt(3)).toBe('top');
    expect(nameAt(3, false)).toBeNull();
    expect(nameAt(16)).toBe('Outer.area');
    expect(nameAt(16, false)).toBe('Outer');
  });
});
