import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.ts';

describe('loadConfig', () => {
  it('reads the documented default file', () => {
    const config = loadConfig({});
    expect(config.server.port).toBe(8080);
    expect(config.providers.openai).toMatchObject({ type: 'openai-chat', baseUrl: 'https://api.openai.com/v1' });
    expect(config.loop.maxTurns).toBe(10);
    expect(config.mcp.servers).toEqual([]);
  });

  it('lets environment variables override the file', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
      OPENAI_API_KEY: 'sk-x',
      LOG_LEVEL: 'debug',
      DEFAULT_MODEL: 'qwen3',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      REDIS_URL: 'redis://127.0.0.1:6379',
      API_KEYS: '{"sk-team-a-123456": "team-a"}',
      MCP_SERVERS: '[{"name":"docs","url":"https://mcp.example/mcp","headers":{"x-key":"k"},"allowed_tools":["search"],"timeout_ms":5000}]',
      MCP_ALLOWED_URLS: 'http://10.0.0.5:9000/,https://internal.example/',
      MAX_TURNS: '4',
      PAUSED_STATUS: 'completed',
    });
    expect(config.server).toMatchObject({ port: 9000, host: '127.0.0.1', corsOrigins: ['https://a.example', 'https://b.example'] });
    expect(config.providers.openai).toMatchObject({ baseUrl: 'http://localhost:11434/v1', apiKey: 'sk-x' });
    expect(config.logLevel).toBe('debug');
    expect(config.defaultModel).toBe('qwen3');
    expect(config.store.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.auth.apiKeys).toEqual([{ key: 'sk-team-a-123456', tenant: 'team-a' }]);
    expect(config.mcp.servers).toEqual([{ name: 'docs', url: 'https://mcp.example/mcp', headers: { 'x-key': 'k' }, allowed_tools: ['search'], require_approval: 'never', timeout_ms: 5000 }]);
    expect(config.mcp.allowedUrls).toEqual(['http://10.0.0.5:9000/', 'https://internal.example/']);
    expect(config.loop).toMatchObject({ maxTurns: 4, pausedStatus: 'completed' });
  });

  it('fails loudly, naming the key, on a bad value', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/server\.port/);
    expect(() => loadConfig({ MCP_SERVERS: '{"name":"x"}' })).toThrow(/MCP_SERVERS must be a JSON array/);
    expect(() => loadConfig({ MCP_SERVERS: '[{"name":"x","url":"https://a/mcp","require_approval":"always"}]' })).toThrow(/mcp\.servers\.0\.require_approval/);
    expect(() => loadConfig({ API_KEYS: '["k"]' })).toThrow(/API_KEYS/);
  });
});
