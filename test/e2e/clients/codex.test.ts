import { spawn } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { OutboundRecorder } from '../../support/outbound-recorder.ts';
import { flavors, openaiChat, scriptModel, type ModelTurn } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

const CODEX = fileURLToPath(new URL('../../../node_modules/.bin/codex', import.meta.url));
/** Every connection Codex makes beyond loopback ends here (it honours HTTPS_PROXY); the tests expect none. */
const outbound = new OutboundRecorder();
let proxyEnvironment: Record<string, string> = {};
beforeAll(async () => {
  proxyEnvironment = OutboundRecorder.proxyEnvironment(await outbound.start());
});
afterAll(() => outbound.close());

/** Runs `codex exec` (the real CLI from @openai/codex) with its own CODEX_HOME pointing at the gateway. */
function codexExec(home: string, workdir: string, prompt: string, extra: { before?: string[]; options?: string[] } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const args = ['exec', ...(extra.before ?? []), '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...(extra.options ?? []), prompt];
    const child = spawn(CODEX, args, {
      cwd: workdir,
      env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, LOOPGATE_KEY: 'client-key', RUST_LOG: 'error', ...proxyEnvironment },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (piece) => (stdout += piece));
    child.stderr.on('data', (piece) => (stderr += piece));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Codex CLI, as installed, against the gateway over each upstream: its default tool set accepted, a shell round trip. */
describe.each(flavors)('Codex CLI over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let home: string;
  let workdir: string;
  const logLines: string[] = [];
  let upstreamUrl: string;
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), logLevel: 'info' }, {}, [], { write: (line) => void logLines.push(line) });
    home = mkdtempSync(join(tmpdir(), 'loopgate-codex-home-'));
    workdir = mkdtempSync(join(tmpdir(), 'loopgate-codex-work-'));
    writeFileSync(
      join(home, 'config.toml'),
      [
        `model = "${flavor.model}"`,
        'model_provider = "loopgate"',
        // No update check, no plugin sync from GitHub and ChatGPT, no analytics: only the gateway is reached.
        'check_for_update_on_startup = false',
        '[features]',
        'plugins = false',
        '[analytics]',
        'enabled = false',
        '[model_providers.loopgate]',
        'name = "loopgate"',
        `base_url = "${gateway.baseURL}"`,
        'wire_api = "responses"',
        'env_key = "LOOPGATE_KEY"',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  });

  // Codex's tool set depends on the model: an unknown name gets its fallback set (namespaced multi-agent tools),
  // a model from its catalog the freeform apply_patch and a client-run tool_search; both send hosted web_search.
  it.each([
    { model: flavor.model, expected: ['exec_command', 'multi_agent_v1__spawn_agent'] },
    { model: 'gpt-5.5', expected: ['exec_command', 'apply_patch', 'tool_search'] },
  ])('one turn with $model: every tool Codex sends is accepted, the answer is printed', async ({ model, expected }) => {
    script(() => ({ text: 'Hello from the gateway.' }));
    const before = upstream.requests.length;
    const logsBefore = logLines.length;
    const run = await codexExec(home, workdir, 'Say hello.', { options: ['--model', model] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Hello from the gateway.');
    const sent = upstream.requests.slice(before).at(-1)!;
    const offered = flavor.offeredTools(sent).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(expected));
    const summary = logLines.slice(logsBefore).map((line) => JSON.parse(line)).find((entry) => entry.response_id);
    expect(offered).not.toContain('web_search');
    if (flavor.runsWebSearch) {
      // OpenAI's Responses API runs web_search itself: offered to it as Codex sent it, nothing omitted.
      expect((sent.body.tools as { type: string }[]).map((tool) => tool.type)).toContain('web_search');
      expect(summary).toMatchObject({ status: 'completed' });
      expect(summary).not.toHaveProperty('omitted_tools');
    } else {
      // Hosted web_search cannot run here: left out of what the model sees, named in the response's log line.
      expect(summary).toMatchObject({ status: 'completed', omitted_tools: ['web_search'] });
    }
  }, 60_000);

  it('a shell round trip: the model runs a command through Codex and sees its output', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_sh', name: 'exec_command', args: { cmd: 'echo written-by-codex > marker.txt && echo shell-ok' } }] } : { text: 'The command ran.' }));
    const run = await codexExec(home, workdir, 'Write the marker file.');
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'marker.txt'), 'utf8').trim()).toBe('written-by-codex');
    expect(run.stdout).toContain('The command ran.');
    const results = flavor.seen(upstream.requests.at(-1)!).filter((seen) => seen.kind === 'result');
    expect(JSON.stringify(results)).toContain('shell-ok');
  }, 60_000);

  it('an apply_patch round trip: the freeform call reaches Codex as custom_tool_call, the file is written, the result goes back to the model', async () => {
    const patch = ['*** Begin Patch', '*** Add File: patched.txt', '+written by apply_patch', '*** End Patch'].join('\n');
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_patch', name: 'apply_patch', args: { input: patch } }] } : { text: 'The patch is applied.' }));
    const before = upstream.requests.length;
    const run = await codexExec(home, workdir, 'Create patched.txt.', { options: ['--model', 'gpt-5.5'] });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'patched.txt'), 'utf8').trim()).toBe('written by apply_patch');
    expect(run.stdout).toContain('The patch is applied.');
    // Codex offers apply_patch as a freeform tool: the model sees a function taking one string, its grammar described.
    const offered = flavor.offeredTools(upstream.requests[before]!).find((tool) => tool.name === 'apply_patch');
    expect(JSON.stringify(offered)).toContain('grammar');
    const seen = flavor.seen(upstream.requests.at(-1)!);
    expect(seen).toContainEqual({ kind: 'call', id: 'call_patch', name: 'apply_patch', args: { input: patch } });
    const result = seen.find((entry) => entry.kind === 'result' && entry.id === 'call_patch');
    expect(JSON.stringify(result)).toContain('patched.txt');
  }, 60_000);

  it('a tool_search round trip: the search reaches Codex as tool_search_call, the MCP tools it loads are offered from then on, and a call of one runs in Codex', async () => {
    // Codex defers its MCP servers' tools behind tool_search: it answers a search with a tool_search_output holding a namespace.
    const mcp = new McpTestServer();
    const mcpUrl = await mcp.start();
    script((_request, results) => {
      if (results.length === 0) return { calls: [{ id: 'call_search', name: 'tool_search', args: { query: 'add two numbers' } }] };
      if (results.length === 1) return { calls: [{ id: 'call_add', name: 'mcp__calc__add', args: { a: 2, b: 3 } }] };
      return { text: `The sum is ${results[1]}.` };
    });
    const before = upstream.requests.length;
    const run = await codexExec(home, workdir, 'Add 2 and 3 with a tool.', { options: ['--model', 'gpt-5.5', '-c', `mcp_servers.calc.url="${mcpUrl}"`] });
    await mcp.close();
    expect(run.code, run.stderr).toBe(0);
    const offered = (request: RecordedRequest) => flavor.offeredTools(request).map((tool) => tool.name);
    expect(offered(upstream.requests[before]!)).not.toContain('mcp__calc__add');
    expect(offered(upstream.requests.at(-1)!)).toContain('mcp__calc__add');
    expect(mcp.calls).toContainEqual({ name: 'add', args: { a: 2, b: 3 } });
    const seen = flavor.seen(upstream.requests.at(-1)!);
    expect(seen).toContainEqual({ kind: 'result', id: 'call_search', content: '{"loaded":["mcp__calc"]}' });
    expect(JSON.stringify(seen.find((entry) => entry.kind === 'result' && entry.id === 'call_add'))).toContain('5');
    expect(run.stdout).toContain('The sum is');
  }, 60_000);

  it('--output-schema: the schema reaches the upstream as structured output, the JSON is printed', async () => {
    writeFileSync(join(workdir, 'schema.json'), JSON.stringify({ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false }));
    script(() => ({ text: JSON.stringify({ answer: 'forty-two' }) }));
    const run = await codexExec(home, workdir, 'Answer in JSON.', { options: ['--output-schema', join(workdir, 'schema.json')] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('{"answer":"forty-two"}');
    expect(flavor.format(upstream.requests.at(-1)!)).toMatchObject({ type: 'json_schema', schema: { properties: { answer: { type: 'string' } } } });
  }, 60_000);

  it('the strict hosted-tool policy: Codex gets the 400 naming web_search, prints it and stops (no hang, no model call)', async () => {
    // An upstream that runs web_search itself is configured not to here, so the policy applies to it.
    const strict = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl, { hostedTools: [] }), loop: { hostedTools: 'reject' } });
    try {
      const before = upstream.requests.length;
      const started = Date.now();
      const run = await codexExec(home, workdir, 'Search the web.', { options: ['--model', 'gpt-5.5', '-c', `model_providers.loopgate.base_url="${strict.baseURL}"`] });
      expect(run.code).not.toBe(0);
      expect(run.stdout + run.stderr).toContain("The hosted tool 'web_search' cannot run behind this gateway");
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(upstream.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  }, 60_000);

  it('resume: a later exec continues the session, resending the earlier turns', async () => {
    script(() => ({ text: 'First answer.' }));
    expect((await codexExec(home, workdir, 'Remember the word pelican.')).code).toBe(0);
    script(() => ({ text: 'The word was pelican.' }));
    const run = await codexExec(home, workdir, 'Which word?', { before: ['resume', '--last'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The word was pelican.');
    const seen = flavor.seen(upstream.requests.at(-1)!).flatMap((entry) => ('text' in entry && entry.kind !== 'system' ? [entry.text] : []));
    expect(seen.join('\n')).toContain('Remember the word pelican.');
    expect(seen).toContain('First answer.');
    expect(seen.at(-1)).toContain('Which word?');
  }, 90_000);

  it('Codex reached no host but the gateway (no update check, plugin sync or analytics)', () => {
    expect(outbound.attempts).toEqual([]);
  });
});

/**
 * Signed in with a ChatGPT account (as many Codex users are) and talking over HTTP to a provider it takes for
 * OpenAI's own, Codex compresses every request body with zstd. A tap in front of the gateway notes what arrives.
 */
describe('Codex CLI signed in with a ChatGPT account', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let tap: Server;
  const arrived: { method: string; path: string; encoding: string | null }[] = [];
  let home: string;
  let workdir: string;

  beforeAll(async () => {
    const upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, openaiChat.config(upstreamUrl));
    tap = createServer((request, response) => {
      arrived.push({ method: request.method ?? '', path: request.url ?? '', encoding: request.headers['content-encoding'] ?? null });
      const forwarded = httpRequest(new URL(request.url ?? '/', gateway.origin), { method: request.method, headers: request.headers }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      request.pipe(forwarded);
    });
    await new Promise<void>((resolve) => tap.listen(0, '127.0.0.1', resolve));
    const tapOrigin = `http://127.0.0.1:${(tap.address() as AddressInfo).port}`;
    home = mkdtempSync(join(tmpdir(), 'loopgate-codex-chatgpt-'));
    workdir = mkdtempSync(join(tmpdir(), 'loopgate-codex-work-'));
    // A ChatGPT sign-in as `codex login` leaves it (the tokens' claims are read, not verified; refreshed just now).
    const jwt = ['{"alg":"none","typ":"JWT"}', JSON.stringify({ email: 'dev@example.com', exp: 4_102_444_800, 'https://api.openai.com/auth': { chatgpt_plan_type: 'pro', chatgpt_account_id: 'acct-1', chatgpt_user_id: 'user-1' } })]
      .map((part) => Buffer.from(part).toString('base64url'))
      .concat('signature')
      .join('.');
    writeFileSync(join(home, 'auth.json'), JSON.stringify({ OPENAI_API_KEY: null, auth_mode: 'chatgpt', tokens: { id_token: jwt, access_token: jwt, refresh_token: 'refresh', account_id: 'acct-1' }, last_refresh: new Date().toISOString() }));
    writeFileSync(
      join(home, 'config.toml'),
      [
        `model = "${openaiChat.model}"`,
        'model_provider = "gateway"',
        // ChatGPT's own endpoints (account checks) at the tap too, so nothing leaves loopback.
        `chatgpt_base_url = "${tapOrigin}/backend-api/"`,
        'check_for_update_on_startup = false',
        '[features]',
        'plugins = false',
        '[analytics]',
        'enabled = false',
        // Named "OpenAI" and signed in with ChatGPT, as such gateways are configured: Codex then treats it as OpenAI's own.
        '[model_providers.gateway]',
        'name = "OpenAI"',
        `base_url = "${tapOrigin}/v1"`,
        'wire_api = "responses"',
        'requires_openai_auth = true',
        // Over HTTP: the WebSocket transport has no request bodies to compress.
        'supports_websockets = false',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => tap.close(() => resolve()));
    await gateway.close();
    await upstream.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  });

  it('its zstd-compressed requests are read: the model gets the prompt, Codex prints the answer', async () => {
    scriptModel(upstream, openaiChat, () => ({ text: 'Decompressed and answered.' }));
    const outboundBefore = outbound.attempts.length;
    const run = await codexExec(home, workdir, 'Say something about pelicans.');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Decompressed and answered.');
    expect(arrived.filter((entry) => entry.method === 'POST' && entry.path === '/v1/responses').map((entry) => entry.encoding)).toContain('zstd');
    const seen = openaiChat.seen(upstream.requests.at(-1)!).flatMap((entry) => ('text' in entry ? [entry.text] : []));
    expect(seen.join('\n')).toContain('Say something about pelicans.');
    expect(outbound.attempts.slice(outboundBefore)).toEqual([]);
  }, 60_000);
});
