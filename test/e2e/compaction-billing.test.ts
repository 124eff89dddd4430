import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACTION_REQUEST } from '../../src/engine/compaction/compaction-prompt.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { delta, parsePrometheusText, sumOf } from '../support/prometheus-text.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const KEY = 'sk-compaction-billing-0123';
const TPM = 3_000;

/** Asked for a summary, the model runs out of output tokens (`finish_reason: length`) after reading 900 tokens: the upstream bills 950. */
function cutShortSummaries(request: RecordedRequest): UpstreamReply {
  const messages = request.body.messages as { role: string; content: unknown }[];
  if (messages.at(-1)?.content !== COMPACTION_REQUEST) return textCompletion('ok');
  if (request.body.stream) return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'The user wa' }), chunk({}, 'length'), usageChunk(900, 50)]) };
  return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'The user wa' }, finish_reason: 'length' }], usage: { prompt_tokens: 900, completion_tokens: 50, total_tokens: 950 } } };
}

/**
 * A summary the upstream cut short is still a 502 (no compaction item), but
 * the upstream billed the call: the tenant is charged it, in `/v1/usage` and
 * against its token limits — else a window compacted with a tiny
 * `max_output_tokens`, again and again, would cost nothing.
 */
describe('a compaction whose summary failed is charged what the upstream billed', () => {
  const upstream = new ScriptedChatUpstream(cutShortSummaries);
  let gateway: RunningGateway;
  let client: OpenAI;
  const today = new Date().toISOString().slice(0, 10);
  const tokensUsed = async () => {
    const usage = (await (await fetch(`${gateway.baseURL}/usage?start=${today}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as { data: { input_tokens: number; output_tokens: number }[] };
    return usage.data.reduce((sum, row) => sum + row.input_tokens + row.output_tokens, 0);
  };

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { auth: { apiKeys: [{ key: KEY, tenant: 'team-c', limits: { tokensPerMinute: TPM } }] }, compaction: { key: Buffer.alloc(32, 'billing').toString('base64') } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: KEY, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('on the compact endpoint, on an in-response trigger (JSON and streamed) and on a background one; then the token limit refuses', async () => {
    const window = [{ role: 'user' as const, content: 'A long conversation to summarise.' }];
    let charged = await tokensUsed();
    const expectCharged = async () => {
      await waitFor(async () => (await tokensUsed()) === charged + 950, 3_000);
      charged += 950;
    };

    await expect(client.responses.compact({ model: 'm', input: window })).rejects.toMatchObject({ status: 502, code: 'summary_truncated' });
    await expectCharged();

    const trigger = { model: 'm', max_output_tokens: 16, input: [...window, { type: 'compaction_trigger' }] } as never;
    await expect(client.responses.create(trigger)).rejects.toMatchObject({ status: 502, code: 'summary_truncated' });
    await expectCharged();
    await expect(client.responses.create({ ...(trigger as object), stream: true } as never)).rejects.toMatchObject({ status: 502, code: 'summary_truncated' });
    await expectCharged();

    const background = await client.responses.create({ ...(trigger as object), background: true } as never);
    let ended: OpenAI.Responses.Response = background;
    await waitFor(async () => (ended = await client.responses.retrieve(background.id)).status === 'failed', 5_000);
    assertValidResponse(ended);
    expect(ended.error).toMatchObject({ code: 'summary_truncated' });
    expect(ended.usage).toMatchObject({ input_tokens: 900, output_tokens: 50, total_tokens: 950 });
    await expectCharged();

    // 3,800 tokens spent of 3,000 a minute: the next compaction waits for the bucket to refill.
    const refused = await client.responses.compact({ model: 'm', input: window }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 429 });
  });
});

/**
 * A compaction is a model call, though no response: its tokens count in
 * `loopgate_tokens_total` beside `/v1/usage`, and a call that fails counts in
 * `loopgate_upstream_errors_total`, as a response's would (an operator
 * reconciling the metrics with the upstream's bill, or alerting on upstream
 * errors, saw nothing of compactions).
 */
describe('compactions in the metrics', () => {
  const upstream = new ScriptedChatUpstream((request) => {
    const text = JSON.stringify(request.body.messages);
    if (text.includes('upstream down')) return { kind: 'json', status: 500, body: { error: { message: 'boom' } } };
    const summary = text.includes('nothing to say') ? '' : 'The user said hello.';
    return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: summary }, finish_reason: 'stop' }], usage: { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320 } } };
  });
  let gateway: RunningGateway;
  let client: OpenAI;
  const scrape = async () => parsePrometheusText(await (await fetch(`${gateway.origin}/metrics`)).text());

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { compaction: { key: Buffer.alloc(32, 'metrics').toString('base64') } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('counts the tokens of a compaction, a failed summary the upstream billed, and an upstream that failed', async () => {
    const tokens = (type: string) => ({ provider: 'openai', tenant: 'default', type });
    let before = await scrape();
    const compacted = await client.responses.compact({ model: 'm', input: [{ role: 'user', content: 'hello' }] });
    expect(compacted.output.at(-1)).toMatchObject({ type: 'compaction' });
    let after = await scrape();
    expect(delta(before, after, 'loopgate_tokens_total', tokens('input'))).toBe(300);
    expect(delta(before, after, 'loopgate_tokens_total', tokens('output'))).toBe(20);

    before = after;
    await expect(client.responses.compact({ model: 'm', input: [{ role: 'user', content: 'nothing to say' }] })).rejects.toMatchObject({ status: 502, code: 'summary_empty' });
    after = await scrape();
    expect(delta(before, after, 'loopgate_tokens_total', tokens('input'))).toBe(300);
    // The upstream answered: the summary failed, not the call.
    expect(sumOf(after, 'loopgate_upstream_errors_total') - sumOf(before, 'loopgate_upstream_errors_total')).toBe(0);

    before = after;
    await expect(client.responses.compact({ model: 'm', input: [{ role: 'user', content: 'upstream down' }] })).rejects.toMatchObject({ status: 502 });
    after = await scrape();
    expect(delta(before, after, 'loopgate_upstream_errors_total', { provider: 'openai', code: 'upstream_error' })).toBe(1);
    expect(delta(before, after, 'loopgate_tokens_total', tokens('input'))).toBe(0);
  });
});
