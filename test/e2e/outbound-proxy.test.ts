import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/** A forward proxy as corporate networks run them: tunnels (CONNECT) and absolute-form requests, each counted. */
function forwardProxy(): Server & { seen: string[] } {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    const target = new URL(request.url!);
    const forwarded = httpRequest({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(response);
    });
    request.pipe(forwarded);
  });
  server.on('connect', (request, client, head) => {
    seen.push(`CONNECT ${request.url}`);
    const [host, port] = request.url!.split(':');
    const upstream = connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  return Object.assign(server, { seen });
}

/**
 * Behind an egress proxy the environment names it (`HTTPS_PROXY`,
 * `HTTP_PROXY`, `NO_PROXY`, as curl reads them). The gateway's upstream
 * pools read none of that by themselves: every model call failed as
 * `upstream_unreachable` where curl, in the same shell, got through.
 */
describe.each(flavors.filter((flavor) => flavor.name === 'openai-chat' || flavor.name === 'anthropic'))('an outbound proxy from the environment: $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const proxy = forwardProxy();
  let gateway: RunningGateway;
  let upstreamUrl: string;
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };

  beforeAll(async () => {
    const url = (upstreamUrl = await upstream.start());
    upstream.setScript((request) => flavor.render(request, { text: 'through the proxy' }));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    delete process.env.NO_PROXY;
    gateway = await startGateway(url, flavor.config(url));
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await gateway.close();
    await upstream.close();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  });

  it('model calls go through it, JSON and streamed', async () => {
    const upstreamPort = new URL(upstreamUrl).port;
    for (const stream of [false, true]) {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: 'Hi', stream }) });
      expect(response.status).toBe(200);
      const text = await response.text();
      const final = stream ? assertEventStreamInvariants(parseSseText(text).events) : JSON.parse(text);
      assertValidResponse(final);
      expect(final.output[0].content[0].text).toBe('through the proxy');
    }
    expect(proxy.seen.length).toBeGreaterThan(0);
    expect(proxy.seen.every((line) => line.includes(`127.0.0.1:${upstreamPort}`))).toBe(true);
  });
});
