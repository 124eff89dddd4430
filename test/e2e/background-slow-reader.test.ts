import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidEvent } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** 160 deltas of 128 KB (20 MB): far more than the sockets' buffers hold while a reader waits (some 10 MB on loopback). */
function longAnswer(letter: string): UpstreamReply {
  const piece = letter.repeat(131_072);
  return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 160 }, () => chunk({ content: piece })), chunk({}, 'stop'), usageChunk(5, 160)]) };
}

/**
 * A background stream read by a reader that stops after its first bytes and
 * reads on only once the response has completed and `meanwhile` has run; all
 * it received, then its events, each checked against the schema, and the
 * sequence numbers of those that are not errors.
 */
async function readAfterStalling(gateway: RunningGateway, meanwhile: () => Promise<unknown>): Promise<{ text: string; events: any[]; sequences: number[] }> {
  const { port, hostname } = new URL(gateway.baseURL);
  const text = await new Promise<string>((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, path: '/v1/responses', method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      let received = '';
      response.setEncoding('utf8');
      response.once('data', (first: string) => {
        received += first;
        response.pause();
        const id = /"id":"(resp_[^"]+)"/.exec(first)![1];
        waitFor(async () => ((await (await fetch(`${gateway.baseURL}/responses/${id}`)).json()) as { status: string }).status === 'completed', 20_000, 50)
          .then(meanwhile)
          .then(() => {
            response.on('data', (more: string) => (received += more));
            response.on('end', () => resolve(received));
            response.resume();
          }, reject);
      });
    });
    request.on('error', reject);
    request.end(JSON.stringify({ model: 'm', input: 'long', background: true, stream: true }));
  });
  const { events } = parseSseText(text);
  for (const event of events) assertValidEvent(event);
  return { text, events, sequences: events.filter((event) => event.type !== 'error').map((event) => event.sequence_number) };
}

/**
 * A background stream read more slowly than it is written, past the bounds
 * of the kept events: the events it had yet to read are trimmed away. The
 * stream ends with an error event saying so, never with a hole in it (the
 * deltas would no longer add up to the text).
 */
describe('a background stream whose reader fell behind the kept events', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, { background: { maxEvents: 10 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('ends with a stream_events_expired error event, not a stream with a hole', async () => {
    upstream.setScript(() => longAnswer('x'));
    // The reader stops reading until the response has ended and the log kept only its last events.
    const { text, events, sequences } = await readAfterStalling(gateway, async () => {});
    // Whatever arrived is gapless; then the error says what is gone.
    expect(sequences).toEqual(sequences.map((_, index) => index));
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'stream_events_expired' });
    expect(text).not.toContain('[DONE]');
  });
});

/**
 * The same reader, when the memory store lets the finished response go while
 * the reader is still behind: its events go with it. The stream ends saying
 * so, never with a [DONE] after a delta, which would pass for a whole stream.
 */
describe('a background stream whose response the memory store let go while its reader was behind', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    const url = await upstream.start();
    // One response kept; the events of one fit whole (the log's own bounds play no part).
    gateway = await startGateway(url, { store: { maxEntries: 1 }, background: { maxEventBytes: 64 * 1024 * 1024 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('ends with a stream_events_expired error event, not [DONE]', async () => {
    upstream.setScript((request) => (JSON.stringify(request.body).includes('long') ? longAnswer('y') : { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'short' }), chunk({}, 'stop'), usageChunk(1, 1)]) }));
    // Once it has ended, another response pushes it out of the store (one kept), and its events with it.
    const { text, events, sequences } = await readAfterStalling(gateway, () => fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'short', stream: true }) }).then((next) => next.text()));
    expect(sequences).toEqual(sequences.map((_, index) => index));
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'stream_events_expired' });
    expect(text).not.toContain('[DONE]');
  }, 30_000);
});
