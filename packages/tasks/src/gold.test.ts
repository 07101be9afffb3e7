import { describe, expect, it } from 'vitest';
import { computeTaskGold } from './gold.js';

const CLEAN = `class Stack:\n    def push(self, x):\n        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n\n\ndef helper():\n    return 1\n`;

describe('computeTaskGold', () => {
  it('labels the fix of a method edit by its class and method', () => {
    const patch = `diff --git a/pkg/stack.py b/pkg/stack.py\n--- a/pkg/stack.py\n+++ b/pkg/stack.py\n@@ -5,2 +5,2 @@\n     def pop(self):\n-        return self.items.pop()\n+        return self.items.pop(0)\n`;
    expect(computeTaskGold(patch, (path) => (path === 'pkg/stack.py' ? CLEAN : null))).toEqual([
      { file: 'pkg/stack.py', changes: { edited_entities: ['pkg/stack.py:Stack.pop'], edited_modules: ['pkg/stack.py:Stack'], added_entities: [], added_modules: [] } },
    ]);
  });

  it('labels a bug that deletes a function as a fix that adds it', () => {
    const patch = `diff --git a/pkg/stack.py b/pkg/stack.py\n--- a/pkg/stack.py\n+++ b/pkg/stack.py\n@@ -7,4 +7,1 @@\n \n-\n-def helper():\n-    return 1\n`;
    const [gold] = computeTaskGold(patch, () => CLEAN);
    expect(gold?.changes.added_entities).toEqual(['pkg/stack.py:helper']);
    expect(gold?.changes.added_modules).toEqual(['pkg/stack.py:helper']);
  });

  it('says the pool and repo disagree when the patch no longer applies', () => {
    const patch = `diff --git a/pkg/stack.py b/pkg/stack.py\n--- a/pkg/stack.py\n+++ b/pkg/stack.py\n@@ -1 +1 @@\n-nothing like this\n+x\n`;
    expect(() => computeTaskGold(patch, () => CLEAN)).toThrow(/no longer applies/);
  });
});
