import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../../src/config/environment-variables.ts';
import { startGatewayProcess } from '../support/gateway-process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = join(ROOT, 'src/main.ts');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const CANARY = 'canary-7d41c0ffee';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with only PATH and HOME from this environment, so a REDIS_URL or PORT set for the suite cannot leak in. */
function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 15_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

const loopgate = (args: string[], env: Record<string, string> = {}) => run(process.execPath, [MAIN, ...args], env);

describe('loopgate command line', () => {
  it('--help lists the flags and every environment variable, one line each', async () => {
    const { code, stdout, stderr } = await loopgate(['--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    for (const flag of ['--check-config', '--help', '--version']) expect(stdout).toContain(flag);
    const lines = stdout.split('\n');
    for (const variable of ENVIRONMENT_VARIABLES) {
      expect(lines.filter((line) => line.startsWith(`  ${variable.name} `))).toHaveLength(1);
    }
    expect(stdout).toMatch(/^ {2}PORT +listen port \[server\.port, default 8080\]$/m);
  });

  it('--version prints the version from package.json', async () => {
    expect(await loopgate(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    expect((await loopgate(['-v'])).stdout).toBe(`${VERSION}\n`);
  });

  it('refuses an unknown flag with exit code 2 and the help hint', async () => {
    const { code, stdout, stderr } = await loopgate(['--chek-config']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe('loopgate: unknown flag --chek-config\nRun loopgate --help for the flags and environment variables.\n');
  });

  it('--check-config prints the effective configuration with every secret masked and exits 0', async () => {
    const { code, stdout, stderr } = await loopgate(['--check-config'], {
      OPENAI_API_KEY: `sk-${CANARY}`,
      ANTHROPIC_API_KEY: `sk-ant-${CANARY}`,
      API_KEYS: JSON.stringify({ [`sk-client-${CANARY}`]: 'team-a' }),
      REDIS_URL: `redis://default:${CANARY}@127.0.0.1:6379/0`,
      MCP_SERVERS: JSON.stringify([{ name: 'docs', url: 'https://mcp.example/mcp', headers: { 'x-api-key': CANARY }, allowed_tools: ['search'] }]),
      PORT: '9090',
      LOG_LEVEL: 'WARN',
    });
    expect(code).toBe(0);
    expect(stdout + stderr).not.toContain(CANARY);
    const printed = JSON.parse(stdout);
    expect(printed.server.port).toBe(9090);
    expect(printed.logLevel).toBe('warn');
    expect(printed.providers.openai.apiKey).toBe('***');
    expect(printed.providers.anthropic).toMatchObject({ type: 'anthropic', apiKey: '***', baseUrl: 'https://api.anthropic.com' });
    expect(printed.auth.apiKeys).toEqual([{ key: '***', tenant: 'team-a', admin: false }]);
    expect(printed.store.redisUrl).toBe('redis://default:***@127.0.0.1:6379/0');
    expect(printed.mcp.servers).toEqual([{ name: 'docs', url: 'https://mcp.example/mcp', headers: { 'x-api-key': '***' }, allowedTools: ['search'], requireApproval: 'never', timeoutMs: null }]);
    expect(stderr).toContain('loopgate: warning: MCP_SERVERS[0].allowed_tools is the old spelling of allowedTools; it still works, but rename it\n');
    expect(stderr).toMatch(/the configuration is valid/);
  });

  it('--check-config lists every problem on stderr and exits 1', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'loopgate-cli-')), 'loopgate.jsonc');
    writeFileSync(file, '{\n  "server": { "port": 8080 },\n  "loop": { "maxTurn": 3 }\n}\n');
    const { code, stdout, stderr } = await loopgate(['--check-config'], { LOOPGATE_CONFIG: file, PORT: 'abc', OPENAI_BASE_URL: 'localhost:11434/v1', DEFAULT_PROVIDER: 'nope' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      [
        'loopgate: invalid configuration (4 problems):',
        '  PORT must be an integer from 0 to 65535, got "abc"',
        `  ${file}:3:13: loop.maxTurn is not a known key; did you mean "maxTurns"?`,
        '  DEFAULT_PROVIDER names the provider "nope", which is not configured (configured: openai)',
        '  OPENAI_BASE_URL must be an absolute http:// or https:// URL such as http://localhost:11434/v1, got "localhost:11434/v1"',
        '',
      ].join('\n'),
    );
  });

  it('refuses to start on an invalid configuration: every problem on stderr, nothing on stdout, exit 1', async () => {
    const { code, stdout, stderr } = await loopgate([], { PORT: '70000', API_KEYS: `{"${CANARY}": "team a"}` });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('loopgate: invalid configuration (2 problems):\n  PORT must be an integer from 0 to 65535, got "70000"\n');
    expect(stderr).toContain('  API_KEYS entry 1 tenant is invalid');
    expect(stderr).toContain('loopgate --check-config');
    expect(stderr).not.toContain(CANARY);
  });

  it('a listen address that cannot be had stops the start with a line naming HOST', async () => {
    const { code, stdout } = await loopgate([], { HOST: 'no-such-host.invalid', PORT: '0', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', LOG_LEVEL: 'info' });
    expect(code).toBe(1);
    expect(stdout).toMatch(/could not start: the listen address no-such-host\.invalid \(HOST, server\.host\) does not resolve/);
  });

  it('works through npm: npm start -- --version', async () => {
    const { code, stdout } = await run('npm', ['start', '--silent', '--', '--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(VERSION);
  });
});

describe('start-up line', () => {
  it('logs one line with version, address, providers, store, MCP servers, authentication and limits, and no secret', async () => {
    const gateway = await startGatewayProcess({
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: `sk-${CANARY}`,
      API_KEYS: JSON.stringify({ [`sk-a-${CANARY}`]: 'team-a', [`sk-b-${CANARY}`]: 'team-b' }),
      MCP_SERVERS: JSON.stringify([{ name: 'docs', url: 'http://127.0.0.1:9/mcp', headers: { authorization: `Bearer ${CANARY}` } }]),
      MAX_TURNS: '6',
      SHUTDOWN_GRACE_MS: '1000',
      // The suite's own Redis must not turn this into a Redis store.
      REDIS_URL: '',
    });
    try {
      // Written right after Fastify's "listening at" line, which is what startGatewayProcess waits for.
      const started = await vi.waitFor(() => {
        const lines = gateway.logs.filter((entry) => entry.msg === 'loopgate started');
        expect(lines).toHaveLength(1);
        return lines;
      });
      expect(started[0]).toMatchObject({
        level: 30,
        version: VERSION,
        listening: gateway.origin,
        providers: [{ name: 'openai', type: 'openai-chat', base_url: 'http://127.0.0.1:9/v1' }],
        store: { kind: 'memory' },
        mcp_servers: [{ name: 'docs', origin: 'http://127.0.0.1:9' }],
        auth: { enabled: true, keys: 2, tenants: 2 },
        limits: { max_turns: 6, shutdown_grace_ms: 1000 },
      });
      expect(JSON.stringify(gateway.logs)).not.toContain(CANARY);
    } finally {
      await gateway.stop();
    }
  });
});
