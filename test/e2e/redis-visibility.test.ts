import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { freePort, startRedisServer } from '../support/redis.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/** Redis connection trouble, as an operator reads it in the log: named, rate-limited, never with the password. */
describe('Redis problems are visible', () => {
  const running: { close(): Promise<void> }[] = [];
  const startWith = async (redisUrl: string) => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    const lines: Record<string, any>[] = [];
    const rawLines: string[] = [];
    const gateway: RunningGateway = await startGateway(await upstream.start(), { logLevel: 'info', store: { redisUrl, keyPrefix: 'loopgate-visibility:', commandTimeoutMs: 500 } }, {}, [], {
      write: (line) => {
        rawLines.push(line);
        lines.push(JSON.parse(line));
      },
    });
    running.push(gateway, upstream);
    const storeLines = () => lines.filter((line) => line.component === 'store');
    const readyz = async () => {
      const response = await fetch(`${gateway.origin}/readyz`);
      return { status: response.status, body: (await response.json()) as any };
    };
    return { gateway, upstream, lines, rawLines, storeLines, readyz };
  };
  afterEach(async () => {
    for (const resource of running.splice(0).reverse()) await resource.close();
  });

  it('refused: one error line naming the reason, then at most one per 30 s however often it retries', async () => {
    const port = await freePort();
    const { storeLines, rawLines } = await startWith(`redis://127.0.0.1:${port}`);
    await waitFor(() => storeLines().length > 0);
    await sleep(2_000); // dozens of reconnect attempts
    const errors = storeLines().filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ reason: 'connection_refused', redis: `redis://127.0.0.1:${port}` });
    // Each key once: a log pipeline may keep either of two, or refuse the line.
    const raw = rawLines.find((line) => line.includes('"connection_refused"'))!;
    expect(raw.match(/"component":/g)).toHaveLength(1);
  });

  it.each([
    ['a wrong password (WRONGPASS)', 'wrong-horse-staple'],
    ['no password (NOAUTH)', null],
  ])('%s: an authentication failure, the password never written; the request is a 503 without a model call', async (_case, password) => {
    const server = await startRedisServer(undefined, 'right-horse-battery');
    running.push({ close: server.stop });
    const { gateway, upstream, lines, storeLines } = await startWith(`redis://${password ? `:${password}@` : ''}127.0.0.1:${server.port}`);
    await waitFor(() => storeLines().some((line) => line.level === 50));
    expect(storeLines().filter((line) => line.level === 50)).toEqual([expect.objectContaining({ reason: 'authentication_failed', redis: expect.stringContaining(`127.0.0.1:${server.port}`) })]);
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x' }) });
    expect(response.status).toBe(503);
    expect(((await response.json()) as any).error.code).toBe('store_unavailable');
    expect(upstream.requests).toHaveLength(0);
    const ready = (await (await fetch(`${gateway.origin}/readyz`)).json()) as any;
    expect(ready.dependencies.store).toEqual({ kind: 'redis', state: 'unavailable', reason: 'authentication_failed' });
    for (const secret of ['wrong-horse-staple', 'right-horse-battery']) expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('a server that stops answering (SIGSTOP): /readyz says so once commands fail, and ready again once it answers', async () => {
    const server = await startRedisServer(await freePort());
    running.push({ close: server.stop });
    const { gateway, readyz } = await startWith(server.url);
    await waitFor(async () => (await readyz()).status === 200);
    process.kill(server.process.pid!, 'SIGSTOP');
    try {
      // The connection stays open (ioredis says ready): only a command that times out tells.
      const refused = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x' }) });
      expect(refused.status).toBe(503);
      const down = await readyz();
      expect(down).toMatchObject({ status: 503, body: { reason: 'response store unavailable', dependencies: { store: { state: 'unavailable', reason: 'timeout' } } } });
    } finally {
      process.kill(server.process.pid!, 'SIGCONT');
    }
    // Asked again in the background: ready without a request to find out.
    await waitFor(async () => (await readyz()).status === 200, 5_000, 100);
  });

  it('a server that stops answering while no request comes: /readyz finds out by itself, and ready again once it answers', async () => {
    const server = await startRedisServer(await freePort());
    running.push({ close: server.stop });
    const { readyz } = await startWith(server.url);
    await waitFor(async () => (await readyz()).status === 200);
    process.kill(server.process.pid!, 'SIGSTOP');
    try {
      // No request fails on it first: the readiness checks themselves ask it (a probe times out after 500 ms here).
      await waitFor(async () => (await readyz()).status === 503, 5_000, 200);
      expect((await readyz()).body).toMatchObject({ reason: 'response store unavailable', dependencies: { store: { state: 'unavailable', reason: 'timeout' } } });
    } finally {
      process.kill(server.process.pid!, 'SIGCONT');
    }
    await waitFor(async () => (await readyz()).status === 200, 5_000, 100);
  });

  it('dropped and back: a lost line, a few lines while down, a back line; requests work again', async () => {
    const port = await freePort();
    let server = await startRedisServer(port);
    const { gateway, storeLines } = await startWith(server.url);
    await waitFor(() => storeLines().some((line) => line.msg === 'Redis connected'));
    await server.stop();
    await waitFor(() => storeLines().some((line) => line.level === 40 && /lost/.test(line.msg)));
    await sleep(2_500);
    server = await startRedisServer(port);
    running.push({ close: server.stop });
    await waitFor(() => storeLines().some((line) => /back/.test(line.msg)));
    // One lost line, one error for the failed reconnects (then silence within 30 s), one back line.
    const problems = storeLines().filter((line) => line.level >= 40);
    expect(problems.length).toBeLessThanOrEqual(2);
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x' }) });
    expect(response.status).toBe(200);
  });

  it('its own shutdown is no outage: closing the gateway writes no lost or unavailable line', async () => {
    const server = await startRedisServer(await freePort());
    running.push({ close: server.stop });
    const { gateway, storeLines } = await startWith(server.url);
    await waitFor(() => storeLines().some((line) => line.msg === 'Redis connected'));
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'x' }) });
    expect(response.status).toBe(200);
    await gateway.close();
    await sleep(300);
    expect(storeLines().filter((line) => line.level >= 40)).toEqual([]);
  });
});
