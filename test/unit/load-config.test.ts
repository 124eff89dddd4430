import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeCompactionKey } from '../../src/config/compaction-key.ts';
import { ConfigurationError } from '../../src/config/config-problem.ts';
import { effectiveDefaultProvider } from '../../src/config/default-provider.ts';
import { GatewayConfig, loadConfig, resolveConfig, type ConfigResolution } from '../../src/config/load-config.ts';

const directory = mkdtempSync(join(tmpdir(), 'loopgate-config-'));
let files = 0;

/** Writes a configuration file and returns its path. */
function configFile(text: string): string {
  const path = join(directory, `config-${++files}.jsonc`);
  writeFileSync(path, text);
  return path;
}

function problemsOf(resolution: ConfigResolution): string[] {
  if (resolution.ok) throw new Error(`expected problems, the configuration was valid`);
  return resolution.problems.map((problem) => problem.message);
}

function warningsOf(resolution: ConfigResolution): string[] {
  return resolution.warnings.map((warning) => warning.message);
}

describe('loadConfig', () => {
  it('reads the documented default file', () => {
    const config = loadConfig({});
    expect(config.server.port).toBe(8080);
    expect(config.providers.openai).toMatchObject({ type: 'openai-chat', baseUrl: 'https://api.openai.com/v1' });
    expect(config.loop.maxTurns).toBe(10);
    expect(config.mcp.servers).toEqual([]);
    expect(resolveConfig({ OPENAI_API_KEY: 'sk-1' }).warnings).toEqual([]);
    // With nothing set, it points at OpenAI without a key: said at start-up, rather than met as every call's 502.
    expect(warningsOf(resolveConfig({}))).toEqual([expect.stringMatching(/providers\.openai has no apiKey, and api\.openai\.com refuses every call without one/)]);
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
      MCP_SERVERS: '[{"name":"docs","url":"https://mcp.example/mcp","headers":{"x-key":"k"},"allowedTools":["search"],"timeoutMs":5000}]',
      MCP_ALLOWED_URLS: 'http://10.0.0.5:9000/,https://internal.example/',
      MAX_TURNS: '4',
      PAUSED_STATUS: 'completed',
    });
    expect(config.server).toMatchObject({ port: 9000, host: '127.0.0.1', corsOrigins: ['https://a.example', 'https://b.example'] });
    expect(config.providers.openai).toMatchObject({ baseUrl: 'http://localhost:11434/v1', apiKey: 'sk-x' });
    expect(config.logLevel).toBe('debug');
    expect(config.defaultModel).toBe('qwen3');
    expect(config.store.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.auth.apiKeys).toEqual([{ key: 'sk-team-a-123456', tenant: 'team-a', admin: false }]);
    expect(config.mcp.servers).toEqual([{ name: 'docs', url: 'https://mcp.example/mcp', headers: { 'x-key': 'k' }, allowedTools: ['search'], requireApproval: 'never', timeoutMs: 5000 }]);
    expect(config.mcp.allowedUrls).toEqual(['http://10.0.0.5:9000/', 'https://internal.example/']);
    expect(config.loop).toMatchObject({ maxTurns: 4, pausedStatus: 'completed' });
  });

  it('reads COMPACTION_KEY as 32 bytes in hex or base64 (standard or URL-safe), and refuses anything else without repeating it', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, index) => index * 7 + 250));
    for (const text of [bytes.toString('hex'), bytes.toString('hex').toUpperCase(), bytes.toString('base64'), bytes.toString('base64url')]) {
      expect(decodeCompactionKey(text)).toEqual(bytes);
      expect(loadConfig({ COMPACTION_KEY: text }).compaction.key).toBe(text);
    }
    expect(loadConfig({}).compaction.key).toBeNull();
    const secret = 'sk-canary-compaction-7f3a';
    for (const text of [secret, bytes.subarray(1).toString('base64'), `${bytes.toString('hex')}00`, Buffer.concat([bytes, bytes]).toString('base64')]) {
      expect(decodeCompactionKey(text)).toBeNull();
      const problems = problemsOf(resolveConfig({ COMPACTION_KEY: text }));
      expect(problems).toEqual(['COMPACTION_KEY is invalid (must be 32 random bytes written as 64 hex digits or as base64, e.g. from `openssl rand -base64 32`)']);
      expect(problems.join('\n')).not.toContain(text);
    }
  });

  it('treats empty variables as unset, except lists, where empty means none', () => {
    const config = loadConfig({ PORT: '', OPENAI_API_KEY: '', CORS_ORIGINS: '' });
    expect(config.server.port).toBe(8080);
    expect(config.providers.openai?.apiKey).toBeNull();
    expect(config.server.corsOrigins).toEqual([]);
  });

  it('the only provider configured serves every model name, whatever its name; several with none the default is a warning naming them', () => {
    const only = resolveConfig({ LOOPGATE_CONFIG: configFile('{ "providers": { "local": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:11434/v1" } } }') });
    expect(only.ok && warningsOf(only)).toEqual([]);
    expect(only.ok && effectiveDefaultProvider(only.config.defaultProvider, only.config.providers)).toBe('local');
    const file = configFile('{ "providers": { "local": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:11434/v1" }, "other": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:8000/v1" } } }');
    const several = resolveConfig({ LOOPGATE_CONFIG: file });
    expect(several.ok).toBe(true);
    expect(warningsOf(several)).toEqual([expect.stringMatching(/providers has no default: model names not in "models" will be refused .* set defaultProvider \(DEFAULT_PROVIDER\) to one of local, other$/)]);
    expect(warningsOf(resolveConfig({ LOOPGATE_CONFIG: file, DEFAULT_PROVIDER: 'other' }))).toEqual([]);
    // There, a default model nothing serves would have every request that names no model refused: a start-up problem.
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file, DEFAULT_MODEL: 'slowpoke' }))).toEqual([expect.stringMatching(/^DEFAULT_MODEL names the model "slowpoke", which no provider serves/)]);
    expect(resolveConfig({ LOOPGATE_CONFIG: file, DEFAULT_MODEL: 'slowpoke', DEFAULT_PROVIDER: 'other' }).ok).toBe(true);
  });

  it('one API key under two entries is refused, without repeating the key', () => {
    const file = configFile('{ "auth": { "apiKeys": [{ "key": "sk-same-0123456789", "tenant": "team-a" }, { "key": "sk-same-0123456789", "tenant": "team-b", "admin": true }] } }');
    const problems = problemsOf(resolveConfig({ LOOPGATE_CONFIG: file }));
    expect(problems).toEqual([expect.stringMatching(/auth\.apiKeys\[1\]\.key is the key of entry 0 too; each entry needs its own key/)]);
    expect(problems[0]).not.toContain('sk-same');
  });

  it('a URL refused because its credentials break it (a password holding #, / or @) is repeated with them masked', () => {
    const problems = problemsOf(
      resolveConfig({
        REDIS_URL: 'redis://:hunter2#secret@localhost:6379',
        OPENAI_BASE_URL: 'http://user:hunter2secret@localhost:abc/v1?api_key=hunter2key',
        MCP_SERVERS: JSON.stringify([{ name: 'docs', url: 'http://u:p@ss-hunter2@mcp.example:xx/mcp' }]),
      }),
    );
    expect(problems).toHaveLength(3);
    for (const problem of problems) {
      expect(problem).not.toMatch(/hunter2|p@ss/);
      expect(problem).toContain('***@');
    }
  });

  it("an MCP server URL with a user name or password (which fetch never sends) is refused, pointing at headers, without repeating the password", () => {
    const problems = problemsOf(resolveConfig({ MCP_SERVERS: JSON.stringify([{ name: 'docs', url: 'https://user:long-password-4711@mcp.example/mcp' }]) }));
    expect(problems).toEqual([expect.stringContaining('give them in headers instead')]);
    expect(problems[0]).toContain('MCP_SERVERS[0].url');
    expect(problems[0]).not.toContain('long-password-4711');
  });

  it('a duration longer than a Node timer keeps (a value meant as "never") is refused, where it fired at once and closed every socket', () => {
    expect(problemsOf(resolveConfig({ WEBSOCKET_MAX_CONNECTION_MS: '2592000000', SSE_KEEPALIVE_MS: '2592000000' })).sort()).toEqual([
      'SSE_KEEPALIVE_MS must be an integer from 1 to 2147483647, got "2592000000"',
      'WEBSOCKET_MAX_CONNECTION_MS must be an integer from 1 to 2147483647, got "2592000000"',
    ]);
  });

  it('takes CORS origins as browsers send them, * for any; one that no Origin could ever equal is a problem naming the origin meant', () => {
    expect(loadConfig({ CORS_ORIGINS: '*' }).server.corsOrigins).toEqual(['*']);
    expect(loadConfig({ CORS_ORIGINS: 'http://localhost:3000,chrome-extension://abcdef' }).server.corsOrigins).toEqual(['http://localhost:3000', 'chrome-extension://abcdef']);
    expect(problemsOf(resolveConfig({ CORS_ORIGINS: 'https://app.example.com/,https://App.Example.com:443,app.example.com' }))).toEqual([
      'CORS_ORIGINS[0] is invalid (not an origin as browsers send it (scheme, host and port, nothing after): use "https://app.example.com"), got "https://app.example.com/"',
      'CORS_ORIGINS[1] is invalid (not an origin as browsers send it (scheme, host and port, nothing after): use "https://app.example.com"), got "https://App.Example.com:443"',
      'CORS_ORIGINS[2] is invalid (not an origin such as https://app.example.com (scheme, host and port), nor * for any), got "app.example.com"',
    ]);
  });

  it('takes level names in any case (LOG_LEVEL=INFO), in the environment and in the file', () => {
    expect(loadConfig({ LOG_LEVEL: 'INFO' }).logLevel).toBe('info');
    expect(loadConfig({ LOOPGATE_CONFIG: configFile('{ "logLevel": "Debug" }') }).logLevel).toBe('debug');
  });
});

