import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodexCli } from '../../support/codex-cli.ts';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { openaiChat, scriptModel } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';
import { COMPACTION_REQUEST } from '../../../src/engine/compaction/compaction-prompt.ts';

/**
 * Codex CLI set up to take the gateway for OpenAI itself, as its users point it at one: the built-in OpenAI
 * provider at the gateway's URL (then it speaks the WebSocket transport), or a provider named "OpenAI" with a
 * ChatGPT sign-in (then it compresses its HTTP request bodies). codex.test.ts covers a provider of its own.
 */
const codex = new CodexCli();
beforeAll(() => codex.start());
afterAll(() => codex.close());

describe('Codex CLI with the built-in OpenAI provider at the gateway (an API key)', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  const logLines: string[] = [];
  let home: string;
  let workdir: string;

  beforeAll(async () => {
    const upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, { ...openaiChat.config(upstreamUrl), logLevel: 'info' }, {}, [], { write: (line) => void logLines.push(line) });
    home = mkdtempSync(join(tmpdir(), 'loopgate-codex-openai-'));
    workdir = mkdtempSync(join(tmpdir(), 'loopgate-codex-work-'));
    writeFileSync(
      join(home, 'config.toml'),
      [`model = "${openaiChat.model}"`, `openai_base_url = "${gateway.baseURL}"`, 'check_for_update_on_startup = false', '[features]', 'plugins = false', '[analytics]', 'enabled = false', ''].join('\n'),
    );
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  });

  it('speaks the WebSocket transport: a shell round trip, every turn a response on the socket, the answer printed', async () => {
    scriptModel(upstream, openaiChat, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_ws', name: 'exec_command', args: { cmd: 'echo over-the-socket > socket.txt && echo socket-ok' } }] } : { text: 'Ran it over the socket.' }));
    const outboundBefore = codex.outbound.attempts.length;
    const callsBefore = upstream.requests.length;
    const run = await codex.exec(home, workdir, 'Write socket.txt.', { env: { OPENAI_API_KEY: 'sk-codex-user' } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Ran it over the socket.');
    expect(readFileSync(join(workdir, 'socket.txt'), 'utf8').trim()).toBe('over-the-socket');
    expect(JSON.stringify(openaiChat.seen(upstream.requests.at(-1)!))).toContain('socket-ok');
    // Both turns (the call, then the answer) were responses on the WebSocket transport.
    const finished = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.response_id);
    expect(finished.length).toBeGreaterThanOrEqual(2);
    expect(finished.every((entry) => entry.transport === 'websocket')).toBe(true);
    expect(codex.outbound.attempts.slice(outboundBefore)).toEqual([]);
    // Codex warms the socket up first: `generate: false` with its instructions, answered with no output and no model call.
    const [warmup] = finished;
    expect(warmup).toMatchObject({ status: 'completed', input_tokens: 0, output_tokens: 0 });
    expect(upstream.requests.length - callsBefore, 'two model calls: the warmup makes none').toBe(2);
    // The first model call saw the warmup's input (Codex's base instructions, sent only then) and what came after it, each once.
    const firstCall = openaiChat.seen(upstream.requests[callsBefore]!);
    expect(firstCall[0]).toMatchObject({ kind: 'system', text: expect.stringContaining('You are a coding agent running in the Codex CLI') });
    expect(firstCall.at(-1)).toEqual({ kind: 'user', text: 'Write socket.txt.' });
    const lines = firstCall.map((entry) => JSON.stringify(entry));
    expect(new Set(lines).size).toBe(lines.length);
  }, 60_000);

  it('compacts when its context fills: Codex sends compaction_trigger, gets one compaction item, and goes on from the summary', async () => {
    const summarising = (request: RecordedRequest) => openaiChat.seen(request).at(-1)?.kind === 'user' && (openaiChat.seen(request).at(-1) as { text: string }).text === COMPACTION_REQUEST;
    scriptModel(upstream, openaiChat, (request, results) => {
      if (summarising(request)) return { text: 'SUMMARY: the user wants compact.txt; echo compact-ok ran.' };
      // The first call reports a context past Codex's compaction limit (set below), so Codex compacts before going on, from the summary.
      const compacted = JSON.stringify(openaiChat.seen(request)).includes('SUMMARY:');
      return results.length === 0 && !compacted ? { calls: [{ id: 'call_big', name: 'exec_command', args: { cmd: 'echo compact-ok > compact.txt && echo compact-ok' } }], usage: { input: 50_000, output: 50 } } : { text: 'Done after compacting.' };
    });
    const callsBefore = upstream.requests.length;
    const run = await codex.exec(home, workdir, 'Write compact.txt.', { env: { OPENAI_API_KEY: 'sk-codex-user' }, before: ['-c', 'model_auto_compact_token_limit=10000'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Done after compacting.');
    const calls = upstream.requests.slice(callsBefore);
    const summaryCall = calls.findIndex(summarising);
    expect(summaryCall, 'one summarising call').toBeGreaterThan(0);
    expect(openaiChat.offeredTools(calls[summaryCall]!)).toEqual([]);
    // The model call after it starts from the summary the compaction item carried, not the whole window.
    const after = openaiChat.seen(calls.at(-1)!);
    expect(JSON.stringify(after)).toContain('SUMMARY: the user wants compact.txt');
    expect(after.some((entry) => entry.kind === 'call' && entry.id === 'call_big')).toBe(false);
  }, 90_000);
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
    const outboundBefore = codex.outbound.attempts.length;
    const run = await codex.exec(home, workdir, 'Say something about pelicans.');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Decompressed and answered.');
    expect(arrived.filter((entry) => entry.method === 'POST' && entry.path === '/v1/responses').map((entry) => entry.encoding)).toContain('zstd');
    const seen = openaiChat.seen(upstream.requests.at(-1)!).flatMap((entry) => ('text' in entry ? [entry.text] : []));
    expect(seen.join('\n')).toContain('Say something about pelicans.');
    expect(codex.outbound.attempts.slice(outboundBefore)).toEqual([]);
  }, 60_000);
});
