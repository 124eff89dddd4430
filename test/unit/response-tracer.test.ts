import { InMemorySpanExporter, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ExportResultCode } from '@opentelemetry/core';
import { describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { GatewayError, invalidRequest } from '../../src/errors/gateway-error.ts';
import type { LoopObserver, TraceCarrier } from '../../src/engine/loop-observer.ts';
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

/** One response with one model call, as the engine reports it. */
function runResponse(observer: LoopObserver, options: { failWith?: string } = {}): TraceCarrier {
  observer.responseStarted!({ responseId: 'resp_1', tenant: 'team-a', model: 'gpt-test', provider: 'openai', upstreamModel: 'gpt-test', stream: false, background: false, conversationId: 'conv_1', previousResponseId: null });
  const carrier: TraceCarrier = {};
  observer.modelCallStarted!({ turn: 1, provider: 'openai', request: turnRequest({ model: 'gpt-test', maxOutputTokens: 256, temperature: 0.2 }), trace: carrier });
  const error = options.failWith ? { code: 'upstream_error', message: options.failWith } : null;
  observer.modelCallEnded!({ turn: 1, provider: 'openai', model: 'gpt-test', usage: null, finish: error ? null : { reason: 'stop', raw: 'stop' }, error, responseId: null, responseModel: null, durationMs: 1, firstEventMs: null, output: { text: '', refusal: '', toolCalls: [] } });
  observer.responseEnded!({ response: { id: 'resp_1', status: error ? 'failed' : 'completed', incomplete_details: null, usage: null, error: error && { code: error.code, message: error.message } } as never });
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
    const started = { tenant: 'default', model: 'gpt-test', provider: 'openai', upstreamModel: 'gpt-test', stream: false, background: false, conversationId: null, previousResponseId: null };
    const clientMistake = tracing.observer(null);
    clientMistake.responseStarted!({ responseId: 'resp_a', ...started });
    clientMistake.responseRefused!({ responseId: 'resp_a', error: invalidRequest('The MCP server URL is not allowed.', 'tools[0].server_url', 'mcp_server_url_refused') });
    const outage = tracing.observer(null);
    outage.responseStarted!({ responseId: 'resp_b', ...started });
    outage.responseRefused!({ responseId: 'resp_b', error: new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message: 'The store is unavailable.' }) });
    await tracing.flush();
    const [refused, failed] = exporter.getFinishedSpans();
    expect([refused!.status.code, refused!.attributes['error.type'], refused!.attributes['loopgate.response.status']]).toEqual([0, 'mcp_server_url_refused', 'refused']);
    expect([failed!.status.code, failed!.attributes['error.type']]).toEqual([2, 'store_unavailable']);
  });

  it('ends calls the loop never finished when the response ends', async () => {
    const { tracing, exporter } = tracingWith();
    const observer = tracing.observer(null);
    observer.responseStarted!({ responseId: 'resp_2', tenant: 'default', model: 'gpt-test', provider: 'openai', upstreamModel: 'gpt-test', stream: true, background: false, conversationId: null, previousResponseId: null });
    observer.modelCallStarted!({ turn: 1, provider: 'openai', request: turnRequest(), trace: {} });
    observer.toolCallStarted!({ turn: 1, callId: 'c1', name: 'tools__add', executor: 'mcp', arguments: '{}', trace: {} });
    observer.responseEnded!({ response: { id: 'resp_2', status: 'cancelled', incomplete_details: { reason: 'cancelled' }, usage: null, error: null } as never });
    await tracing.flush();
    expect(exporter.getFinishedSpans().map((span) => span.name).sort()).toEqual(['chat test-model', 'execute_tool tools__add', 'invoke_agent']);
    expect(spanNamed(exporter.getFinishedSpans(), 'invoke_agent').attributes).toMatchObject({ 'loopgate.response.status': 'cancelled', 'loopgate.response.incomplete_reason': 'cancelled' });
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
});
