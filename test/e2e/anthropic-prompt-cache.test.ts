import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { flavors, scriptModel } from '../support/provider-flavors.ts';
import type { RecordedRequest } from '../support/scripted-chat-upstream.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

const anthropic = flavors.find((flavor) => flavor.name === 'anthropic')!;
const tokensOf = (text: string) => Math.ceil(text.length / 4);

/**
 * Anthropic's prompt cache, as far as marks go: each block marked
 * `cache_control` writes the prompt up to it (tools, then system, then
 * messages), and a later request whose prompt up to one of its own marks is
 * one already written reads it. (Anthropic also looks back about 20 blocks
 * from a mark; the gateway's marks are placed not to need that.)
 */
class PromptCacheModel {
  readonly #written = new Set<string>();
  /** Per request served: its input tokens and how many of them were read from the cache. */
  readonly served: { input: number; cached: number }[] = [];

  serve(body: any): { input: number; cached: number } {
    const blocks: unknown[] = [];
    const prefixes: string[] = [];
    const add = (block: Record<string, unknown>) => {
      const { cache_control: mark, ...plain } = block;
      blocks.push(plain);
      if (mark) prefixes.push(JSON.stringify(blocks));
    };
    for (const tool of body.tools ?? []) add(tool);
    if (typeof body.system === 'string') add({ type: 'text', text: body.system });
    else for (const block of body.system ?? []) add(block);
    for (const message of body.messages) {
      blocks.push({ role: message.role });
      for (const block of message.content) add(block);
    }
    const input = tokensOf(JSON.stringify(blocks));
    const cached = Math.max(0, ...prefixes.filter((prefix) => this.#written.has(prefix)).map(tokensOf));
    for (const prefix of prefixes) this.#written.add(prefix);
    this.served.push({ input, cached });
    return { input, cached };
  }
}

describe.each([
  ['auto', true],
  ['off', false],
] as const)('Anthropic prompt caching: promptCaching %s', (promptCaching, caches) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  const cache = new PromptCacheModel();

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    const config = anthropic.config(upstreamUrl) as { providers: { anthropic: Record<string, unknown> } };
    gateway = await startGateway(upstreamUrl, { ...config, providers: { anthropic: { ...config.providers.anthropic, promptCaching } }, mcp: { servers: [{ name: 'calc', url: mcpUrl }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    // Two additions, one per model call, then the answer; each call's usage as the cache model says.
    scriptModel(upstream, anthropic, (request: RecordedRequest, results) => {
      const usage = { ...cache.serve(request.body), output: 5 };
      if (results.length < 2) return { calls: [{ id: `call_${results.length}`, name: 'calc__add', args: { a: results.length + 1, b: 2 } }], usage };
      return { text: `Got ${results.join(' and ')}.`, usage };
    });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it(`a tool loop and its continuation ${caches ? 'read what each earlier call wrote' : 'read nothing from the cache'}; usage says so as cached_tokens`, async () => {
    const response = await client.responses.create({ model: anthropic.model, instructions: 'You add numbers with the calc tool.', input: 'Add 1+2, then 2+2.' });
    assertValidResponseWithMcpItems(response);
    expect(response.output_text).toBe('Got 3 and 4.');
    const loop = cache.served.slice();
    expect(loop).toHaveLength(3);
    const cachedInLoop = loop.reduce((sum, call) => sum + call.cached, 0);
    expect(response.usage!.input_tokens_details.cached_tokens).toBe(cachedInLoop);
    expect(response.usage!.input_tokens).toBe(loop.reduce((sum, call) => sum + call.input, 0));

    const next = await client.responses.create({ model: anthropic.model, instructions: 'You add numbers with the calc tool.', previous_response_id: response.id, input: 'Now 3+3 and 4+4.' });
    assertValidResponseWithMcpItems(next);
    const continuation = cache.served.slice(3);
    if (caches) {
      // The first call writes; every later one reads the whole prompt of the call before it, the continuation's first call too.
      const calls = [...loop, ...continuation];
      expect(calls[0]!.cached).toBe(0);
      for (let index = 1; index < calls.length; index++) expect(calls[index]!.cached, `call ${index}`).toBe(calls[index - 1]!.input);
      expect(next.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    } else {
      expect([...loop, ...continuation].every((call) => call.cached === 0)).toBe(true);
      expect(next.usage!.input_tokens_details.cached_tokens).toBe(0);
    }
  });

  it("the client's prompt_cache_options reach the marks: a 12h lifetime is Anthropic's hour on each, mode explicit leaves none where the client set none", async () => {
    scriptModel(upstream, anthropic, () => ({ text: 'ok' }));
    assertValidResponse(await client.responses.create({ model: anthropic.model, instructions: 'Be brief.', input: 'hi', prompt_cache_options: { ttl: '12h' } } as never));
    const marks = JSON.stringify(upstream.requests.at(-1)!.body).match(/"cache_control":\{[^}]*\}/g) ?? [];
    expect(marks).toEqual(caches ? ['"cache_control":{"type":"ephemeral","ttl":"1h"}', '"cache_control":{"type":"ephemeral","ttl":"1h"}'] : []);
    assertValidResponse(await client.responses.create({ model: anthropic.model, instructions: 'Be brief.', input: 'hi', prompt_cache_options: { mode: 'explicit' } } as never));
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).not.toContain('cache_control');
  });
});
