import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope } from '../support/openresponses-schema.ts';
import { anthropic, flavors, type ProviderFlavor } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** The bounds each test configures, far below the defaults so the tests stay quick. */
const FIRST_BYTE_MS = 400;
const IDLE_MS = 400;
const TOTAL_MS = 1_200;
/** Slack for a small, noisy machine. */
const SLACK_MS = 1_500;

/** Each upstream's first bytes of a reply (the response opened, some text), then silence. */
function stalledAfterText(flavor: ProviderFlavor, request: RecordedRequest): UpstreamReply {
  const reply = flavor.render(request, { text: 'partial' });
  if (reply.kind !== 'sse') throw new Error('a streamed reply was expected');
  return { kind: 'sse', pieces: reply.pieces.slice(0, flavor.piecesThroughFirstText), endAfter: false };
}

describe.each(flavors)('every upstream call is bounded in time: $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  const post = async (body: Record<string, unknown>) => {
    const started = Date.now();
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'x', store: false, ...body }) });
    return { status: response.status, text: await response.text(), elapsedMs: Date.now() - started };
  };

  beforeAll(async () => {
    const config = flavor.config(await upstream.start()) as { providers: Record<string, Record<string, unknown>> };
    for (const provider of Object.values(config.providers)) {
      Object.assign(provider, { firstByteTimeoutMs: FIRST_BYTE_MS, idleTimeoutMs: IDLE_MS, ...(provider.type === 'anthropic' && { timeoutMs: TOTAL_MS }) });
    }
    gateway = await startGateway('http://unused.invalid/v1', config);
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('no response headers within firstByteTimeoutMs: 504 upstream_timeout, JSON and streaming', async () => {
    upstream.setScript(() => ({ kind: 'hang' }));
    for (const stream of [false, true]) {
      const answer = await post({ stream });
      expect(answer.status).toBe(504);
      const body = JSON.parse(answer.text);
      assertErrorEnvelope(body);
      expect(body.error.code).toBe('upstream_timeout');
      expect(answer.elapsedMs).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 50);
      expect(answer.elapsedMs).toBeLessThan(FIRST_BYTE_MS + SLACK_MS);
    }
  });

  it('silence inside a stream longer than idleTimeoutMs: the response fails with upstream_timeout', async () => {
    upstream.setScript((request) => stalledAfterText(flavor, request));
    const answer = await post({ stream: true });
    expect(answer.status).toBe(200);
    const last = parseSseText(answer.text).events.at(-1)!;
    expect(last.type).toBe('response.failed');
    expect(last.response.error.code).toBe('upstream_timeout');
    expect(answer.elapsedMs).toBeLessThan(IDLE_MS + SLACK_MS);
  });

  // Anthropic's provider streams every call; the others read a JSON answer whole when the client does not stream.
  if (flavor !== anthropic) it('a JSON answer whose body stops partway for longer than idleTimeoutMs: 504 upstream_timeout, not an invalid answer', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: ['{"id":"partial","choices":['], endAfter: false }));
    const answer = await post({ stream: false });
    expect(answer.status).toBe(504);
    const body = JSON.parse(answer.text);
    assertErrorEnvelope(body);
    expect(body.error.code).toBe('upstream_timeout');
    expect(answer.elapsedMs).toBeLessThan(IDLE_MS + SLACK_MS);
  });

  // Only Anthropic's provider has a whole-call bound (timeoutMs); a Chat Completions, Responses or Gemini call is bounded by the response deadline.
  if (flavor === anthropic) it('a stream that never ends (pings every 100 ms) is cut at timeoutMs: 504 upstream_timeout', async () => {
    upstream.setScript((request) => {
      const opening = stalledAfterText(flavor, request) as Extract<UpstreamReply, { kind: 'sse' }>;
      const ping = 'event: ping\ndata: {"type":"ping"}\n\n';
      return { kind: 'sse', pieces: [opening.pieces[0]!, ...Array.from({ length: 200 }, () => ping)], pauseMs: 100, endAfter: false };
    });
    const answer = await post({ stream: false });
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.text).error.code).toBe('upstream_timeout');
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(TOTAL_MS - 50);
    expect(answer.elapsedMs).toBeLessThan(TOTAL_MS + SLACK_MS);
  }, 8_000);
});
