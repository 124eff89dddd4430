import { describe, expect, it } from 'vitest';
import { loadConfig, resolveConfig } from '../../src/config/load-config.ts';
import { tracingEnabled } from '../../src/observability/tracing-settings.ts';

describe('tracing configuration', () => {
  it('is off by default, as shipped', () => {
    const { tracing } = loadConfig({});
    expect(tracing).toEqual({ enabled: null, endpoint: null, protocol: 'http/protobuf', headers: {}, serviceName: 'loopgate', sampleRatio: 1, captureContent: false });
    expect(tracingEnabled(tracing)).toBe(false);
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT turns it on, sending to <base>/v1/traces as OTLP says', () => {
    for (const base of ['http://collector:4318', 'http://collector:4318/']) {
      const { tracing } = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: base });
      expect(tracing.endpoint).toBe('http://collector:4318/v1/traces');
      expect(tracingEnabled(tracing)).toBe(true);
    }
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/base' }).tracing.endpoint).toBe('https://otel.example/base/v1/traces');
  });

  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is, and wins over the base URL', () => {
    const { tracing } = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom/path' });
    expect(tracing.endpoint).toBe('http://traces:4318/custom/path');
    expect(tracingEnabled(tracing)).toBe(true);
  });

  it('TRACING_ENABLED decides whatever the endpoint; true without one sends to the OTLP default', () => {
    expect(tracingEnabled(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', TRACING_ENABLED: 'false' }).tracing)).toBe(false);
    const on = loadConfig({ TRACING_ENABLED: 'true' }).tracing;
    expect(tracingEnabled(on)).toBe(true);
    expect(on.endpoint).toBeNull();
  });

  it('reads the protocol from OTLP\'s variables, the traces one winning, and refuses one it cannot send', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing.protocol).toBe('http/json');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).tracing.protocol).toBe('http/protobuf');
    const grpc = resolveConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(grpc.ok ? [] : grpc.problems.map((problem) => problem.message).join('\n')).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });

  it('reads the service name and the GenAI content switch', () => {
    const { tracing } = loadConfig({ OTEL_SERVICE_NAME: 'gateway-eu', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    expect(tracing).toMatchObject({ serviceName: 'gateway-eu', captureContent: true });
  });

  it('refuses an endpoint that is not an absolute http(s) URL, naming the variable', () => {
    const resolution = resolveConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318/v1/traces' });
    expect(resolution.ok).toBe(false);
    if (resolution.ok) return;
    expect(resolution.problems.map((problem) => problem.message).join('\n')).toMatch(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT/);
    const notBoolean = resolveConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', TRACING_ENABLED: 'maybe' });
    expect(notBoolean.ok ? [] : notBoolean.problems.map((problem) => problem.message)).toEqual(['TRACING_ENABLED must be true or false, got "maybe"']);
  });
});
