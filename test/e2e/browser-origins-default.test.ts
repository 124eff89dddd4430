import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

/** A page's preflight for a JSON POST, and the POST itself: what the page may read of the answer. */
async function asPage(gateway: RunningGateway, origin: string, authorization?: string): Promise<{ preflight: string | null; answer: string | null; status: number }> {
  const preflight = await fetch(`${gateway.baseURL}/responses`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' } });
  const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { origin, 'content-type': 'application/json', ...(authorization && { authorization }) }, body: JSON.stringify({ model: 'm', input: 'x' }) });
  await answer.text();
  return { preflight: preflight.headers.get('access-control-allow-origin'), answer: answer.headers.get('access-control-allow-origin'), status: answer.status };
}

/**
 * Which pages may call a gateway whose `server.corsOrigins` is not set.
 * Without API keys there is nothing a page must hold: any website a user
 * opened could run responses on the operator's account and read or delete
 * what is stored, so only pages on this machine (a frontend's dev server)
 * may. With keys, a page must hold one: any origin.
 */
describe('browser origins when server.corsOrigins is not set', () => {
  const upstream = new ScriptedChatUpstream(textReply('hi'));
  let open: RunningGateway;
  let keyed: RunningGateway;

  beforeAll(async () => {
    const url = await upstream.start();
    open = await startGateway(url);
    keyed = await startGateway(url, { auth: { apiKeys: [{ key: 'sk-page-key-1', tenant: 'team-a' }] } });
  });
  afterAll(async () => {
    await Promise.all([open.close(), keyed.close()]);
    await upstream.close();
  });

  it('without API keys: pages on this machine only', async () => {
    for (const origin of ['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8000', 'https://app.localhost']) {
      expect(await asPage(open, origin), origin).toEqual({ preflight: origin, answer: origin, status: 200 });
    }
    for (const origin of ['https://evil.example', 'http://192.168.1.20:3000', 'http://localhost.evil.example', 'null']) {
      const seen = await asPage(open, origin);
      expect(seen.preflight, origin).toBeNull();
      expect(seen.answer, origin).toBeNull();
    }
  });

  it('with API keys: any origin, the key being what a page must hold', async () => {
    expect(await asPage(keyed, 'https://app.example', 'Bearer sk-page-key-1')).toEqual({ preflight: '*', answer: '*', status: 200 });
    expect((await asPage(keyed, 'https://evil.example')).status).toBe(401);
  });
});
