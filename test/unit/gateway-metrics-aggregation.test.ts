import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { ResponseEndedEvent } from '../../src/engine/loop-observer.ts';
import { AggregatedCounter } from '../../src/observability/aggregated-counter.ts';
import { GatewayMetrics } from '../../src/observability/gateway-metrics.ts';
import { LabelBounds } from '../../src/observability/label-bounds.ts';
import { parsePrometheusText, type Scrape } from '../support/prometheus-text.ts';

// Counters add up in plain numbers and reach prom-client at scrape time: these
// tests fail if an increment is lost, counted twice, or shows up late.

const newMetrics = () => new GatewayMetrics(new LabelBounds({ models: ['m1'], providers: ['p1'], tenants: ['t1'], mcpServers: [] }));

function ended(overrides: Partial<ResponseEndedEvent>): ResponseEndedEvent {
  return {
    responseId: 'resp_1',
    model: 'm1',
    provider: 'p1',
    upstreamModel: 'm1',
    tenant: 't1',
    stream: false,
    background: false,
    conversationId: null,
    previousResponseId: null,
    startedAt: 0,
    status: 'completed',
    errorCode: null,
    error: null,
    incompleteReason: null,
    usage: null,
    toolCalls: 0,
    durationMs: 100,
    ...overrides,
  };
}

const usage = (input: number, output: number, cached?: number, reasoning?: number) =>
  ({
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    ...(cached === undefined ? {} : { input_tokens_details: { cached_tokens: cached } }),
    ...(reasoning === undefined ? {} : { output_tokens_details: { reasoning_tokens: reasoning } }),
  }) as ResponseEndedEvent['usage'];

const scrape = async (metrics: GatewayMetrics) => parsePrometheusText((await metrics.exposition()).body);

