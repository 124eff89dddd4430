import { describe, expect, it } from 'vitest';
import { configuredSecrets } from '../../src/config/configured-secrets.ts';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { headerSecrets, SecretRedactor } from '../../src/util/secret-redactor.ts';
import { maskRefusedValue } from '../../src/config/mask-secrets.ts';
import { exporterHeaderSecrets } from '../../src/observability/tracing-settings.ts';

describe('SecretRedactor', () => {
  const redactor = new SecretRedactor(['sk-live-abc/def+"1"', 'sk-live-abc', 'short']);

  it('blanks each secret as written, as it reads inside JSON text and inside a URL; the longer secret whole', () => {
    expect(redactor.redact('key sk-live-abc/def+"1" and sk-live-abc')).toBe('key [redacted] and [redacted]');
    expect(redactor.redact(JSON.stringify({ message: 'key sk-live-abc/def+"1"' }))).toBe('{"message":"key [redacted]"}');
    expect(redactor.redact(`https://x.example/?k=${encodeURIComponent('sk-live-abc/def+"1"')}`)).toBe('https://x.example/?k=[redacted]');
  });

  it('leaves values too short to be credentials, and text without a secret, as they were', () => {
    expect(redactor.redact('a short answer')).toBe('a short answer');
    expect(SecretRedactor.none.active).toBe(false);
    expect(SecretRedactor.none.redact('sk-live-abc')).toBe('sk-live-abc');
  });

  it('cleans an error and its causes, message and stack, keeping the error itself', () => {
    const cause = new Error('sent sk-live-abc');
    const error = new TypeError('failed with sk-live-abc', { cause });
    expect(redactor.redactError(error)).toBe(error);
    expect([error.message, error.stack, cause.message, cause.stack].join('\n')).not.toContain('sk-live-abc');
  });

  it('takes a header value whole and the credential after its scheme', () => {
    const fromHeaders = new SecretRedactor(headerSecrets({ authorization: 'Bearer tok-12345678', 'x-api-key': 'key-87654321' }));
    expect(fromHeaders.redact('got tok-12345678, Bearer tok-12345678 and key-87654321')).toBe('got [redacted], [redacted] and [redacted]');
  });
});

describe('configuredSecrets', () => {
  it('finds every secret a configuration holds: provider and client keys, MCP headers, URL credentials', () => {
    const config = GatewayConfig.parse({
      providers: {
        openai: { type: 'openai-chat', baseUrl: 'https://llm.example/v1', apiKey: 'provider-key-1' },
        claude: { type: 'anthropic', apiKey: 'provider-key-2' },
      },
      store: { redisUrl: 'redis://default:redis%2Fpassword@redis.internal:6379/2' },
      mcp: { servers: [{ name: 'docs', url: 'https://mcp.example/mcp?token=query-token-1&page=intro-page', headers: { authorization: 'Bearer mcp-token-1' } }] },
      auth: { apiKeys: [{ key: 'client-key-1', tenant: 'team' }] },
      tracing: { endpoint: 'https://user:url-password-1@otel.example/v1/traces' },
    });
    (config.providers.openai as { queryParams: Record<string, string> }).queryParams = { 'subscription-key': 'query-param-key-1', code: 'function-key-1', 'api-version': '2025-04-01-preview' };
    const secrets = configuredSecrets(config);
    for (const secret of ['url-password-1', 'provider-key-1', 'provider-key-2', 'redis/password', 'query-token-1', 'Bearer mcp-token-1', 'mcp-token-1', 'client-key-1', 'query-param-key-1', 'function-key-1']) expect(secrets).toContain(secret);
    // Names and ordinary values are not secrets.
    for (const value of ['user', 'default', 'intro-page', 'team', 'docs', '2025-04-01-preview']) expect(secrets).not.toContain(value);
  });

  it("takes the trace exporter's own header variables' values, percent-encoded or not, and the credential after a scheme", () => {
    expect(exporterHeaderSecrets({ OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=otlp-key-1,authorization=Bearer%20otlp-token-2', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-honeycomb-team=otlp-key-3' })).toEqual(
      expect.arrayContaining(['otlp-key-1', 'Bearer otlp-token-2', 'otlp-token-2', 'otlp-key-3']),
    );
    expect(exporterHeaderSecrets({})).toEqual([]);
  });

  it("masks credentials in a refused value written without its URL's scheme", () => {
    expect(maskRefusedValue('default:redis-password-1@127.0.0.1:6379')).toBe('***@127.0.0.1:6379');
    expect(maskRefusedValue('//:redis-password-1@127.0.0.1:6379')).toBe('//***@127.0.0.1:6379');
    expect(maskRefusedValue('redis://user:redis-password-1@host:6379')).toBe('redis://***@host:6379');
    expect(maskRefusedValue('https://fn.example/api?code=function-key-1')).toBe('https://fn.example/api?code=***');
  });
});
