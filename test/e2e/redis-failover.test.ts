import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { startRedisServer } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

type RedisServer = Awaited<ReturnType<typeof startRedisServer>>;

/** Makes `replica` a replica of the server on `primaryPort` and waits for their link (the primary sends its snapshot at once, not after diskless sync's 5 s wait for more replicas). */
async function replicate(replica: Redis, primary: Redis, primaryPort: number): Promise<void> {
  await primary.config('SET', 'repl-diskless-sync-delay', '0');
  await replica.replicaof('127.0.0.1', primaryPort);
  await waitFor(async () => /master_link_status:up/.test(await replica.info('replication')), 10_000);
}

const connectionsReceived = async (admin: Redis) => Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))![1]);

/**
 * A failover behind one name, as managed Redis (ElastiCache, Memorystore,
 * Azure Cache) and a Service in front of a Sentinel-run set do it: the old
 * primary becomes a replica of the new one and keeps the gateway's open
 * connections, while the name (here a TCP proxy) points new ones at the new
 * primary.
 */
describe('Redis failover behind one endpoint', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let upstreamUrl: string;
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  let proxy: TcpProxy | null = null;
  let gateway: RunningGateway | null = null;

  const admin = (server: RedisServer) => {
    const client = new Redis(server.url);
    admins.push(client);
    return client;
  };

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
  });
  afterEach(async () => {
    await gateway?.close();
    await proxy?.close();
    for (const client of admins.splice(0)) client.disconnect();
    for (const server of servers.splice(0)) await server.stop();
    gateway = null;
    proxy = null;
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('the demoted primary\'s READONLY makes the gateway connect again, and every request goes on at the new primary', async () => {
    const [first, second] = [await startRedisServer(), await startRedisServer()];
    servers.push(first, second);
    const [firstAdmin, secondAdmin] = [admin(first), admin(second)];
    await replicate(secondAdmin, firstAdmin, first.port);
    proxy = new TcpProxy(first.url);
    await proxy.start();
    gateway = await startGateway(upstreamUrl, { store: { redisUrl: proxy.url, keyPrefix: 'failover:', commandTimeoutMs: 2_000 } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const before = await client.responses.create({ model: 'm', input: 'before the failover' });
    // Replicated before the failover (WAIT from another connection would not wait for the gateway's writes).
    await waitFor(async () => (await secondAdmin.exists(`failover:{t:default}:r:${before.id}`)) === 1);

    await secondAdmin.replicaof('NO', 'ONE');
    await firstAdmin.replicaof('127.0.0.1', second.port);
    proxy.redirect(second.url);

    // Requests arriving together, each with a write the old primary refuses: none of them is the client's failure.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        fetch(`${gateway!.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: `after ${index}`, previous_response_id: before.id }) }),
      ),
    );
    for (const answer of answers) {
      const body = await answer.json();
      expect(answer.status, JSON.stringify(body)).toBe(200);
      assertValidResponse(body);
    }
    // Written to the new primary, and the conversation from before the failover is whole there.
    const latest = await client.responses.create({ model: 'm', input: 'later', previous_response_id: before.id });
    assertValidResponse(latest);
    expect(await secondAdmin.exists(`failover:{t:default}:r:${latest.id}`)).toBe(1);
    const seen = upstream.requests.at(-1)!.body.messages.map((message: { content: string }) => message.content);
    expect(seen).toEqual(['before the failover', 'ok', 'later']);
    const ready = await fetch(`${gateway.origin}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('a name that follows the failover late, and a second failover within a second: requests wait for a connection that reaches the primary, rather than failing', async () => {
    const [first, second] = [await startRedisServer(), await startRedisServer()];
    servers.push(first, second);
    const admins = { [first.port]: admin(first), [second.port]: admin(second) };
    await replicate(admins[second.port]!, admins[first.port]!, first.port);
    proxy = new TcpProxy(first.url);
    await proxy.start();
    gateway = await startGateway(upstreamUrl, { store: { redisUrl: proxy.url, keyPrefix: 'failover:', commandTimeoutMs: 2_000 } });
    const post = (input: string) => fetch(`${gateway!.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input }) });
    const failOver = async (to: RedisServer, from: RedisServer, nameLagsMs: number) => {
      await admins[to.port]!.replicaof('NO', 'ONE');
      await admins[from.port]!.replicaof('127.0.0.1', to.port);
      const answers = Array.from({ length: 16 }, (_, index) => post(`during ${to.port} ${index}`));
      await sleep(nameLagsMs);
      proxy!.redirect(to.url);
      return Promise.all(answers);
    };
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    const answers = [...(await failOver(second, first, 300)), ...(await failOver(first, second, 150))];
    process.off('warning', onWarning);
    // Commands waiting through a reconnection share one wait, not a listener each.
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    for (const answer of answers) {
      const body = (await answer.json()) as { id: string };
      expect(answer.status, JSON.stringify(body)).toBe(200);
      assertValidResponse(body);
      // Kept where the primary is now (the first again), whichever primary took it.
      await waitFor(async () => (await admins[first.port]!.exists(`failover:{t:default}:r:${body.id}`)) === 1, 3_000);
    }
  });

  it('a URL that names a replica for good: 503 store_unavailable, /readyz says read_only_replica, and it is connected to again at most about once a second', async () => {
    const [primary, replica] = [await startRedisServer(), await startRedisServer()];
    servers.push(primary, replica);
    const replicaAdmin = admin(replica);
    await replicaAdmin.replicaof('127.0.0.1', primary.port);
    const lines: { level: number; msg: string }[] = [];
    gateway = await startGateway(upstreamUrl, { logLevel: 'info', store: { redisUrl: replica.url, keyPrefix: 'failover:', commandTimeoutMs: 2_000 } }, {}, [], { write: (line) => lines.push(JSON.parse(line)) });
    // Found by the store's own probe at connect, before any request is served (as a readiness check sees it).
    await waitFor(async () => JSON.stringify(await (await fetch(`${gateway!.origin}/readyz`)).json()).includes('read_only_replica'));
    const connectionsBefore = await connectionsReceived(replicaAdmin);
    const started = performance.now();
    for (let attempt = 0; attempt < 15; attempt++) {
      const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x' }) });
      const body = await answer.json();
      expect(answer.status).toBe(503);
      assertErrorEnvelope(body);
      expect(body.error.code).toBe('store_unavailable');
      await sleep(100);
    }
    const seconds = (performance.now() - started) / 1000;
    // The gateway's own clients (responses, conversations, background, usage) each connect again, each at most once a second.
    const reconnections = (await connectionsReceived(replicaAdmin)) - connectionsBefore;
    expect(reconnections).toBeGreaterThan(0);
    expect(reconnections).toBeLessThanOrEqual(6 * Math.ceil(seconds + 1));
    const ready = await fetch(`${gateway.origin}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain('read_only_replica');
    // Said once; the connections made again to follow it are no outage and no recovery, each time.
    const redisLines = lines.filter((line) => /Redis/.test(line.msg));
    expect(redisLines.filter((line) => line.level >= 50)).toEqual([expect.objectContaining({ msg: expect.stringContaining('read-only replica') })]);
    expect(redisLines.map((line) => line.msg)).not.toContainEqual(expect.stringMatching(/connection lost|connection is back/));
    // No request reached the model: a response that cannot be kept is not asked for.
    expect(upstream.requests.filter((request) => request.body.messages?.at(-1)?.content === 'x')).toHaveLength(0);
  });
});
