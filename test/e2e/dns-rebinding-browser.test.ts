import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { launchChromium, type HeadlessChromium } from '../support/headless-chromium.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const SECRET_ANSWER = 'the vault code is 4921';

/**
 * A DNS-rebinding page in a real Chromium, against a gateway that asks no
 * API key: the attacker's name (`rebind.test`) resolves to this machine, so
 * the page is same-origin with the gateway under that name. Its GETs carry
 * no `Origin` and, the page being plain http on a name that is not
 * localhost, no `Sec-Fetch-Site` either. Chromium's own Local Network Access
 * checks (which would block the page by themselves) are switched off, to
 * stand for the browsers that have none.
 */
describe('a DNS-rebinding page in a real browser, without API keys', () => {
  const upstream = new ScriptedChatUpstream(textReply(SECRET_ANSWER));
  let gateway: RunningGateway;
  let browser: HeadlessChromium;
  let storedId: string;

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { inspector: { enabled: true } });
    const stored = (await (await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'what is the code?' }) })).json()) as { id: string };
    assertValidResponse(stored);
    storedId = stored.id;
    browser = await launchChromium([
      '--host-resolver-rules=MAP rebind.test 127.0.0.1',
      '--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks',
    ]);
  });
  afterAll(async () => {
    await browser.close();
    await gateway.close();
    await upstream.close();
  });

  /** Opens a page of `origin` (served by the gateway itself: a rebound name reaches it) and reads `paths` from it, same-origin. */
  async function readFrom(origin: string, paths: string[]): Promise<{ path: string; status: number; body: string }[]> {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${origin}/healthz`);
      return await page.evaluate(
        async (toRead) =>
          Promise.all(
            toRead.map(async (path) => {
              const answer = await fetch(path);
              return { path, status: answer.status, body: await answer.text() };
            }),
          ),
        paths,
      );
    } finally {
      await page.close();
    }
  }

  it("the rebound page reads nothing: stored responses, their input items, the inspector's list, usage and models are 403 host_not_allowed", async () => {
    const { port } = new URL(gateway.baseURL);
    const paths = [`/v1/responses/${storedId}`, `/v1/responses/${storedId}/input_items`, '/v1/inspector/responses', '/v1/usage', '/v1/models'];
    for (const { path, status, body } of await readFrom(`http://rebind.test:${port}`, paths)) {
      expect(status, path).toBe(403);
      const refusal = JSON.parse(body);
      assertErrorEnvelope(refusal);
      expect(refusal.error).toMatchObject({ type: 'invalid_request_error', code: 'host_not_allowed' });
      expect(body).not.toContain(SECRET_ANSWER);
    }
  });

  it('the same browser reads them from the gateway opened by address or as localhost', async () => {
    const { port } = new URL(gateway.baseURL);
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const [response] = await readFrom(origin, [`/v1/responses/${storedId}`]);
      expect(response!.status, origin).toBe(200);
      expect(response!.body).toContain(SECRET_ANSWER);
    }
  });
});
