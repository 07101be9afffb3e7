import type { Rng } from '@envgen/core';
import type { SyntaxNode } from '@envgen/python';
import { lineSlot } from './source-text.js';
import type { TextEdit } from './source-text.js';

/** A random permutation of `0..n-1` (n ≥ 2) that moves at least one element. */
function permuteChanged(rng: Rng, n: number): number[] {
  const identity = Array.from({ length: n }, (_, i) => i);
  const order = rng.shuffle(identity);
  // A shuffle that changed nothing becomes a rotation, which always moves every element.
  return order.every((value, i) => value === i) ? [...identity.slice(1), 0] : order;
}

/**
 * Edits reordering sibling statements (each owning its lines, same indentation): slot `i`
 * receives the lines of statement `order[i]`; the order always differs from the original.
 */
export function permuteStatements(source: string, statements: readonly SyntaxNode[], rng: Rng): { edits: TextEdit[]; order: number[] } {
  const slots = statements.map((statement) => lineSlot(source, statement));
  const order = permuteChanged(rng, slots.length);
  return { edits: slots.map((slot, i) => ({ ...slot, text: slots[order[i] ?? i]?.text ?? slot.text })), order };
}
