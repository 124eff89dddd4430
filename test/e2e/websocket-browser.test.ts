import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import NodeWebSocket from 'ws';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { launchChromium, type HeadlessChromium } from '../support/headless-chromium.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const KEY = 'sk-browser-socket-0123';

/** What the page's WebSocket saw: the protocol the gateway chose, every event, or how it failed. */
interface SocketRun {
  opened: boolean;
  protocol: string;
  events: any[];
  closeCode: number | null;
}

/** Opens a WebSocket from the page (another origin than the gateway's), creates one response, and collects its events. */
function runInPage(page: Page, url: string, protocols: string[]): Promise<SocketRun> {
  return page.evaluate(
    ({ url, protocols }) =>
      new Promise<SocketRun>((resolve) => {
        const run: SocketRun = { opened: false, protocol: '', events: [], closeCode: null };
        const socket = new WebSocket(url, protocols);
        socket.onopen = () => {
          run.opened = true;
          run.protocol = socket.protocol;
          socket.send(JSON.stringify({ type: 'response.create', model: 'm', input: 'Say hello' }));
        };
        socket.onmessage = (message) => {
          const event = JSON.parse(message.data as string);
          run.events.push(event);
          if (event.type === 'response.completed' || event.type === 'response.failed' || event.type === 'error') socket.close(1000);
        };
        socket.onclose = (event) => {
          run.closeCode = event.code;
          resolve(run);
        };
      }),
    { url, protocols },
  );
}

/**
 * A browser page on the WebSocket mode of a gateway with API keys: a page
 * cannot set `Authorization` on a WebSocket, so it offers its key as the
 * subprotocol `openai-insecure-api-key.<key>` (OpenAI's browser convention).
 */
describe('a browser page on the WebSocket mode, with API keys', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello from the socket'));
  let gateway: RunningGateway;
  let pages: Server;
  let browser: HeadlessChromium;
  let page: Page;
  let socketUrl: string;

  beforeAll(async () => {
    pages = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    gateway = await startGateway(await upstream.start(), { auth: { apiKeys: [{ key: KEY, tenant: 'team-a' }] }, server: { corsOrigins: [pageOrigin] } });
    socketUrl = `${gateway.origin.replace('http:', 'ws:')}/v1/responses`;
    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.goto(pageOrigin);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await upstream.close();
    await new Promise((resolve) => pages.close(resolve));
  });

  for (const protocols of [[`openai-insecure-api-key.${KEY}`], ['openresponses', `openai-insecure-api-key.${KEY}`]]) {
    it(`connects with the key offered as a subprotocol and runs a response (offered: ${protocols.length === 1 ? 'the key alone' : 'a protocol and the key'})`, async () => {
      const run = await runInPage(page, socketUrl, protocols);
      expect(run.opened).toBe(true);
      // The browser requires one of its offers chosen; the key is repeated only when nothing else was offered.
      expect(run.protocol).toBe(protocols[0]);
      const response = assertEventStreamInvariants(run.events);
      expect(response.status).toBe('completed');
      expect(response.output[0].content[0].text).toBe('Hello from the socket');
      expect(run.closeCode).toBe(1000);
    });
  }

  it('a wrong key, or none, is refused before the protocol switch (the page sees the socket fail)', async () => {
    for (const protocols of [['openai-insecure-api-key.sk-wrong'], ['openresponses']]) {
      const run = await runInPage(page, socketUrl, protocols);
      expect(run.opened).toBe(false);
      expect(run.events).toEqual([]);
      expect(run.closeCode).toBe(1006);
    }
    // What the page cannot read, the handshake says: 401 in the error shape.
    const refused = await new Promise<{ status: number; body: string }>((resolve) => {
      const socket = new NodeWebSocket(socketUrl, ['openai-insecure-api-key.sk-wrong']);
      socket.on('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (piece: Buffer) => (body += piece));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
    });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  });
});
