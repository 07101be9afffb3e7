import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { mutate, mutated } from './mutate-test-helpers.fixture.js';

describe('remove_class_base', () => {
  it('removes one base and keeps keyword arguments', () => {
    const source = 'class C(A, B, metaclass=M):\n    pass\n';
    expect(mutated('remove_class_base', source, 'C', 1)).toBe('class C(A, metaclass=M):\n    pass\n');
    expect(mutated('remove_class_base', source, 'C', 7)).toBe('class C(B, metaclass=M):\n    pass\n');
  });

  it('drops the parentheses with the last base, and ignores object', () => {
    expect(mutated('remove_class_base', 'class C(object, Base):\n    x = 1\n', 'C', 1)).toBe('class C(object):\n    x = 1\n');
    expect(mutated('remove_class_base', 'class D(Base):\n    x = 1\n', 'D', 1)).toBe('class D:\n    x = 1\n');
    expect(mutate('remove_class_base', 'class E(object):\n    x = 1\n', 'E', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('remove_class_methods', () => {
  const source = `class C:
    def helper(self, x):
        return x + 1

    def run(self):
        self.helper(1)
        y = self.helper(2) + 1
        return y

    def only(self):
        self.helper(self.helper(3))
`;

  it('removes a method, deletes call statements and turns calls in expressions into None', () => {
    expect(mutated('remove_class_methods', source, 'C', 7)).toBe(`class C:

    def run(self):
        y = None + 1
        return y

    def only(self):
        pass
`);
  });

  it('removes a method nobody calls', () => {
    expect(mutated('remove_class_methods', source, 'C', 1)).toBe(`class C:
    def helper(self, x):
        return x + 1

    def only(self):
        self.helper(self.helper(3))
`);
  });

  it('leaves methods the class body names when Python makes the class, which without them raises NameError (webtest)', () => {
    const named = `class Field:
    def value__get(self):
        return self._value

    def value__set(self, value):
        self._value = value

    value = property(value__get, value__set)

    @property
    def size(self):
        return len(self._value)

    @size.setter
    def size(self, n):
        self._value = self._value[:n]

    def keys(self):
        return [self.value__get()]

    __iter__ = keys
`;
    const removed = new Set<string>();
    for (let seed = 1; seed <= 60; seed += 1) {
      const result = mutate('remove_class_methods', named, 'Field', seed);
      if (result.status === 'kept') removed.add(/removed method Field\.(\w+) at line (\d+)/.exec(result.edit.description)?.slice(1).join(':') ?? '');
    }
    // Only the setter may go: the getter is named by the setter's decorator, the others by assignments.
    expect([...removed]).toEqual(['size:14']);
  });

  it('applies to classes only', () => {
    expect(mutate('remove_class_methods', 'def f():\n    pass\n', 'f', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('shuffle_class_methods', () => {
  const source = `import typing


class C:
    x = 1

    @typing.overload
    def a(self, v: int) -> int: ...

    @typing.overload
    def a(self, v: str) -> str: ...

    def a(self, v):
        return v

    @property
    def b(self):
        return self._b

    @b.setter
    def b(self, value):
        self._b = value
`;

  it('moves an earlier definition of a name the class defines twice into the place that binds it', () => {
    const edit = mutated('shuffle_class_methods', source, 'C', 1);
    expect(edit.lastIndexOf('@typing.overload')).toBeGreaterThan(edit.indexOf('        return v\n'));
    expect(edit.split('\n').filter((line) => line.includes('def '))).toHaveLength(5);
    // Python binds the stub now: calling it raises, as an overload stub does.
    const probe = `${edit}\ntry:\n    C().a(1)\nexcept NotImplementedError:\n    print("stub")\n`;
    expect(execFileSync('/usr/bin/python3', ['-c', probe], { encoding: 'utf8' }).trim()).toBe('stub');
  });

  it('has no site where every method name is defined once, or only a property chain repeats one', () => {
    const distinct = 'class D:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 2\n';
    expect(mutate('shuffle_class_methods', distinct, 'D', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
    const chain = 'class E:\n    @property\n    def b(self):\n        return 1\n\n    @b.setter\n    def b(self, value):\n        pass\n';
    expect(mutate('shuffle_class_methods', chain, 'E', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});
