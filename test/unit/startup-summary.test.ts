import { describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { maskSecrets, maskUrl } from '../../src/config/mask-secrets.ts';
import { describeStartup } from '../../src/config/startup-summary.ts';

const SECRET = 'canary-secret-5b1e';

const config = GatewayConfig.parse({
  server: { bodyLimitBytes: 1_000_000, shutdownGraceMs: 12_000 },
  providers: {
    openai: { type: 'openai-chat', baseUrl: 'https://llm.example/v1', apiKey: SECRET, queryParams: { 'subscription-key': SECRET, 'api-version': '2025-04-01-preview' } },
    claude: { type: 'anthropic', apiKey: SECRET },
  },
  defaultProvider: 'missing',
  store: { redisUrl: `redis://default:${SECRET}@redis.internal:6379/2`, keyPrefix: 'lg:', ttlSeconds: 60 },
  mcp: { servers: [{ name: 'docs', url: `https://mcp.example:8443/mcp?token=${SECRET}`, headers: { authorization: `Bearer ${SECRET}` } }] },
  auth: { apiKeys: [{ key: `${SECRET}-1`, tenant: 'team-a' }, { key: `${SECRET}-2`, tenant: 'team-a' }, { key: `${SECRET}-3`, tenant: 'team-b' }] },
  compaction: { key: Buffer.alloc(32, SECRET).toString('base64') },
  loop: { maxTurns: 7, deadlineMs: 90_000, toolTimeoutMs: 5_000 },
  metrics: { port: 9464, token: `${SECRET}-metrics` },
  tracing: { endpoint: `https://otel.example/v1/traces?api_key=${SECRET}`, headers: { 'x-honeycomb-team': SECRET } },
});

describe('describeStartup', () => {
  it('names version, address, providers, store, MCP servers, authentication and limits, and no secret', () => {
    const summary = describeStartup(config, { version: '1.2.3', address: { address: '127.0.0.1', family: 'IPv4', port: 8080 } });
    expect(summary).toEqual({
      version: '1.2.3',
      listening: 'http://127.0.0.1:8080',
      providers: [
        { name: 'openai', type: 'openai-chat', base_url: 'https://llm.example/v1' },
        { name: 'claude', type: 'anthropic', base_url: 'https://api.anthropic.com' },
      ],
      // "missing" is not configured: requests go to Anthropic, as the router does.
      default_provider: 'claude',
      default_model: null,
      store: { kind: 'redis', url: 'redis://default:***@redis.internal:6379/2', key_prefix: 'lg:', ttl_seconds: 60 },
      mcp_servers: [{ name: 'docs', origin: 'https://mcp.example:8443' }],
      auth: { enabled: true, keys: 3, tenants: 2 },
      compaction: { key: 'configured' },
      limits: { max_turns: 7, deadline_ms: 90_000, tool_timeout_ms: 5_000, body_limit_bytes: 1_000_000, request_timeout_ms: 300_000, shutdown_grace_ms: 12_000 },
      metrics: { enabled: true, path: '/metrics', port: 9464, token: true },
      tracing: { enabled: true, endpoint: 'https://otel.example/v1/traces?api_key=***', capture_content: false },
    });
    expect(JSON.stringify(summary)).not.toContain(SECRET);
  });

  it('describes the memory store, no authentication and an IPv6 address', () => {
    const summary = describeStartup(GatewayConfig.parse({}), { version: '0.0.0', address: { address: '::', family: 'IPv6', port: 9000 } });
    expect(summary).toMatchObject({
      listening: 'http://[::]:9000',
      providers: [],
      default_provider: null,
      store: { kind: 'memory', max_entries: 10_000, max_bytes: 536_870_912, ttl_seconds: 2_592_000 },
      mcp_servers: [],
      auth: { enabled: false, keys: 0, tenants: 0 },
      compaction: { key: 'generated' },
      metrics: { enabled: true, path: '/metrics', port: null, token: false },
    });
  });
});

describe('maskSecrets', () => {
  it('masks API keys, client keys, MCP headers and credentials in URLs, and keeps everything else', () => {
    const masked = maskSecrets(config);
    const text = JSON.stringify(masked);
    expect(text).not.toContain(SECRET);
    expect(masked.providers.openai).toMatchObject({ apiKey: '***', baseUrl: 'https://llm.example/v1', queryParams: { 'subscription-key': '***', 'api-version': '2025-04-01-preview' } });
    expect(masked.auth.apiKeys).toEqual([
      { key: '***', tenant: 'team-a', admin: false },
      { key: '***', tenant: 'team-a', admin: false },
      { key: '***', tenant: 'team-b', admin: false },
    ]);
    expect(masked.mcp.servers[0]).toMatchObject({ headers: { authorization: '***' }, url: 'https://mcp.example:8443/mcp?token=***' });
    expect(masked.store.redisUrl).toBe('redis://default:***@redis.internal:6379/2');
    expect(masked.compaction.key).toBe('***');
    expect(text).not.toContain(config.compaction.key!);
    expect(masked.loop).toEqual(config.loop);
    expect(maskSecrets(GatewayConfig.parse({ providers: { openai: { type: 'openai-chat', baseUrl: 'http://x/v1' } } })).providers.openai?.apiKey).toBeNull();
  });

  it('leaves URLs without credentials exactly as written', () => {
    expect(maskUrl('http://localhost:11434/v1')).toBe('http://localhost:11434/v1');
    expect(maskUrl('HTTP://Example.com')).toBe('HTTP://Example.com');
    expect(maskUrl('https://token-only@example.com/x')).toBe('https://***@example.com/x');
    expect(maskUrl('not a url')).toBe('not a url');
  });
});