describe('variables loopgate does not read', () => {
  const warningsOf = (env: NodeJS.ProcessEnv) => resolveConfig(env).warnings.map((warning) => warning.message);

  it('a near miss of one of its names, or another tool\'s name for one of its settings, is a warning naming the variable meant', () => {
    expect(warningsOf({ OPENAI_API_KEY: 'sk-1', OPENAI_BASEURL: 'http://127.0.0.1:1/v1', REDIS_URI: 'redis://127.0.0.1:6379', MAX_TURN: '3', LogLevel: 'debug', OPENAI_API_BASE: 'http://127.0.0.1:2/v1' }).sort()).toEqual(
      [
        'OPENAI_BASEURL is set, but loopgate reads no such variable; did you mean OPENAI_BASE_URL?',
        'REDIS_URI is set, but loopgate reads no such variable; did you mean REDIS_URL?',
        'MAX_TURN is set, but loopgate reads no such variable; did you mean MAX_TURNS?',
        'LogLevel is set, but loopgate reads no such variable; did you mean LOG_LEVEL?',
        "OPENAI_API_BASE is set, but loopgate reads OPENAI_BASE_URL for it (OPENAI_API_BASE is other tools' name): set OPENAI_BASE_URL",
      ].sort(),
    );
  });

  it('says nothing of the usual environment, of other tools\' variables, nor when the name meant is set as well', () => {
    expect(warningsOf({ OPENAI_API_KEY: 'sk-1', HOME: '/root', HOSTNAME: 'vm', PATH: '/usr/bin', LOGNAME: 'root', TERM: 'xterm', OPENAI_ORG_ID: 'org', OPENAI_API_TYPE: 'azure', REDIS_HOST: 'cache', NODE_ENV: 'production' })).toEqual([]);
    expect(warningsOf({ OPENAI_API_KEY: 'sk-1', OPENAI_API_BASE: 'http://127.0.0.1:2/v1', OPENAI_BASE_URL: 'http://127.0.0.1:3/v1' })).toEqual([]);
  });
});

