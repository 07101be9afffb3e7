/**
 * F1 between a predicted and a gold set, CodeScout's way: 0 when the gold set is empty
 * (even for an empty prediction, so an unlabelled level never pays), 0 when nothing is
 * predicted, else `2·tp / (|pred| + |gold|)` (equal to 2PR/(P+R)).
 */
export function f1(pred: ReadonlySet<string>, gold: ReadonlySet<string>): number {
  if (gold.size === 0 || pred.size === 0) return 0;
  let truePositives = 0;
  for (const item of pred) if (gold.has(item)) truePositives++;
  return (2 * truePositives) / (pred.size + gold.size);
}
