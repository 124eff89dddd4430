import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { assertErrorEnvelope } from '../support/openresponses-schema.ts';
import { useGatewayProcess } from '../support/gateway-process.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const MIB = 1_048_576;

/** A request whose input is `mib` MiB of text, a MiB a message (one text may be 10 MiB). */
function bodyOf(mib: number): string {
  return JSON.stringify({ model: 'm', input: Array.from({ length: mib }, () => ({ role: 'user', content: 'x'.repeat(MIB) })) });
}

/**
 * Large request bodies at once, in a process whose heap is small (a
 * container's): the body limit (50 MiB) bounds one request, and three bodies
 * of 30 MiB at once took a 128 MB heap down — every response in flight
 * with it — where they must be refused, with a retryable 503, before they
 * are read.
 */
describe('large request bodies at once, in a process with a small heap', () => {
  const upstream = new ScriptedChatUpstream(textReply('read it'));
  const running = useGatewayProcess(upstream, { NODE_OPTIONS: '--max-old-space-size=128' });

  const post = (body: string) => fetch(`${running().baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('says at start that the body limit is more than the heap allows', () => {
    expect(running().logs.some((line) => line.level === 40 && /bodyLimitBytes is more than an eighth of the JS heap/.test(line.msg))).toBe(true);
  });

  it('reads one at a time what does not fit at once, refusing the others with a retryable 503; the process lives on', { timeout: 60_000 }, async () => {
    const answers = await Promise.all([post(bodyOf(30)), post(bodyOf(30)), post(bodyOf(30))]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 503, 503]);
    for (const answer of answers) {
      const body = (await answer.json()) as { error?: { code: string } };
      if (answer.status !== 503) continue;
      assertErrorEnvelope(body);
      expect(body.error?.code).toBe('server_overloaded');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    // Refused ones retried one by one go through.
    expect((await post(bodyOf(30))).status).toBe(200);
    expect(running().child.exitCode).toBeNull();
    expect(running().stderr()).not.toMatch(/heap out of memory/);
  });

  it('counts what bodies are, not what they say: chunked with no Content-Length, and compressed (30 MiB of JSON gzipped to 31 KB)', { timeout: 60_000 }, async () => {
    const chunked = (body: string) =>
      fetch(`${running().baseURL}/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(controller) {
            for (let at = 0; at < body.length; at += MIB) controller.enqueue(new TextEncoder().encode(body.slice(at, at + MIB)));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
    const zipped = gzipSync(bodyOf(30));
    const compressed = () => fetch(`${running().baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: zipped });
    for (const send of [() => chunked(bodyOf(30)), compressed]) {
      const answers = await Promise.all([send(), send(), send()]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 503, 503]);
      for (const answer of answers) if (answer.status === 503) expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('server_overloaded');
    }
    expect(running().child.exitCode).toBeNull();
  });

  it('refuses with a 413 a body under the body limit that the heap cannot take at all', async () => {
    const answer = await post(bodyOf(45));
    expect(answer.status).toBe(413);
    const body = (await answer.json()) as { error: { code: string; message: string } };
    assertErrorEnvelope(body);
    expect(body.error.code).toBe('request_too_large');
    expect(body.error.message).toMatch(/larger than this gateway's memory allows/);
    // Ordinary requests are served beside all this.
    expect((await post(JSON.stringify({ model: 'm', input: 'hi' }))).status).toBe(200);
  });
});