describe('start-up validation', () => {
  it('reports every problem at once, each naming its environment variable and what it must be', () => {
    const resolution = resolveConfig({
      PORT: 'abc',
      MAX_TURNS: '0',
      SHUTDOWN_GRACE_MS: '-5',
      STORE_TTL_SECONDS: '1.5',
      OPENAI_BASE_URL: 'localhost:11434/v1',
      REDIS_URL: 'http://127.0.0.1:6379',
      LOG_LEVEL: 'loud',
      DEFAULT_PROVIDER: 'nope',
    });
    expect(problemsOf(resolution).sort()).toEqual(
      [
        'PORT must be an integer from 0 to 65535, got "abc"',
        'MAX_TURNS must be a positive integer, got "0"',
        'SHUTDOWN_GRACE_MS must be an integer from 0 to 2147483647, got "-5"',
        'STORE_TTL_SECONDS must be a positive integer, got "1.5"',
        'OPENAI_BASE_URL must be an absolute http:// or https:// URL such as http://localhost:11434/v1, got "localhost:11434/v1"',
        'REDIS_URL must be an absolute redis:// or rediss:// URL such as redis://localhost:6379, got "http://127.0.0.1:6379"',
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
        'DEFAULT_PROVIDER names the provider "nope", which is not configured (configured: openai)',
      ].sort(),
    );
    expect(resolution.ok ? [] : resolution.problems.map((problem) => problem.source).sort()).toEqual(
      ['PORT', 'MAX_TURNS', 'SHUTDOWN_GRACE_MS', 'STORE_TTL_SECONDS', 'OPENAI_BASE_URL', 'REDIS_URL', 'LOG_LEVEL', 'DEFAULT_PROVIDER'].sort(),
    );
  });

  it('refuses what a base URL would carry in vain: a query, credentials, a fragment, naming where each belongs', () => {
    expect(problemsOf(resolveConfig({ OPENAI_BASE_URL: 'https://my.openai.azure.com/openai/v1?api-version=2024-10-21' }))).toEqual([
      'OPENAI_BASE_URL is invalid (a query in a base URL is never sent: give its parameters as the provider\'s queryParams (api-version as apiVersion) and leave the query out of the URL), got "https://my.openai.azure.com/openai/v1?api-version=2024-10-21"',
    ]);
    expect(problemsOf(resolveConfig({ OPENAI_BASE_URL: 'http://user:s3cret@127.0.0.1:8000/v1' })).join('\n')).toMatch(/credentials in a base URL are never sent: give the key as the provider's apiKey/);
    const file = configFile(JSON.stringify({ providers: { claude: { type: 'anthropic', baseUrl: 'https://proxy.example/anthropic#x' } } }));
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file })).join('\n')).toMatch(/providers\.claude\.baseUrl.*a base URL has no fragment/);
  });

  it('names the file with line and column for a syntax error', () => {
    const file = configFile('{\n  "server": {\n    "port": 8080\n    "host": "127.0.0.1"\n  }\n}\n');
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file }))).toEqual([`${file}:4:5: syntax error: comma expected`]);
  });

  it('refuses a key given twice in one object, naming both places (JSON would keep the last silently)', () => {
    const file = configFile(['{', '  "providers": {', '    "local": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:11434/v1" },', '  },', '  "server": { "port": 8080 },', '  "providers": { "other": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:8000/v1", "baseUrl": "http://127.0.0.1:8001/v1" } },', '}'].join('\n'));
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file }))).toEqual([
      `${file}:6:3: "providers" is given twice in the same object (first at ${file}:2:3); only one can apply, remove the other`,
      `${file}:6:91: "baseUrl" is given twice in the same object (first at ${file}:6:52); only one can apply, remove the other`,
    ]);
    // The same key in different objects is no duplicate.
    expect(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "server": { "port": 8080 }, "metrics": { "port": 9100 } }') }).ok).toBe(true);
  });

  it('reports environment problems beside a syntax error, not follow-ups of the broken file', () => {
    const file = configFile('{ "server": { "port": 8080, } ');
    const problems = problemsOf(resolveConfig({ LOOPGATE_CONFIG: file, PORT: 'x', DEFAULT_PROVIDER: 'anything' }));
    expect(problems).toEqual([`${file}:1:31: syntax error: close brace expected`, 'PORT must be an integer from 0 to 65535, got "x"']);
  });

  it('names file:line:column and the key path for each bad value in the file', () => {
    const file = configFile(
      [
        '{',
        '  // comments are fine',
        '  "server": { "port": 70000 },',
        '  "providers": {',
        '    "local": { "type": "openai-chat", "baseUrl": "localhost:11434/v1" },',
        '    "other": { "type": "bogus" },',
        '  },',
        '  "store": { "redisUrl": "redis//oops" },',
        '}',
      ].join('\n'),
    );
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file }))).toEqual([
      `${file}:3:23: server.port must be an integer from 0 to 65535, got 70000`,
      `${file}:5:50: providers.local.baseUrl must be an absolute http:// or https:// URL such as http://localhost:11434/v1, got "localhost:11434/v1"`,
      `${file}:6:24: providers.other.type must be "openai-chat" or "openai-responses" or "anthropic" or "gemini", got "bogus"`,
      `${file}:8:26: store.redisUrl must be an absolute redis:// or rediss:// URL such as redis://localhost:6379, got "redis//oops"`,
    ]);
  });

  it('refuses a file that cannot be read, naming LOOPGATE_CONFIG', () => {
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: join(directory, 'missing.jsonc') }))).toEqual([
      `LOOPGATE_CONFIG names ${join(directory, 'missing.jsonc')}, which cannot be read: no such file`,
    ]);
  });

  it('refuses unknown keys, in the file and in MCP_SERVERS entries, with a hint', () => {
    const file = configFile('{\n  "server": { "prot": 8080 },\n  "loop": { "maxturns": 3, "color": "red" }\n}');
    const problems = problemsOf(resolveConfig({ LOOPGATE_CONFIG: file, MCP_SERVERS: '[{"name":"docs","url":"https://mcp.example/mcp","allowedTool":["a"]}]' }));
    expect(problems).toEqual([
      `${file}:2:15: server.prot is not a known key; did you mean "port"?`,
      `${file}:3:13: loop.maxturns is not a known key; did you mean "maxTurns"?`,
      `${file}:3:28: loop.color is not a known key`,
      'MCP_SERVERS[0].allowedTool is not a known key; did you mean "allowedTools"?',
    ]);
  });

  it('accepts the old snake_case MCP server keys with a warning each', () => {
    const file = configFile('{ "mcp": { "servers": [\n  { "name": "docs", "url": "https://mcp.example/mcp", "allowed_tools": ["a"], "timeout_ms": 100 }\n] } }');
    const fromFile = resolveConfig({ LOOPGATE_CONFIG: file, ANTHROPIC_API_KEY: 'sk-ant-1', OPENAI_API_KEY: 'sk-1' });
    expect(fromFile.ok && fromFile.config.mcp.servers[0]).toMatchObject({ allowedTools: ['a'], timeoutMs: 100 });
    expect(warningsOf(fromFile)).toEqual([
      `${file}:2:55: mcp.servers[0].allowed_tools is the old spelling of allowedTools; it still works, but rename it`,
      `${file}:2:79: mcp.servers[0].timeout_ms is the old spelling of timeoutMs; it still works, but rename it`,
    ]);

    const fromEnvironment = resolveConfig({ OPENAI_API_KEY: 'sk-1', MCP_SERVERS: '[{"name":"docs","url":"https://mcp.example/mcp","require_approval":"never"}]' });
    expect(fromEnvironment.ok).toBe(true);
    expect(warningsOf(fromEnvironment)).toEqual(['MCP_SERVERS[0].require_approval is the old spelling of requireApproval; it still works, but rename it']);
    // Still validated under the old name (every value: test/unit/operator-approval.test.ts).
    expect(problemsOf(resolveConfig({ MCP_SERVERS: '[{"name":"x","url":"https://a.example/mcp","require_approval":"sometimes"}]' }))[0]).toMatch(/^MCP_SERVERS\[0\]\.require_approval must be "never", "always"/);
    expect(problemsOf(resolveConfig({ MCP_SERVERS: '[{"name":"x","url":"https://a.example/mcp","timeout_ms":1,"timeoutMs":2}]' }))).toEqual([
      'MCP_SERVERS[0].timeout_ms and timeoutMs are the same setting; give only timeoutMs',
    ]);
  });

  it('refuses references to providers that are not configured', () => {
    const file = configFile('{\n  "defaultProvider": "local",\n  "models": { "fast": { "provider": "ghost", "model": "m" } }\n}');
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file }))).toEqual([
      `${file}:2:22: defaultProvider names the provider "local", which is not configured (configured: none)`,
      `${file}:3:37: models.fast.provider names the provider "ghost", which is not configured (configured: none)`,
    ]);
    expect(problemsOf(resolveConfig({ DEFAULT_PROVIDER: 'anthropic' }))).toEqual(['DEFAULT_PROVIDER names the provider "anthropic", which is not configured (configured: openai)']);
    expect(resolveConfig({ DEFAULT_PROVIDER: 'anthropic', ANTHROPIC_API_KEY: 'sk-ant-1' }).ok).toBe(true);
  });

  it('keeps the implicit default provider falling back to Anthropic when only Anthropic is configured', () => {
    const resolution = resolveConfig({ LOOPGATE_CONFIG: configFile('{ "providers": {} }'), ANTHROPIC_API_KEY: 'sk-ant-1' });
    expect(resolution.ok).toBe(true);
    expect(resolution.ok && resolution.config.defaultProvider).toBe('openai');
  });

  it('warns, without refusing, about an OpenAI-compatible base URL without a path and about no provider at all', () => {
    const resolution = resolveConfig({ OPENAI_BASE_URL: 'http://localhost:11434' });
    expect(resolution.ok).toBe(true);
    expect(warningsOf(resolution)).toEqual([
      'OPENAI_BASE_URL has no path; OpenAI-compatible servers usually serve under /v1 (http://localhost:11434/v1): without it, requests may fail with 404',
    ]);
    const empty = configFile('{ "providers": {} }');
    expect(warningsOf(resolveConfig({ LOOPGATE_CONFIG: empty }))).toEqual([
      'no provider is configured: set OPENAI_BASE_URL or ANTHROPIC_API_KEY, or add one under "providers"; /readyz reports not ready until then',
    ]);
  });

  it('warns about a base URL written as the endpoint itself, whose path the provider would add again', () => {
    expect(warningsOf(resolveConfig({ OPENAI_BASE_URL: 'https://llm.example/v1/chat/completions' }))).toEqual([
      'OPENAI_BASE_URL ends in /chat/completions, but the gateway adds /chat/completions itself, so requests would go to …/chat/completions/chat/completions and fail with 404: use https://llm.example/v1',
    ]);
    expect(warningsOf(resolveConfig({ OPENAI_BASE_URL: 'http://localhost:11434/v1', ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_BASE_URL: 'https://proxy.example/anthropic/v1/' }))).toEqual([
      'ANTHROPIC_BASE_URL ends in /v1, but the gateway adds /v1/messages itself, so requests would go to …/v1/v1/messages and fail with 404: use https://proxy.example/anthropic',
    ]);
    const file = configFile(JSON.stringify({ providers: { gem: { type: 'gemini', apiKey: 'g', baseUrl: 'https://generativelanguage.googleapis.com/v1beta' }, resp: { type: 'openai-responses', baseUrl: 'https://api.example/v1/responses' } } }));
    expect(warningsOf(resolveConfig({ LOOPGATE_CONFIG: file }))).toEqual([
      expect.stringMatching(/providers\.gem\.baseUrl ends in \/v1beta, but the gateway adds \/v1beta\/models\/… itself, .*: use https:\/\/generativelanguage\.googleapis\.com$/),
      expect.stringMatching(/providers\.resp\.baseUrl ends in \/responses, .*: use https:\/\/api\.example\/v1$/),
    ]);
    // The usual base URLs pass without a word.
    expect(warningsOf(resolveConfig({ OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_BASE_URL: 'https://api.anthropic.com' }))).toEqual([]);
  });

  it('validates MCP server URLs and names, and says what JSON variables must hold', () => {
    expect(problemsOf(resolveConfig({ MCP_SERVERS: '[{"name":"a b","url":"mcp.example/mcp"},{"name":"dup","url":"https://a.example/"},{"name":"dup","url":"https://b.example/"}]' }))).toEqual([
      'MCP_SERVERS[2].name repeats the name "dup" of entry 1; each server needs its own (its tools are offered as <name>__<tool>)',
      'MCP_SERVERS[0].name is invalid (server names are 1-32 of A-Z a-z 0-9 _ -, without "__", which joins a name to its tools\'), got "a b"',
      'MCP_SERVERS[0].url must be an absolute http:// or https:// URL such as http://localhost:11434/v1, got "mcp.example/mcp"',
    ]);
    // "__" joins a server's name to its tools' (<name>__<tool>): in a name it makes two servers' tools collide (A's x__add and A__x's add).
    expect(problemsOf(resolveConfig({ MCP_SERVERS: '[{"name":"A","url":"https://a.example/"},{"name":"A__x","url":"https://b.example/"}]' }))).toEqual([
      'MCP_SERVERS[1].name is invalid (server names are 1-32 of A-Z a-z 0-9 _ -, without "__", which joins a name to its tools\'), got "A__x"',
    ]);
    expect(problemsOf(resolveConfig({ MCP_SERVERS: '{"name":"x"}' }))).toEqual(['MCP_SERVERS must be a JSON array ([…]), got an object']);
    expect(problemsOf(resolveConfig({ API_KEYS: '["k"]' }))).toEqual(['API_KEYS must be a JSON object mapping API keys to tenant names, {"sk-…": "team-a"}, got an array']);
  });

  it('never repeats a secret in a message', () => {
    const secret = 'sk-canary-7f3a';
    const resolution = resolveConfig({
      API_KEYS: `{"${secret}": "team a", "short": "team-b"}`,
      MCP_SERVERS: `[{"name":"docs","url":"https://mcp.example/mcp","headers":{"x-api-key": 42, "x-other": "${secret}"},"extra":"${secret}x"}]`,
      REDIS_URL: `redis://user:${secret}@127.0.0.1:6379/x`,
      OPENAI_BASE_URL: `localhost:1/v1?api_key=${secret}`,
    });
    const problems = problemsOf(resolution);
    expect(problems).toContain('API_KEYS key for tenant "team-b" must be at least 8 characters long');
    expect(problems).toContain('API_KEYS entry 1 tenant is invalid (tenant names are 1-64 of A-Z a-z 0-9 _ . -), got "team a"');
    expect(problems).toContain('MCP_SERVERS[0].headers.x-api-key must be a string');
    expect(problems.join('\n')).not.toContain(secret);
    const malformed = problemsOf(resolveConfig({ API_KEYS: `{"${secret}" "team-a"}` }));
    expect(malformed).toEqual(['API_KEYS must be a JSON object mapping API keys to tenant names, {"sk-…": "team-a"} (invalid JSON at character 19)']);
  });

  it('never repeats a client key in the file: auth.apiKeys written as API_KEYS is (an object), or an entry written as a bare key', () => {
    const secret = 'sk-live-canary-61d0';
    const asObject = problemsOf(resolveConfig({ LOOPGATE_CONFIG: configFile(`{ "auth": { "apiKeys": { "${secret}": "team-a" } } }`) }));
    expect(asObject).toEqual([expect.stringMatching(/auth\.apiKeys must be/)]);
    const bare = problemsOf(resolveConfig({ LOOPGATE_CONFIG: configFile(`{ "auth": { "apiKeys": ["${secret}"] } }`) }));
    expect(bare).toEqual([expect.stringMatching(/auth\.apiKeys\[0\] must be/)]);
    expect([...asObject, ...bare].join('\n')).not.toContain(secret);
    // A tenant name is no secret: said as before.
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: configFile(`{ "auth": { "apiKeys": [{ "key": "${secret}", "tenant": "team a" }] } }`) })).join('\n')).toContain('"team a"');
  });

  it('refuses an API key given twice in API_KEYS (JSON keeps the last, moving the key to another tenant without a word)', () => {
    const secret = 'sk-twice-canary-5e2a';
    const problems = problemsOf(resolveConfig({ API_KEYS: `{"${secret}": "team-a", "sk-other-key-1": "team-c", "${secret}": "team-b"}` }));
    expect(problems).toEqual([expect.stringMatching(/^API_KEYS gives the key of entry 3 \(tenant "team-b"\) again, first for tenant "team-a"/)]);
    expect(problems.join('\n')).not.toContain(secret);
  });

  it('an empty list variable counts as unset, as every empty variable does, but for CORS_ORIGINS and MCP_ALLOWED_URLS where it means none', () => {
    const file = configFile(`{ "store": { "clusterNodes": ["redis://10.0.0.1:6379"] }, "loop": { "terminalTools": ["finish"] }, "mcp": { "allowedUrls": ["https://mcp.example/"] }, "server": { "corsOrigins": ["https://app.example"] } }`);
    const resolution = resolveConfig({ LOOPGATE_CONFIG: file, REDIS_CLUSTER_NODES: '', LOOP_TERMINAL_TOOLS: '', MCP_ALLOWED_URLS: '', CORS_ORIGINS: '' });
    if (!resolution.ok) throw new Error(resolution.problems.map((problem) => problem.message).join('\n'));
    expect(resolution.config.store.clusterNodes).toEqual(['redis://10.0.0.1:6379']);
    expect(resolution.config.loop.terminalTools).toEqual(['finish']);
    expect(resolution.config.mcp.allowedUrls).toEqual([]);
    expect(resolution.config.server.corsOrigins).toEqual([]);
  });

  it('a provider variable that would add a provider beside the file\'s own of that type, or take the default from the file\'s, is refused, naming both', () => {
    // The file keys its own Anthropic provider under another name: the variable would add a second one, and this one would stay keyless.
    const claude = configFile(`{ "providers": { "claude": { "type": "anthropic" } } }`);
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: claude, ANTHROPIC_API_KEY: 'sk-ant-test-key' }))).toEqual([
      expect.stringMatching(/^ANTHROPIC_API_KEY adds the provider "anthropic", but the configuration file's anthropic provider is "claude", which gets nothing from it: name it "anthropic" in the file/),
    ]);
    // An OpenAI key merely exported in the shell, beside a file serving vLLM: it would add api.openai.com and make it the default.
    const vllm = configFile(`{ "providers": { "vllm": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:8000/v1" } } }`);
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: vllm, OPENAI_API_KEY: 'sk-shell-key-1' }))).toEqual([
      expect.stringMatching(/^OPENAI_API_KEY adds the provider "openai", but the configuration file's openai-chat provider is "vllm"/),
    ]);
    // A provider of another type, added beside the file's: refused only where it would take over the model names "models" does not list.
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: vllm, ANTHROPIC_API_KEY: 'sk-ant-test-key' }))).toEqual([
      expect.stringMatching(/^ANTHROPIC_API_KEY adds the provider "anthropic", which would serve the model names "models" does not list in place of the file's "vllm"; set defaultProvider/),
    ]);
    expect(resolveConfig({ LOOPGATE_CONFIG: vllm, ANTHROPIC_API_KEY: 'sk-ant-test-key', DEFAULT_PROVIDER: 'vllm' }).ok).toBe(true);
    // The shipped file has the openai provider: its variables key it, as the README shows; Anthropic beside it leaves the default alone.
    expect(resolveConfig({ OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'sk-ant-1' }).ok).toBe(true);
    // A file with no providers of its own is configured by the variables alone.
    expect(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "providers": {} }'), ANTHROPIC_API_KEY: 'sk-ant-1', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).ok).toBe(true);
  });

  it('refuses a metrics.path on the main port that is one of the gateway\'s own paths (start-up would crash on the clash)', () => {
    for (const path of ['/healthz', '/readyz', '/version', '/openapi.json', '/v1/responses', '/v1/metrics', '/inspector', '/inspector/x']) {
      expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: configFile(`{ "metrics": { "path": "${path}" } }`) }))).toEqual([expect.stringMatching(/metrics\.path is a path the gateway serves itself/)]);
    }
    expect(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "metrics": { "path": "/internal/metrics" } }') }).ok).toBe(true);
    // On a port of its own, any path will do.
    expect(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "metrics": { "path": "/healthz", "port": 9464 } }') }).ok).toBe(true);
  });

  it('refuses a model alias with both a provider and deployments (the provider was ignored), and a HOST that cannot be a listen address', () => {
    const both = configFile(`{ "providers": { "a": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:1/v1" }, "b": { "type": "openai-chat", "baseUrl": "http://127.0.0.1:2/v1" } }, "defaultProvider": "a", "models": { "chat": { "provider": "a", "deployments": [{ "provider": "b", "model": "m" }] } } }`);
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: both }))).toEqual([expect.stringMatching(/models\.chat.*provider or deployments, not both/)]);
    for (const host of ['http://0.0.0.0', 'not a host!!', '999.1.1.1', '0.0.0.0:8080']) {
      expect(problemsOf(resolveConfig({ HOST: host }))).toEqual([`HOST must be an IP address or a host name such as 0.0.0.0, ::, 127.0.0.1 or localhost (no scheme, no port), got "${host}"`]);
    }
    for (const host of ['0.0.0.0', '127.0.0.1', '::', '::1', 'localhost', 'gateway.internal']) expect(resolveConfig({ HOST: host, OPENAI_API_KEY: 'sk-1' }).ok).toBe(true);
  });

  it('throws one ConfigurationError listing every problem from loadConfig', () => {
    let thrown: unknown;
    try {
      loadConfig({ PORT: 'eighty', MAX_TURNS: 'many' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as ConfigurationError).message).toBe(
      'invalid configuration (2 problems):\n  PORT must be an integer from 0 to 65535, got "eighty"\n  MAX_TURNS must be a positive integer, got "many"',
    );
  });

  it('reads tenant tool policies, and refuses bad patterns, bad URLs and policies for tenants no API key belongs to', () => {
    const tenants = '"*": { "tools": { "deny": ["*__delete"] } },\n    "team-a": { "tools": { "allow": ["docs__*"] }, "mcpServerUrls": { "deny": ["https://mcp.example.com"] } }';
    const valid = resolveConfig({ LOOPGATE_CONFIG: configFile(`{\n  "tenants": {\n    ${tenants}\n  }\n}`), API_KEYS: '{"sk-team-a-123456": "team-a"}' });
    expect(valid.ok ? valid.config.tenants : valid.problems).toEqual({
      '*': { tools: { deny: ['*__delete'] }, mcpServerUrls: { deny: [] } },
      'team-a': { tools: { allow: ['docs__*'], deny: [] }, mcpServerUrls: { deny: ['https://mcp.example.com'] } },
    });
    // Without API keys every request is tenant "default". MCP tool names may hold '.' and '/' (the README's own `*__files.remove`).
    expect(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "tenants": { "default": { "tools": { "deny": ["x", "*__files.remove", "*__repo/push"] } } } }') }).ok).toBe(true);

    const file = configFile(`{\n  "tenants": {\n    ${tenants},\n    "team-x": { "tools": { "deny": ["bad name"] }, "mcpServerUrls": { "allow": ["mcp.example.com"] } }\n  }\n}`);
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: file, API_KEYS: '{"sk-team-a-123456": "team-a"}' }))).toEqual([
      `${file}:5:5: tenants.team-x is a policy for a tenant no API key belongs to (tenants with API keys: team-a); use "*" for every tenant`,
      `${file}:5:37: tenants.team-x.tools.deny[0] is invalid (tool-name patterns are 1-128 of A-Z a-z 0-9 _ - . / and the wildcard *), got "bad name"`,
      `${file}:5:81: tenants.team-x.mcpServerUrls.allow[0] must be an absolute http:// or https:// URL such as http://localhost:11434/v1, got "mcp.example.com"`,
    ]);
    expect(problemsOf(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "tenants": { "team-a": {} } }') }))[0]).toMatch(
      /tenants\.team-a is a policy for a tenant no API key belongs to \(no API keys are configured, so every request is tenant "default"\)/,
    );
  });

  it('still parses old MCP spellings when the schema is used directly', () => {
    const config = GatewayConfig.parse({ mcp: { servers: [{ name: 'a', url: 'https://a.example/mcp', allowed_tools: ['x'], timeout_ms: 5 }] } });
    expect(config.mcp.servers[0]).toMatchObject({ allowedTools: ['x'], timeoutMs: 5 });
  });

  it('reads the loop controls from the file and the environment, and checks the MCP validator names a configured server', () => {
    const file = configFile('{ "loop": { "atLimit": "final_answer", "outputValidation": { "validator": { "type": "mcp", "tool": "checks__judge" } } } }');
    const env = { LOOPGATE_CONFIG: file, LOOP_COMPLETION_CHECK: 'yes', LOOP_TERMINAL_TOOLS: 'docs__submit, docs__done' };
    expect(problemsOf(resolveConfig(env))).toEqual([`${file}:1:100: loop.outputValidation.validator.tool names the MCP server "checks", which is not configured in mcp.servers (configured: none)`]);
    const config = loadConfig({ ...env, MCP_SERVERS: '[{"name":"checks","url":"https://checks.example/mcp"}]' });
    expect(config.loop).toMatchObject({ atLimit: 'final_answer', terminalTools: ['docs__submit', 'docs__done'], completionCheck: { enabled: true, prompt: null }, outputValidation: { enabled: false, maxAttempts: 3 } });
    expect(problemsOf(resolveConfig({ LOOP_OUTPUT_VALIDATION: 'maybe' }))).toEqual(['LOOP_OUTPUT_VALIDATION must be true or false, got "maybe"']);
  });

  it('reads the metrics settings from the file and the environment, and refuses a metrics port that is the main one, a short token, a bad path', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: true, port: null, host: null, path: '/metrics', token: null });
    const config = loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'scrape-token-0123456789', METRICS_ENABLED: 'on' });
    expect(config.metrics).toEqual({ enabled: true, port: 9464, host: null, path: '/metrics', token: 'scrape-token-0123456789' });
    expect(loadConfig({ METRICS_ENABLED: 'false' }).metrics.enabled).toBe(false);
    expect(problemsOf(resolveConfig({ PORT: '9000', METRICS_PORT: '9000' }))).toEqual(['METRICS_PORT is server.port (9000) too; leave it null to serve /metrics on the main port, or pick another port']);
    const problems = problemsOf(resolveConfig({ LOOPGATE_CONFIG: configFile('{ "metrics": { "path": "metrics", "token": "short" } }') }));
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/metrics\.path.*an absolute URL path such as \/metrics/);
    expect(problems.join('\n')).toMatch(/metrics\.token/);
    expect(problems.join('\n')).not.toContain('short');
  });
});
