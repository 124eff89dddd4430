import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidEvent, assertValidResponse, assertValidWebSocketError } from '../support/openresponses-schema.ts';
import { flavors, scriptModel, type ProviderFlavor } from '../support/provider-flavors.ts';
import { startReplicaPair, type ReplicaPair } from '../support/replica-pair.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { SocketClient } from '../support/socket-client.ts';
import { waitFor } from '../support/wait-for.ts';

const KEY_RPM = 'sk-limits-rpm-0000001';
const KEY_TOKENS = 'sk-limits-tokens-00001';
const KEY_CONCURRENT = 'sk-limits-concurrent-1';
const KEY_FREE = 'sk-limits-free-0000001';

const RPM = 10;
const TPM = 10_000;
/** OpenAI's (Go's) duration format: 20ms, 1s, 8.64s, 6m0s. */
const DURATION = /^(\d+h)?(\d+m)?(\d+(\.\d+)?s|\d+ms)$/;

type Attempt = { ok: true; headers: Headers } | { ok: false; error: InstanceType<typeof OpenAI.APIError> };

/** One response through the SDK, streamed (every event schema-valid) or not; a refusal is returned, not thrown. */
async function attempt(client: OpenAI, body: { model: string; input: string; stream?: boolean; max_output_tokens?: number; background?: boolean }): Promise<Attempt> {
  try {
    if (body.stream) {
      const { data, response } = await client.responses.create({ ...body, stream: true }).withResponse();
      let last: any = null;
      for await (const event of data) {
        assertValidEvent(event);
        last = event;
      }
      expect(last?.type).toBe('response.completed');
      return { ok: true, headers: response.headers };
    }
    const { data, response } = await client.responses.create({ ...body, stream: false }).withResponse();
    assertValidResponse(data);
    return { ok: true, headers: response.headers };
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { ok: false, error };
    throw error;
  }
}

