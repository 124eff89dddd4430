import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { startRedisServer } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/** The bound each test configures: one Redis command (and one connection attempt) may take this long. */
const BOUND_MS = 500;
/** What "within the bound" means on a small, noisy machine: the bound twice over, plus slack. */
const ANSWER_WITHIN_MS = 2 * BOUND_MS + 1_500;

/** A "Redis" that accepts TCP connections and never answers a byte: a firewall that drops replies, a hung host. */
async function startBlackHole(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Redis that answers nothing: commands fail within the configured bound, the store says why, and no model call is spent. */
describe('a Redis that never answers', () => {
  const running: { close(): Promise<void> }[] = [];
  const startWith = async (redisUrl: string) => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    const lines: Record<string, any>[] = [];
    const gateway: RunningGateway = await startGateway(
      await upstream.start(),
      { logLevel: 'info', store: { redisUrl, keyPrefix: 'loopgate-black-hole:', commandTimeoutMs: BOUND_MS, connectTimeoutMs: BOUND_MS } },
      {},
      [],
      { write: (line) => lines.push(JSON.parse(line)) },
    );
    running.push(gateway, upstream);
    const problems = () => lines.filter((line) => line.component === 'store' && line.level >= 40);
    const post = async (body: Record<string, unknown>) => {
      const started = Date.now();
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x', ...body }) });
      return { status: response.status, body: (await response.json()) as any, elapsedMs: Date.now() - started };
    };
    return { gateway, upstream, lines, problems, post };
  };
  afterEach(async () => {
    for (const resource of running.splice(0).reverse()) await resource.close();
  });

  it('from the start: logged once as a timeout, stored requests are 503 within the bound without a model call, store:false still answers, /readyz says why', async () => {
    const hole = await startBlackHole();
    running.push(hole);
    const { gateway, upstream, problems, post } = await startWith(hole.url);
    await waitFor(() => problems().length > 0);
    expect(problems()[0]).toMatchObject({ level: 50, reason: 'timeout', redis: hole.url });

    const refused = await post({});
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('store_unavailable');
    expect(refused.elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
    expect(upstream.requests).toHaveLength(0);
    expect((await post({ store: false })).status).toBe(200);

    const ready = await fetch(`${gateway.origin}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as any).dependencies.store).toEqual({ kind: 'redis', state: 'unavailable', reason: 'timeout' });
    await sleep(2_000); // a few more attempts, each timing out: not a line each
    expect(problems()).toHaveLength(1);
  });

  it('going silent after it was up (process stopped): the connection is dropped and logged, then stored requests are 503 without a model call; back when it answers', async () => {
    const server = await startRedisServer();
    running.push({ close: server.stop });
    const { gateway, upstream, lines, problems, post } = await startWith(server.url);
    await waitFor(() => lines.some((line) => line.msg === 'Redis connected'));
    expect((await post({})).status).toBe(200);

    server.process.kill('SIGSTOP');
    try {
      // The first command to meet the silence fails within the bound, and the connection it hung on is given up.
      const started = Date.now();
      const read = await fetch(`${gateway.baseURL}/responses/resp_unknown`);
      expect(read.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(ANSWER_WITHIN_MS);
      await waitFor(() => problems().length > 0);
      const callsBefore = upstream.requests.length;
      const refused = await post({});
      expect(refused.status).toBe(503);
      expect(refused.elapsedMs).toBeLessThan(ANSWER_WITHIN_MS);
      expect(upstream.requests.length).toBe(callsBefore);
      expect(((await (await fetch(`${gateway.origin}/readyz`)).json()) as any).dependencies.store).toMatchObject({ state: 'unavailable', reason: 'timeout' });
      await sleep(2_000);
      expect(problems().length).toBeLessThanOrEqual(2);
    } finally {
      server.process.kill('SIGCONT');
    }
    await waitFor(() => lines.some((line) => line.msg === 'Redis connection is back'));
    expect((await post({})).status).toBe(200);
  });
});
