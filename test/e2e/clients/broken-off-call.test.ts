import { createOpenAI } from '@ai-sdk/openai';
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
import { chunk, ScriptedChatUpstream, sse, textReply, type UpstreamReply } from '../../support/scripted-chat-upstream.ts';

/** A Chat stream that gets as far as a whole tool call, then loses its connection: the model never finished its turn. */
function brokenAfterCall(name: string, args: Record<string, unknown>): UpstreamReply {
  const call = { index: 0, id: 'call_broken', type: 'function', function: { name, arguments: JSON.stringify(args) } };
  return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: null, tool_calls: [call] })], false), pauseMs: 50, destroyAfter: true };
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

  it('the Codex CLI: the broken-off shell command is not run; Codex retries the turn and prints the answer', async () => {
    const codex = new CodexCli({ LOOPGATE_KEY: 'k' });
    await codex.start();
    const home = mkdtempSync(join(tmpdir(), 'loopgate-codex-home-'));
    const workdir = mkdtempSync(join(tmpdir(), 'loopgate-codex-work-'));
    try {
      writeFileSync(
        join(home, 'config.toml'),
        ['model = "m"', 'model_provider = "loopgate"', 'check_for_update_on_startup = false', '[features]', 'plugins = false', '[analytics]', 'enabled = false', '[model_providers.loopgate]', 'name = "loopgate"', `base_url = "${gateway.baseURL}"`, 'wire_api = "responses"', 'env_key = "LOOPGATE_KEY"', ''].join('\n'),
      );
      let calls = 0;
      const recovered = textReply('Recovered.');
      upstream.setScript((request) => (++calls === 1 ? brokenAfterCall('exec_command', { cmd: 'echo ran > broken.txt' }) : recovered(request)));
      const run = await codex.exec(home, workdir, 'Write the file.');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('Recovered.');
      expect(existsSync(join(workdir, 'broken.txt'))).toBe(false);
      // The retry resent the turn as it was: no output for a call Codex never ran.
      expect(JSON.stringify(upstream.requests.at(-1)!.body.messages)).not.toContain('call_broken');
    } finally {
      await codex.close();
      rmSync(home, { recursive: true, force: true });
      rmSync(workdir, { recursive: true, force: true });
    }
  }, 90_000);
});