/** A 429 as OpenAI sends it: the error envelope, `retry-after` unless retrying cannot help, and the limit's headers. */
function expectRateLimited(result: Attempt, wording: RegExp): InstanceType<typeof OpenAI.RateLimitError> {
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('accepted');
  const { error } = result;
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  assertErrorEnvelope({ error: error.error });
  expect(error.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
  expect((error.error as { message: string }).message).toMatch(wording);
  return error as InstanceType<typeof OpenAI.RateLimitError>;
}

function expectRetryAfter(headers: Headers, atMostSeconds: number): void {
  const seconds = Number(headers.get('retry-after'));
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(atMostSeconds);
  expect(Number(headers.get('retry-after-ms'))).toBeLessThanOrEqual(seconds * 1_000);
}

function modelCalls(upstream: ScriptedChatUpstream): number {
  return upstream.requests.filter((request) => !request.path.endsWith('/models')).length;
}

/** Streamed answers that take a while (the time to act while a response holds its slot). */
function scriptSlowAnswer(upstream: ScriptedChatUpstream, flavor: ProviderFlavor): void {
  upstream.setScript((request) => {
    const reply = flavor.render(request, { textPieces: ['s', 'l', 'o', 'w', '.'] });
    return reply.kind === 'sse' ? { ...reply, pauseMs: 150 } : { ...reply, delayMs: 750 };
  });
}

describe.each(flavors)('rate limits and quotas across two replicas on one Redis, $name upstream', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let pair: ReplicaPair;
  const sockets: SocketClient[] = [];
  const as = (gateway: RunningGateway, apiKey: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey, maxRetries: 0 });

  beforeAll(async () => {
    const url = await upstream.start();
    pair = await startReplicaPair('redis', url, {
      ...flavor.config(url),
      auth: {
        apiKeys: [
          { key: KEY_RPM, tenant: 'team-a', limits: { requestsPerMinute: RPM } },
          { key: KEY_TOKENS, tenant: 'team-a', limits: { tokensPerMinute: TPM } },
          { key: KEY_CONCURRENT, tenant: 'team-b', limits: { concurrentResponses: 1 } },
          { key: KEY_FREE, tenant: 'team-b' },
        ],
      },
    });
  }, 30_000);
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.close();
  });
  afterAll(async () => {
    await pair.close();
    await upstream.close();
  });

  it('what both replicas accept together stays within requests per minute; each refusal is a 429 with OpenAI\'s headers and costs no upstream call', async () => {
    scriptModel(upstream, flavor, () => ({ text: 'ok' }));
    const before = modelCalls(upstream);
    const clients = [as(pair.one, KEY_RPM), as(pair.other, KEY_RPM)];
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 3 * RPM }, (_, index) => attempt(clients[index % 2]!, { model: flavor.model, input: `request ${index}`, stream: index % 3 === 0 })));
    const elapsedSeconds = (performance.now() - started) / 1_000;

    const accepted = results.filter((result) => result.ok);
    // A bucket of RPM, refilled one request per 60/RPM seconds: a burst gets the bucket, plus what refilled meanwhile.
    expect(accepted.length).toBeGreaterThanOrEqual(RPM);
    expect(accepted.length).toBeLessThanOrEqual(RPM + Math.floor((elapsedSeconds * RPM) / 60));
    expect(modelCalls(upstream) - before).toBe(accepted.length);

    for (const result of accepted) {
      expect(result.headers.get('x-ratelimit-limit-requests')).toBe(String(RPM));
      expect(Number(result.headers.get('x-ratelimit-remaining-requests'))).toBeLessThan(RPM);
      expect(result.headers.get('x-ratelimit-reset-requests')).toMatch(DURATION);
      // Limits that are off are not reported.
      expect(result.headers.get('x-ratelimit-limit-tokens')).toBeNull();
    }
    const refused = results.filter((result) => !result.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const result of refused) {
      const error = expectRateLimited(result, /requests per minute/);
      expect(error.headers.get('x-ratelimit-limit-requests')).toBe(String(RPM));
      expect(error.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      expect(error.headers.get('x-ratelimit-reset-requests')).toMatch(DURATION);
      expectRetryAfter(error.headers, 60 / RPM);
    }

    // Another key of the same tenant has limits of its own (none).
    const free = await attempt(as(pair.other, KEY_FREE), { model: flavor.model, input: 'unmetered' });
    expect(free.ok).toBe(true);
    if (free.ok) expect(free.headers.get('x-ratelimit-limit-requests')).toBeNull();
  });

  it("tokens per minute: the first call's estimate is reserved, the upstream's reported usage charged at the end; what does not fit is refused before any upstream call", async () => {
    scriptModel(upstream, flavor, () => ({ text: 'ok', usage: { input: 6_000, output: 2_000 } }));
    const one = as(pair.one, KEY_TOKENS);
    const other = as(pair.other, KEY_TOKENS);

    const first = await attempt(one, { model: flavor.model, input: 'hello', stream: true, max_output_tokens: 100 });
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    // Reserved: the input's estimate (a few tokens) plus max_output_tokens.
    const reservedLeft = Number(first.headers.get('x-ratelimit-remaining-tokens'));
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe(String(TPM));
    expect(reservedLeft).toBeLessThanOrEqual(TPM - 100);
    expect(reservedLeft).toBeGreaterThan(TPM - 200);

    // The response really used 8,000 tokens: about 2,000 are left, on every replica.
    const before = modelCalls(upstream);
    const tooMuch = await attempt(other, { model: flavor.model, input: 'hello', max_output_tokens: 5_000 });
    const error = expectRateLimited(tooMuch, /tokens per minute/);
    const left = Number(error.headers.get('x-ratelimit-remaining-tokens'));
    expect(left).toBeGreaterThanOrEqual(TPM - 8_000);
    expect(left).toBeLessThan(5_000);
    expect(error.headers.get('x-ratelimit-reset-tokens')).toMatch(DURATION);
    // 3,000 more tokens come back at 10,000 a minute: some 18 s.
    expectRetryAfter(error.headers, 19);

    // More than the limit itself can never pass: said so, and not worth a retry.
    const never = expectRateLimited(await attempt(one, { model: flavor.model, input: 'hello', max_output_tokens: TPM + 1 }), /cannot pass/);
    expect(never.headers.get('retry-after')).toBeNull();
    expect(never.headers.get('x-should-retry')).toBe('false');
    expect(modelCalls(upstream)).toBe(before);

    // What still fits passes.
    expect((await attempt(other, { model: flavor.model, input: 'hello', max_output_tokens: 500 })).ok).toBe(true);
  });

  it('concurrent responses: a running response holds the slot on every replica until it ends, is cancelled by a disconnect, or its background run finishes', async () => {
    scriptSlowAnswer(upstream, flavor);
    const one = as(pair.one, KEY_CONCURRENT);
    const other = as(pair.other, KEY_CONCURRENT);
    const before = modelCalls(upstream);

    const running = await one.responses.create({ model: flavor.model, input: 'take your time', stream: true });
    const events = running[Symbol.asyncIterator]();
    expect((await events.next()).value).toMatchObject({ type: 'response.created' });

    const refused = expectRateLimited(await attempt(other, { model: flavor.model, input: 'me too' }), /concurrent responses/);
    expectRetryAfter(refused.headers, 1);
    const socket = new SocketClient(other);
    sockets.push(socket);
    const [frame] = await socket.create({ model: flavor.model, input: 'me too, over a WebSocket' });
    assertValidWebSocketError(frame);
    expect(frame).toMatchObject({ type: 'error', status: 429, error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    expect(modelCalls(upstream) - before).toBe(1);

    for (let next = await events.next(); !next.done; next = await events.next()) assertValidEvent(next.value);
    // The stream ended after the slot was freed: the next response starts at once.
    expect((await attempt(other, { model: flavor.model, input: 'my turn' })).ok).toBe(true);

    // A client that goes away cancels its response, which frees the slot.
    const abandoned = await one.responses.create({ model: flavor.model, input: 'never mind', stream: true });
    const abandonedEvents = abandoned[Symbol.asyncIterator]();
    expect((await abandonedEvents.next()).value).toMatchObject({ type: 'response.created' });
    abandoned.controller.abort();
    await waitFor(async () => (await attempt(other, { model: flavor.model, input: 'after the disconnect' })).ok, 8_000, 100);

    // A background response holds it while it runs, detached from its request.
    const queued = await one.responses.create({ model: flavor.model, input: 'in the background', background: true });
    expectRateLimited(await attempt(other, { model: flavor.model, input: 'while it runs' }), /concurrent responses/);
    await waitFor(async () => (await other.responses.retrieve(queued.id)).status === 'completed', 8_000);
    await waitFor(async () => (await attempt(other, { model: flavor.model, input: 'after it' })).ok, 8_000, 100);
  });
});
