import { createOpenAI } from '@ai-sdk/openai';
import OpenAI from 'openai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CodexCli } from '../../support/codex-cli.ts';
import { assertEventStreamInvariants, parseSseText } from '../../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { assertValidResponse } from '../../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textReply, type RecordedRequest, type UpstreamReply } from '../../support/scripted-chat-upstream.ts';

/** A Chat stream that gets as far as a whole tool call, then loses its connection: the model never finished its turn. */
function brokenAfterCall(name: string, args: Record<string, unknown>): UpstreamReply {
  const call = { index: 0, id: 'call_broken', type: 'function', function: { name, arguments: JSON.stringify(args) } };
  return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: null, tool_calls: [call] })], false), pauseMs: 50, destroyAfter: true };
}

/** What OpenAI's Chat Completions answers a history with a tool call left without its result, or a result without its call: a 400 (else `answer`). */
function refusingDanglingCalls(answer: (request: RecordedRequest) => UpstreamReply): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const messages = request.body.messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
    const calls = new Set(messages.flatMap((message) => (message.tool_calls ?? []).map((call) => call.id)));
    const answered = new Set(messages.flatMap((message) => message.tool_call_id ?? []));
    const dangling = [...calls].filter((id) => !answered.has(id));
    const orphaned = [...answered].filter((id) => !calls.has(id));
    if (dangling.length === 0 && orphaned.length === 0) return answer(request);
    const message =
      dangling.length > 0
        ? `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${dangling.join(', ')}`
        : "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    return { kind: 'json', status: 400, body: { error: { message, type: 'invalid_request_error', param: 'messages', code: null } } };
  };
}

/**
 * An upstream that drops while the model is calling a tool: the call's
 * arguments may look whole, but the model never finished it. Clients run a
 * call when its item is done, so the real ones must not run this one.
 */