/** The one sample of `name` whose labels are exactly `labels`; undefined when the series is not there. */
function valueOf(scraped: Scrape, name: string, labels: Record<string, string>): number | undefined {
  const matches = scraped.samples.filter((sample) => sample.name === name && Object.keys(sample.labels).length === Object.keys(labels).length && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  expect(matches.length).toBeLessThanOrEqual(1);
  return matches[0]?.value;
}

const m1 = { model: 'm1', provider: 'p1' };
const other = { model: 'other', provider: 'p1' };
const buckets = (scraped: Scrape, name: string, labels: Record<string, string>, les: string[]) => les.map((le) => valueOf(scraped, `${name}_bucket`, { ...labels, le }));

describe('gateway metrics across scrapes', () => {
  it('count every request, response and token exactly once, however the scrapes fall', async () => {
    const metrics = newMetrics();
    metrics.request('POST', '/v1/responses', 200);
    metrics.request('POST', '/v1/responses', 200);
    metrics.request('GET', undefined, 404);
    metrics.responseEnded(ended({ durationMs: 100, usage: usage(10, 5, 2, 1) }), 1, 50);
    metrics.responseEnded(ended({ status: 'failed', durationMs: 300 }), 2, null);
    // An unknown model counts as `other`; a usage without details still shows its cached and reasoning series, at 0.
    metrics.responseEnded(ended({ model: 'unknown', tenant: 'nobody', durationMs: 2_000, usage: usage(7, 3) }), 0, null);

    const first = await scrape(metrics);
    expect(valueOf(first, 'loopgate_http_requests_total', { method: 'POST', route: '/v1/responses', status: '200' })).toBe(2);
    expect(valueOf(first, 'loopgate_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(valueOf(first, 'loopgate_responses_total', { ...m1, status: 'completed' })).toBe(1);
    expect(valueOf(first, 'loopgate_responses_total', { ...m1, status: 'failed' })).toBe(1);
    expect(valueOf(first, 'loopgate_responses_total', { ...other, status: 'completed' })).toBe(1);
    expect(['input', 'output', 'cached', 'reasoning'].map((type) => valueOf(first, 'loopgate_tokens_total', { ...m1, tenant: 't1', type }))).toEqual([10, 5, 2, 1]);
    expect(['input', 'output', 'cached', 'reasoning'].map((type) => valueOf(first, 'loopgate_tokens_total', { ...other, tenant: 'other', type }))).toEqual([7, 3, 0, 0]);
    const duration = 'loopgate_response_duration_seconds';
    expect(buckets(first, duration, m1, ['0.05', '0.1', '0.25', '0.5', '+Inf'])).toEqual([0, 1, 1, 2, 2]);
    expect(valueOf(first, `${duration}_sum`, m1)).toBeCloseTo(0.4, 12);
    expect(valueOf(first, `${duration}_count`, m1)).toBe(2);
    expect(buckets(first, duration, other, ['1', '2.5', '+Inf'])).toEqual([0, 1, 1]);
    expect(valueOf(first, 'loopgate_response_turns_count', m1)).toBe(2);
    expect(valueOf(first, 'loopgate_response_turns_sum', m1)).toBe(3);
    // A response that ran no turn is not a turns observation.
    expect(valueOf(first, 'loopgate_response_turns_count', other)).toBeUndefined();
    expect(valueOf(first, 'loopgate_response_time_to_first_token_seconds_count', m1)).toBe(1);

    // A second scrape with nothing new in between shows the same: nothing handed over twice.
    const second = await scrape(metrics);
    const own = (scraped: Scrape) => scraped.samples.filter((sample) => sample.name.startsWith('loopgate_'));
    expect(own(second)).toEqual(own(first));
    expect(own(first).length).toBeGreaterThan(50);

    metrics.request('POST', '/v1/responses', 200);
    metrics.request('POST', '/v1/responses', 499);
    metrics.responseEnded(ended({ durationMs: 40, usage: usage(1, 1, 0, 0) }), 3, 10);
    metrics.responseEnded(ended({ tenant: 'nobody', usage: usage(100, 0) }), 1, null);
    const third = await scrape(metrics);
    expect(valueOf(third, 'loopgate_http_requests_total', { method: 'POST', route: '/v1/responses', status: '200' })).toBe(3);
    expect(valueOf(third, 'loopgate_http_requests_total', { method: 'POST', route: '/v1/responses', status: '499' })).toBe(1);
    expect(valueOf(third, 'loopgate_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(valueOf(third, 'loopgate_responses_total', { ...m1, status: 'completed' })).toBe(3);
    expect(valueOf(third, 'loopgate_responses_total', { ...m1, status: 'failed' })).toBe(1);
    expect(['input', 'output', 'cached', 'reasoning'].map((type) => valueOf(third, 'loopgate_tokens_total', { ...m1, tenant: 't1', type }))).toEqual([11, 6, 2, 1]);
    expect(['input', 'output', 'cached', 'reasoning'].map((type) => valueOf(third, 'loopgate_tokens_total', { ...m1, tenant: 'other', type }))).toEqual([100, 0, 0, 0]);
    expect(buckets(third, duration, m1, ['0.025', '0.05', '0.1', '0.25', '0.5', '+Inf'])).toEqual([0, 1, 3, 3, 4, 4]);
    expect(valueOf(third, `${duration}_sum`, m1)).toBeCloseTo(0.54, 12);
    expect(valueOf(third, 'loopgate_response_turns_sum', m1)).toBe(7);

    // prom-client's own readers see the same numbers (its `get()` runs the same collect).
    const tokens = await metrics.registry.getSingleMetric('loopgate_tokens_total')!.get();
    expect(tokens.values.reduce((total, value) => total + value.value, 0)).toBe(11 + 6 + 2 + 1 + 7 + 3 + 100);
  });

  it('time store operations per operation, failed ones counted, across scrapes', async () => {
    const metrics = newMetrics();
    const meter = metrics.storeMeter('responses');
    await meter.time('put', async () => undefined);
    await meter.time('put', async () => undefined);
    await expect(meter.time('get', async () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    const first = await scrape(metrics);
    expect(valueOf(first, 'loopgate_store_operation_duration_seconds_count', { store: 'responses', operation: 'put' })).toBe(2);
    expect(valueOf(first, 'loopgate_store_operation_duration_seconds_count', { store: 'responses', operation: 'get' })).toBe(1);
    expect(valueOf(first, 'loopgate_store_operation_errors_total', { store: 'responses', operation: 'get' })).toBe(1);
    expect(valueOf(first, 'loopgate_store_operation_errors_total', { store: 'responses', operation: 'put' })).toBeUndefined();
    await expect(meter.time('get', async () => Promise.reject(new Error('gone')))).rejects.toThrow('gone');
    const second = await scrape(metrics);
    expect(valueOf(second, 'loopgate_store_operation_duration_seconds_count', { store: 'responses', operation: 'get' })).toBe(2);
    expect(valueOf(second, 'loopgate_store_operation_errors_total', { store: 'responses', operation: 'get' })).toBe(2);
  });
});

describe('AggregatedCounter', () => {
  const newCounter = () => {
    const registry = new Registry();
    return { registry, counter: new AggregatedCounter({ name: 'test_total', help: 'A test counter.', labelNames: ['kind'], registers: [registry] }) };
  };

  it('shows a series once it was added to, if only 0, and never before', async () => {
    const { registry, counter } = newCounter();
    const a = counter.series({ kind: 'a' });
    counter.series({ kind: 'b' });
    expect(await registry.metrics()).not.toContain('test_total{');
    a.inc(0);
    expect(await registry.metrics()).toContain('test_total{kind="a"} 0');
    expect(await registry.metrics()).not.toContain('kind="b"');
  });

  it('fails its caller on a value prom-client refuses, keeping what was added before', async () => {
    const { registry, counter } = newCounter();
    const a = counter.series({ kind: 'a' });
    a.inc(2);
    expect(() => a.inc(-1)).toThrow('It is not possible to decrease a counter');
    expect(() => a.inc(Infinity)).toThrow('Value is not a valid number');
    a.inc();
    expect(await registry.metrics()).toContain('test_total{kind="a"} 3');
  });
});
