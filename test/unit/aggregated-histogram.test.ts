import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AggregatedHistogram } from '../../src/observability/aggregated-histogram.ts';

// An aggregated histogram must scrape exactly as prom-client's own would,
// fed the same observations: every count, sum, bucket and series order.

const buckets = [0.005, 0.01, 0.05, 0.1, 1, 10];
type Label = 'model' | 'provider';

function pair() {
  const plainRegistry = new Registry();
  const aggregatedRegistry = new Registry();
  const plain = new Histogram<Label>({ name: 'loopgate_test_seconds', help: 'A test histogram.', labelNames: ['model', 'provider'], buckets, registers: [plainRegistry] });
  const aggregated = new AggregatedHistogram<Label>({ name: 'loopgate_test_seconds', help: 'A test histogram.', labelNames: ['model', 'provider'], buckets, registers: [aggregatedRegistry] });
  return { plain, aggregated, plainRegistry, aggregatedRegistry };
}

/** A deterministic stream of values: inside every bucket, on bucket bounds, above the last, and fractions whose sums round. */
function values(count: number): number[] {
  let seed = 7;
  const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  return Array.from({ length: count }, (_, index) => (index % 17 === 0 ? buckets[index % buckets.length]! : index % 23 === 0 ? 12 + next() : next() * (index % 3 === 0 ? 0.02 : 2)));
}

describe('AggregatedHistogram', () => {
  it('scrapes like prom-client: text and JSON, series in the order of their first observation', async () => {
    const { plain, aggregated, plainRegistry, aggregatedRegistry } = pair();
    const labelSets = [
      { model: 'b', provider: 'p1' },
      { model: 'a', provider: 'p2' },
      { model: 'quote"d\\', provider: 'p1' },
    ];
    // Made up front in another order than they are first observed, and one never observed at all: neither shows.
    const series = [labelSets[2]!, labelSets[0]!, labelSets[1]!, { model: 'never', provider: 'p1' }].map((labels) => aggregated.series(labels));
    const order = [1, 0, 2];
    values(3_000).forEach((value, index) => {
      const which = order[index % 3]!;
      plain.observe(labelSets[which]!, value);
      series[[1, 2, 0][which]!]!.observe(value);
    });
    expect(await aggregatedRegistry.metrics()).toBe(await plainRegistry.metrics());
    expect(await aggregatedRegistry.getMetricsAsJSON()).toEqual(await plainRegistry.getMetricsAsJSON());
    expect(await aggregatedRegistry.metrics()).toContain('loopgate_test_seconds_bucket{le="+Inf",model="b",provider="p1"} 1000');
  });

  it('starts over on reset, and lists a series again at its next observation', async () => {
    const { plain, aggregated, plainRegistry, aggregatedRegistry } = pair();
    const first = aggregated.series({ model: 'a', provider: 'p' });
    const second = aggregated.series({ model: 'b', provider: 'p' });
    first.observe(0.5);
    second.observe(0.5);
    aggregated.reset();
    second.observe(2);
    first.observe(0.001);
    plain.observe({ model: 'b', provider: 'p' }, 2);
    plain.observe({ model: 'a', provider: 'p' }, 0.001);
    expect(await aggregatedRegistry.metrics()).toBe(await plainRegistry.metrics());
  });

  it('refuses what prom-client refuses, counting nothing', async () => {
    const { aggregated, aggregatedRegistry } = pair();
    const series = aggregated.series({ model: 'a', provider: 'p' });
    expect(() => series.observe(Number.NaN)).toThrow(TypeError);
    expect(() => series.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(await aggregatedRegistry.metrics()).not.toContain('model="a"');
  });
});
