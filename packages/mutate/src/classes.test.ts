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

  it('applies to classes only', () => {
    expect(mutate('remove_class_methods', 'def f():\n    pass\n', 'f', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});

describe('shuffle_class_methods', () => {
  const source = `class C:
    x = 1

    def a(self):
        return 1

    @property
    def b(self):
        return 2

    async def c(self):
        return 3
`;

  it('reorders methods, decorators included, around the other class statements', () => {
    expect(mutated('shuffle_class_methods', source, 'C', 1)).toBe(`class C:
    x = 1

    async def c(self):
        return 3

    def a(self):
        return 1

    @property
    def b(self):
        return 2
`);
  });

  it('has no site with fewer than two methods', () => {
    expect(mutate('shuffle_class_methods', 'class D:\n    def a(self):\n        pass\n', 'D', 1)).toEqual({ status: 'dropped', reason: 'no-site' });
  });
});
