/**
 * The order in which to try weighted candidates: each next one drawn with a
 * probability proportional to its weight among those not yet drawn, so load
 * spreads by weight and a failure falls back to the rest in a weighted order
 * too. `random` returns a number in [0, 1).
 */
export function weightedOrder<T extends { weight: number }>(candidates: readonly T[], random: () => number = Math.random): T[] {
  const left = [...candidates];
  const order: T[] = [];
  while (left.length > 0) {
    const total = left.reduce((sum, candidate) => sum + candidate.weight, 0);
    let point = random() * total;
    let index = left.findIndex((candidate) => (point -= candidate.weight) < 0);
    if (index < 0) index = left.length - 1;
    order.push(...left.splice(index, 1));
  }
  return order;
}
