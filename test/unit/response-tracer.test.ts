import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ExportResultCode } from '@opentelemetry/core';
import { describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import type { LoopObserver, ResponseStartedEvent, TraceCarrier } from '../../src/engine/loop-observer.ts';
import { ReportingExporter } from '../../src/observability/reporting-exporter.ts';
import { Tracing } from '../../src/observability/tracing.ts';
import { SecretRedactor } from '../../src/util/secret-redactor.ts';
import { turnRequest } from '../support/turn-request.ts';

const SECRET = 'sk-upstream-canary-91f2';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

function tracingWith(settings: Record<string, unknown> = {}): { tracing: Tracing; exporter: InMemorySpanExporter } {
  const config = GatewayConfig.parse({ providers: { openai: { type: 'openai-chat', baseUrl: 'https://llm.example:8443/v1', apiKey: SECRET } }, tracing: { enabled: true, ...settings } });
  const exporter = new InMemorySpanExporter();
  const tracing = Tracing.create({ config: config.tracing, providers: config.providers, secrets: new SecretRedactor([SECRET]), log: { warn: () => {}, info: () => {} }, exporter })!;
  return { tracing, exporter };
}

/** How the engine starts a response: who it is for, where it runs, when the engine took it. */
function startedEvent(fields: Partial<ResponseStartedEvent> = {}): ResponseStartedEvent {
  return { responseId: 'resp_1', tenant: 'default', model: 'gpt-test', provider: 'openai', upstreamModel: 'gpt-test', stream: false, background: false, conversationId: null, previousResponseId: null, startedAt: performance.now(), ...fields };
}

/** One response with one model call, as the engine reports it. */
function runResponse(observer: LoopObserver, options: { failWith?: string } = {}): TraceCarrier {
  const started = startedEvent({ tenant: 'team-a', conversationId: 'conv_1' });
  observer.responseStarted!(started);
  const carrier: TraceCarrier = {};
  observer.modelCallStarted!({ turn: 1, provider: 'openai', request: turnRequest({ model: 'gpt-test', maxOutputTokens: 256, temperature: 0.2 }), trace: carrier });
  const error = options.failWith ? { code: 'upstream_error', message: options.failWith } : null;
  observer.modelCallEnded!({ turn: 1, provider: 'openai', model: 'gpt-test', usage: null, finish: error ? null : { reason: 'stop', raw: 'stop' }, error, refusedAttempts: [], responseId: null, responseModel: null, durationMs: 1, firstEventMs: null, output: { text: '', refusal: '', toolCalls: [] } });
  observer.responseEnded!({ ...started, status: error ? 'failed' : 'completed', errorCode: error?.code ?? null, error, incompleteReason: null, usage: null, toolCalls: 0, durationMs: 2 });
  return carrier;
}

const spanNamed = (spans: ReadableSpan[], name: string) => spans.find((span) => span.name === name)!;

describe('ResponseTracer', () => {
  it('writes request settings, the upstream address and the conversation on the spans', async () => {
    const { tracing, exporter } = tracingWith();
    runResponse(tracing.observer(null));
    await tracing.flush();
    const spans = exporter.getFinishedSpans();
    expect(spanNamed(spans, 'invoke_agent').attributes).toMatchObject({ 'gen_ai.conversation.id': 'conv_1', 'loopgate.tenant': 'team-a', 'gen_ai.provider.name': 'openai' });
    expect(spanNamed(spans, 'chat gpt-test').attributes).toMatchObject({ 'gen_ai.request.max_tokens': 256, 'gen_ai.request.temperature': 0.2, 'server.address': 'llm.example', 'server.port': 8443 });
    expect(spanNamed(spans, 'invoke_agent').resource.attributes['service.version']).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('an unsampled client trace records nothing, and still passes its trace on, unsampled', async () => {
    const { tracing, exporter } = tracingWith();
    const carrier = runResponse(tracing.observer({ traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-00` }));
    await tracing.flush();
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(carrier.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
  });

  it('sampleRatio 0 keeps no trace that starts here, but a sampled client trace is kept', async () => {
    const { tracing, exporter } = tracingWith({ sampleRatio: 0 });
    runResponse(tracing.observer(null));
    await tracing.flush();
    expect(exporter.getFinishedSpans()).toEqual([]);
    runResponse(tracing.observer({ traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` }));
    await tracing.flush();
    expect(exporter.getFinishedSpans().map((span) => span.spanContext().traceId)).toEqual([TRACE_ID, TRACE_ID]);
  });

  it('blanks configured secrets out of error messages', async () => {
    const { tracing, exporter } = tracingWith();
    runResponse(tracing.observer(null), { failWith: `upstream said: invalid key ${SECRET}` });
    await tracing.flush();
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    for (const span of spans) {
      expect(span.status).toEqual({ code: 2, message: 'upstream said: invalid key [redacted]' });
      expect(span.attributes['error.type']).toBe('upstream_error');
    }
  });

  it('a request the client got wrong is refused without an error status; a gateway failure has one', async () => {
    const { tracing, exporter } = tracingWith();
    const clientMistake = tracing.observer(null);
    const mistaken = startedEvent({ responseId: 'resp_a' });
    clientMistake.responseStarted!(mistaken);
    const tooLong = { code: 'context_length_exceeded', message: 'The input is longer than the model takes.' };
    clientMistake.responseRefused!({ ...mistaken, error: tooLong, errorCode: tooLong.code, httpStatus: 400, usage: null, durationMs: 1 });
    const outage = tracing.observer(null);
    const failing = startedEvent({ responseId: 'resp_b' });
    outage.responseStarted!(failing);
    const unavailable = { code: 'store_unavailable', message: 'The store is unavailable.' };
    outage.responseRefused!({ ...failing, error: unavailable, errorCode: unavailable.code, httpStatus: 503, usage: null, durationMs: 1 });
    await tracing.flush();
    const [refused, failed] = exporter.getFinishedSpans();
    expect([refused!.status.code, refused!.attributes['error.type'], refused!.attributes['loopgate.response.status']]).toEqual([0, 'context_length_exceeded', 'refused']);
    expect([failed!.status.code, failed!.attributes['error.type']]).toEqual([2, 'store_unavailable']);
  });

  it("an upstream's error code quoting a secret is blanked in error.type too, and bounded", async () => {
    const { tracing, exporter } = tracingWith();
    const observer = tracing.observer(null);
    const started = startedEvent({ responseId: 'resp_c' });
    observer.responseStarted!(started);
    const echoed = { code: `bad_${SECRET}_${'x'.repeat(500)}`, message: 'refused' };
    observer.responseRefused!({ ...started, error: echoed, errorCode: echoed.code, httpStatus: 400, usage: null, durationMs: 1 });
    await tracing.flush();
    const type = String(exporter.getFinishedSpans()[0]!.attributes['error.type']);
    expect(type.startsWith('bad_[redacted]_x')).toBe(true);
    expect(type.length).toBe(128);
  });

  it('the response span starts when the engine took the request (conversation and tool listing included), not when the response started', async () => {
    const { tracing, exporter } = tracingWith();
    const observer = tracing.observer(null);
    const started = startedEvent({ startedAt: performance.now() - 250 });
    const before = Date.now();
    observer.responseStarted!(started);
    observer.responseEnded!({ ...started, status: 'completed', errorCode: null, error: null, incompleteReason: null, usage: null, toolCalls: 0, durationMs: 250 });
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    const startMs = span!.startTime[0] * 1000 + span!.startTime[1] / 1e6;
    expect(before - startMs).toBeGreaterThanOrEqual(240);
    expect(before - startMs).toBeLessThan(1_000);
  });

  it('ends calls the loop never finished when the response ends', async () => {
    const { tracing, exporter } = tracingWith();
    const observer = tracing.observer(null);
    const started = startedEvent({ responseId: 'resp_2', stream: true });
    observer.responseStarted!(started);
    observer.modelCallStarted!({ turn: 1, provider: 'openai', request: turnRequest(), trace: {} });
    observer.toolCallStarted!({ turn: 1, callId: 'c1', itemId: 'mcp_1', name: 'tools__add', executor: 'mcp', arguments: '{}', trace: {} });
    observer.responseEnded!({ ...started, status: 'cancelled', errorCode: null, error: null, incompleteReason: 'cancelled', usage: null, toolCalls: 0, durationMs: 1 });
    await tracing.flush();
    expect(exporter.getFinishedSpans().map((span) => span.name).sort()).toEqual(['chat test-model', 'execute_tool tools__add', 'invoke_agent']);
    expect(spanNamed(exporter.getFinishedSpans(), 'invoke_agent').attributes).toMatchObject({ 'loopgate.response.status': 'cancelled', 'loopgate.response.incomplete_reason': 'cancelled' });
    // The model's call id, and the id the client finds the call under (its mcp_call's).
    expect(spanNamed(exporter.getFinishedSpans(), 'execute_tool tools__add').attributes).toMatchObject({ 'gen_ai.tool.call.id': 'c1', 'loopgate.tool.item_id': 'mcp_1' });
  });
});

describe('tool spans', () => {
  it("a call the gateway timed out says so on its span's status, as the client reads it (not the JSON the model is given), capture or not: the error is the gateway's, no content", async () => {
    const { tracing, exporter } = tracingWith();
    const observer = tracing.observer(null);
    const started = startedEvent();
    observer.responseStarted!(started);
    observer.toolCallStarted!({ turn: 1, callId: 'c1', itemId: 'c1', name: 'tools__sleep', executor: 'mcp', arguments: '{}', trace: {} });
    observer.toolCallEnded!({ turn: 1, callId: 'c1', name: 'tools__sleep', executor: 'mcp', server: 'tools', output: '{"error":"The tool \'tools__sleep\' did not finish within 1000 ms."}', error: '{"error":"The tool \'tools__sleep\' did not finish within 1000 ms."}', unfinished: true, durationMs: 1000 });
    observer.responseEnded!({ ...started, status: 'completed', errorCode: null, error: null, incompleteReason: null, usage: null, toolCalls: 1, durationMs: 2 });
    await tracing.flush();
    expect(spanNamed(exporter.getFinishedSpans(), 'execute_tool tools__sleep').status.message).toBe("The tool 'tools__sleep' did not finish within 1000 ms.");
  });
});

describe('ReportingExporter', () => {
  it('warns once while exports fail, and says when they work again', () => {
    const lines: { level: string; fields: Record<string, unknown> }[] = [];
    let failing = true;
    const inner: SpanExporter = {
      export: (_spans, done) => done(failing ? { code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED') } : { code: ExportResultCode.SUCCESS }),
      shutdown: async () => {},
    };
    const exporter = new ReportingExporter(inner, { warn: (fields) => lines.push({ level: 'warn', fields }), info: (fields) => lines.push({ level: 'info', fields }) }, 'https://otel.example/v1/traces?api_key=secret');
    const results: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) exporter.export([{} as ReadableSpan, {} as ReadableSpan], (result) => results.push(result.code));
    failing = false;
    exporter.export([{} as ReadableSpan], (result) => results.push(result.code));
    exporter.export([{} as ReadableSpan], (result) => results.push(result.code));
    expect(results).toEqual([ExportResultCode.FAILED, ExportResultCode.FAILED, ExportResultCode.FAILED, ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
    expect(lines).toEqual([
      { level: 'warn', fields: { endpoint: 'https://otel.example/v1/traces?api_key=***', dropped_spans: 2, error: 'connect ECONNREFUSED' } },
      { level: 'info', fields: { endpoint: 'https://otel.example/v1/traces?api_key=***', dropped_spans: 6 } },
    ]);
  });

  it('a slow export that fails only after exports were said to work again is the outage already told: no new warning', () => {
    const lines: { level: string; message: string }[] = [];
    const pending: ((result: { code: ExportResultCode; error?: Error }) => void)[] = [];
    const inner: SpanExporter = { export: (_spans, done) => void pending.push(done), shutdown: async () => {} };
    const exporter = new ReportingExporter(inner, { warn: (_fields, message) => lines.push({ level: 'warn', message }), info: (_fields, message) => lines.push({ level: 'info', message }) }, 'https://otel.example/v1/traces');
    const send = () => exporter.export([{} as ReadableSpan], () => {});
    send(); // hangs, sent during the outage
    send();
    pending[1]!({ code: ExportResultCode.FAILED, error: new Error('timeout') });
    send();
    pending[2]!({ code: ExportResultCode.SUCCESS });
    pending[0]!({ code: ExportResultCode.FAILED, error: new Error('timeout') });
    expect(lines).toEqual([
      { level: 'warn', message: 'tracing: spans could not be exported' },
      { level: 'info', message: 'tracing: exporting spans again' },
    ]);
  });
});

describe('ReportingExporter behind a collector that refuses under load', () => {
  it('the full queue is said first, then the failed export with its reason (not hidden behind the first line for a minute), and at shutdown the spans lost since the last line, those still on their way included', async () => {
    const lines: { message: string; fields: Record<string, unknown> }[] = [];
    const pending: ((result: { code: ExportResultCode; error?: Error }) => void)[] = [];
    const inner: SpanExporter = { export: (_spans, done) => void pending.push(done), shutdown: async () => {} };
    const exporter = new ReportingExporter(inner, { warn: (fields, message) => lines.push({ message, fields }), info: (fields, message) => lines.push({ message, fields }) }, 'https://otel.example/v1/traces');
    exporter.export([{} as ReadableSpan, {} as ReadableSpan], () => {});
    exporter.queueFull(1);
    pending[0]!({ code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED 127.0.0.1:4318') });
    exporter.queueFull(500);
    // The final flush, given up on while its export still retries: its spans are lost as well.
    exporter.export([{} as ReadableSpan, {} as ReadableSpan, {} as ReadableSpan], () => {});
    await exporter.shutdown();
    exporter.reportLoss();
    expect(lines).toEqual([
      { message: 'tracing: spans dropped, the export queue is full (the collector is slow or does not answer)', fields: { endpoint: 'https://otel.example/v1/traces', dropped_spans: 1 } },
      { message: 'tracing: spans could not be exported', fields: { endpoint: 'https://otel.example/v1/traces', dropped_spans: 3, error: 'connect ECONNREFUSED 127.0.0.1:4318' } },
      { message: 'tracing: spans lost before shutdown', fields: { endpoint: 'https://otel.example/v1/traces', dropped_spans: 506 } },
    ]);
  });
});

/** Tracing on, exporting to a collector that never answers; the warn lines it writes. */
function tracingBehindHungCollector(): { tracing: Tracing; lines: { message: string; fields: Record<string, unknown> }[] } {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const hung: SpanExporter = { export: () => {}, shutdown: async () => {} };
  const config = GatewayConfig.parse({ providers: { openai: { type: 'openai-chat', baseUrl: 'https://llm.example/v1', apiKey: SECRET } }, tracing: { enabled: true } });
  const tracing = Tracing.create({ config: config.tracing, providers: config.providers, secrets: new SecretRedactor([SECRET]), log: { warn: (fields, message) => lines.push({ message, fields }), info: () => {} }, exporter: hung })!;
  return { tracing, lines };
}

describe('tracing shut down behind a collector that does not answer', () => {
  it('says the spans it could not export, those of the final flush given up on included', async () => {
    const { tracing, lines } = tracingBehindHungCollector();
    for (let index = 0; index < 3; index++) runResponse(tracing.observer(null));
    await tracing.shutdown();
    expect(lines).toEqual([{ message: 'tracing: spans lost before shutdown', fields: { endpoint: expect.any(String), dropped_spans: 6 } }]);
  }, 15_000);
});

describe('spans the batch queue drops', () => {
  it('behind a collector that does not answer, the spans the full queue drops are said, though no export has failed yet', async () => {
    const { tracing, lines } = tracingBehindHungCollector();
    // 3,000 responses of two spans each: one batch of 512 goes out (and hangs), the queue holds 2,048, the rest is dropped.
    for (let index = 0; index < 3_000; index++) runResponse(tracing.observer(null));
    expect(lines).toEqual([{ message: 'tracing: spans dropped, the export queue is full (the collector is slow or does not answer)', fields: { endpoint: expect.any(String), dropped_spans: 1 } }]);
  });
});