describe('a tool call whose stream broke off, as real clients meet it', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('on the wire: the call is added and never done; the stream ends response.failed, the call incomplete in it', async () => {
    upstream.setScript(() => brokenAfterCall('shell', { cmd: 'rm -rf build' }));
    const reply = await fetch(`${gateway.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'm', input: 'clean up', stream: true, tools: [{ type: 'function', name: 'shell', parameters: { type: 'object' } }] }),
    });
    const { events } = parseSseText(await reply.text());
    const final = assertEventStreamInvariants(events);
    assertValidResponse(final);
    expect(final.status).toBe('failed');
    expect(final.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_broken', arguments: '{"cmd":"rm -rf build"}', status: 'incomplete' })]);
    expect(events.map((event) => event.type)).not.toContain('response.output_item.done');
    expect(events.map((event) => event.type)).not.toContain('response.function_call_arguments.done');
  });

  it('continuing the failed response (previous_response_id, the openai SDK): the model starts afresh without the unfinished call; a client that answers it keeps it', async () => {
    const tools = [{ type: 'function' as const, name: 'shell', parameters: { type: 'object' }, strict: false }];
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    upstream.setScript(() => brokenAfterCall('shell', { cmd: 'ls' }));
    const failed = await client.responses.create({ model: 'm', input: 'list the files', tools, stream: true });
    let failedId = '';
    for await (const event of failed) if (event.type === 'response.failed') failedId = event.response.id;
    expect((await client.responses.retrieve(failedId)).output).toEqual([expect.objectContaining({ type: 'function_call', status: 'incomplete' })]);

    upstream.setScript(refusingDanglingCalls(textReply('Here they are.')));
    const again = await client.responses.create({ model: 'm', input: 'try again', tools, previous_response_id: failedId });
    assertValidResponse(again);
    expect(again.output_text).toBe('Here they are.');
    expect(upstream.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'list the files' }, { role: 'user', content: 'try again' }]);

    const answered = await client.responses.create({ model: 'm', input: [{ type: 'function_call_output', call_id: 'call_broken', output: 'a.txt' }], tools, previous_response_id: failedId });
    expect(answered.status).toBe('completed');
    expect(JSON.stringify(upstream.requests.at(-1)!.body.messages)).toContain('"tool_call_id":"call_broken"');
  });

  it('a stateless client resending the unfinished call unanswered (its own history, then a new message): the model starts afresh without it', async () => {
    const tools = [{ type: 'function' as const, name: 'shell', parameters: { type: 'object' }, strict: false }];
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    upstream.setScript(() => brokenAfterCall('shell', { cmd: 'ls' }));
    const failed = await client.responses.create({ model: 'm', input: 'list the files', tools, stream: true, store: false });
    let output: any[] = [];
    for await (const event of failed) if (event.type === 'response.failed') output = event.response.output;
    expect(output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_broken', status: 'incomplete' })]);

    upstream.setScript(refusingDanglingCalls(textReply('Here they are.')));
    const again = await client.responses.create({ model: 'm', input: [{ role: 'user', content: 'list the files' }, ...output, { role: 'user', content: 'go on' }], tools, store: false });
    assertValidResponse(again);
    expect(again.output_text).toBe('Here they are.');
    expect(upstream.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'list the files' }, { role: 'user', content: 'go on' }]);
  });

  it("a call cut by the model's token limit, continued (previous_response_id, and in a Conversation): the model starts afresh without it", async () => {
    const tools = [{ type: 'function' as const, name: 'shell', parameters: { type: 'object' }, strict: false }];
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const cut = { index: 0, id: 'call_cut', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ec' } };
    const cutReply: UpstreamReply = { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: null, tool_calls: [cut] }), chunk({}, 'length')]) };
    const conversation = (await client.conversations.create({})).id;
    const ways = [
      { first: {}, next: (id: string) => ({ previous_response_id: id }) },
      { first: { conversation }, next: () => ({ conversation }) },
    ];
    for (const way of ways) {
      upstream.setScript(() => cutReply);
      const first = await client.responses.create({ model: 'm', input: 'say hi', tools, stream: true, ...way.first });
      let firstId = '';
      for await (const event of first) if (event.type === 'response.incomplete') firstId = event.response.id;
      expect((await client.responses.retrieve(firstId)).output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_cut', status: 'incomplete' })]);
      upstream.setScript(refusingDanglingCalls(textReply('Hi.')));
      const next = await client.responses.create({ model: 'm', input: 'go on', tools, ...way.next(firstId) });
      assertValidResponse(next);
      expect(next.output_text).toBe('Hi.');
      expect(JSON.stringify(upstream.requests.at(-1)!.body.messages)).not.toContain('call_cut');
    }
  });

  it('the AI SDK (streamText with an executing tool): the tool is never run, the stream reports the failure', async () => {
    upstream.setScript(() => brokenAfterCall('shell', { cmd: 'rm -rf build' }));
    const ran: unknown[] = [];
    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'k' });
    const result = streamText({
      model: openai.responses('m'),
      prompt: 'clean up',
      tools: { shell: tool({ inputSchema: z.object({ cmd: z.string() }), execute: async (input) => void ran.push(input) }) },
    });
    const parts: string[] = [];
    for await (const part of result.fullStream) parts.push(part.type);
    expect(ran).toEqual([]);
    expect(parts).not.toContain('tool-call');
    expect(parts).toContain('error');
  });

  /** Runs `codex exec` once against the gateway, in a fresh home and work directory (its workdir is handed to `check`). */
  async function withCodex(prompt: string, check: (run: Awaited<ReturnType<CodexCli['exec']>>, workdir: string) => void): Promise<void> {
    const codex = new CodexCli({ LOOPGATE_KEY: 'k' });
    await codex.start();
    const home = mkdtempSync(join(tmpdir(), 'loopgate-codex-home-'));
    const workdir = mkdtempSync(join(tmpdir(), 'loopgate-codex-work-'));
    try {
      writeFileSync(join(home, 'config.toml'), CodexCli.gatewayConfig(gateway.baseURL, 'm'));
      check(await codex.exec(home, workdir, prompt), workdir);
    } finally {
      await codex.close();
      rmSync(home, { recursive: true, force: true });
      rmSync(workdir, { recursive: true, force: true });
    }
  }

  it('the Codex CLI: the broken-off shell command is not run; Codex retries the turn and prints the answer', async () => {
    let calls = 0;
    const recovered = textReply('Recovered.');
    upstream.setScript((request) => (++calls === 1 ? brokenAfterCall('exec_command', { cmd: 'echo ran > broken.txt' }) : recovered(request)));
    await withCodex('Write the file.', (run, workdir) => {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('Recovered.');
      expect(existsSync(join(workdir, 'broken.txt'))).toBe(false);
      // The retry resent the turn as it was: no output for a call Codex never ran.
      expect(JSON.stringify(upstream.requests.at(-1)!.body.messages)).not.toContain('call_broken');
    });
  }, 90_000);

  it('the Codex CLI: an answer cut off mid-stream is not done, so Codex does not keep it and resend it on each retry', async () => {
    let calls = 0;
    const recovered = textReply('Recovered.');
    const cutOff: UpstreamReply = { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'Partial answer before the ' })], false), pauseMs: 50, destroyAfter: true };
    upstream.setScript((request) => (++calls <= 2 ? cutOff : recovered(request)));
    const before = upstream.requests.length;
    await withCodex('Answer me.', (run) => {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('Recovered.');
      expect(upstream.requests.length - before).toBe(3);
      // Each retry sent the user's turn as it was, with no copy of the text the failed attempts had begun.
      for (const request of upstream.requests.slice(before)) expect(JSON.stringify(request.body.messages)).not.toContain('Partial answer');
    });
  }, 90_000);
});
