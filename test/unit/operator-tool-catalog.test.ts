import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/executors/mcp/egress-policy.ts';
import { McpSessionPool } from '../../src/executors/mcp/mcp-session-pool.ts';
import { OperatorToolCatalog, type CatalogLogger } from '../../src/executors/mcp/operator-tool-catalog.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/** A TCP server that does one thing with every connection it accepts: hold it silently, or reset it at once. Records when each came. */
class RawServer {
  readonly acceptedAt: number[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #behaviour: 'silent' | 'reset';
  #server: Server | null = null;

  constructor(behaviour: 'silent' | 'reset') {
    this.#behaviour = behaviour;
  }

  async start(): Promise<string> {
    this.#server = createServer((socket) => {
      this.acceptedAt.push(Date.now());
      socket.on('error', () => {});
      if (this.#behaviour === 'reset') return void socket.destroy();
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}

class CapturedLog implements CatalogLogger {
  readonly lines: { level: 'info' | 'warn' | 'debug'; at: number; fields: Record<string, unknown>; message: string }[] = [];
  info(fields: Record<string, unknown>, message: string) {
    this.lines.push({ level: 'info', at: Date.now(), fields, message });
  }
  warn(fields: Record<string, unknown>, message: string) {
    this.lines.push({ level: 'warn', at: Date.now(), fields, message });
  }
  debug(fields: Record<string, unknown>, message: string) {
    this.lines.push({ level: 'debug', at: Date.now(), fields, message });
  }
  /** Lines about a failed listing (the warn that opened the breaker, then each failed retry). */
  failures() {
    return this.lines.filter((line) => line.fields.failures !== undefined);
  }
}

describe('OperatorToolCatalog', () => {
  const egress = new EgressPolicy({ allowedUrlPrefixes: [] });
  const healthy = new McpTestServer();
  let healthyUrl: string;
  const cleanups: (() => Promise<void> | void)[] = [];
  const catalogOf = (url: string, options: { listTtlMs?: number; listWaitMs?: number; retryBaseMs?: number; retryMaxMs?: number; connectTimeoutMs?: number; listTimeoutMs?: number }) => {
    const listTtlMs = options.listTtlMs ?? 60_000;
    const pool = new McpSessionPool({ listTtlMs, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch, connectTimeoutMs: options.connectTimeoutMs ?? 2_000, listTimeoutMs: options.listTimeoutMs ?? 2_000 });
    const log = new CapturedLog();
    const catalog = new OperatorToolCatalog([{ name: 'srv', target: { url, headers: { 'x-api-key': 'never-logged' }, untrusted: false } }], {
      pool,
      log,
      listTtlMs,
      listWaitMs: options.listWaitMs ?? 500,
      retryBaseMs: options.retryBaseMs ?? 60_000,
      retryMaxMs: options.retryMaxMs ?? 60_000,
    });
    cleanups.push(() => catalog.close(), () => pool.close());
    return { catalog, log };
  };
  const toolsNow = async (catalog: OperatorToolCatalog) => (await catalog.current())[0]!.tools.map((tool) => tool.name);

  beforeAll(async () => {
    healthyUrl = await healthy.start();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  afterAll(async () => {
    await Promise.all([healthy.close(), egress.close()]);
  });

  it('serves an expired listing at once while its refresh runs; a server that stopped answering is then left out, with one warn line', async () => {
    const proxy = new TcpProxy(healthyUrl);
    await proxy.start();
    cleanups.push(() => proxy.close());
    const { catalog, log } = catalogOf(`http://127.0.0.1:${proxy.port}/mcp`, { listTtlMs: 200, listTimeoutMs: 800, connectTimeoutMs: 800 });
    catalog.start();
    await waitFor(() => catalog.status()[0]!.state === 'ready');
    expect(await toolsNow(catalog)).toContain('add');

    proxy.blackHole();
    // Past the TTL: the refresh is under way (and will hang until listTimeoutMs); the old list is served meanwhile.
    await sleep(350);
    const started = performance.now();
    expect(await toolsNow(catalog)).toContain('add');
    expect(performance.now() - started).toBeLessThan(100);
    expect(catalog.status()[0]).toMatchObject({ state: 'ready', tools: 4 });

    await waitFor(() => catalog.status()[0]!.state === 'unavailable', 3_000);
    expect(await toolsNow(catalog)).toEqual([]);
    const warned = log.lines.filter((line) => line.level === 'warn');
    expect(warned).toHaveLength(1);
    expect(warned[0]!.fields).toMatchObject({ mcp_server: 'srv', origin: `http://127.0.0.1:${proxy.port}` });
    expect(JSON.stringify(log.lines)).not.toContain('never-logged');
  });

  it('a request waits for a first listing at most listWaitMs counted from when the listing started, then not at all', async () => {
    const silent = new RawServer('silent');
    const url = await silent.start();
    cleanups.push(() => silent.close());
    const { catalog } = catalogOf(url, { listWaitMs: 250, connectTimeoutMs: 5_000 });
    // Timed from before the listing starts: a slow machine between the two lengthens what is measured, never shortens it.
    let started = performance.now();
    catalog.start();
    expect(await toolsNow(catalog)).toEqual([]);
    const firstWait = performance.now() - started;
    expect(firstWait).toBeGreaterThanOrEqual(245);
    expect(firstWait).toBeLessThan(1_000);

    // The listing is still under way (connecting takes up to 5 s), but it has been slow for longer than the bound.
    started = performance.now();
    expect(await toolsNow(catalog)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(100);
    expect(catalog.status()[0]).toMatchObject({ state: 'listing' });
  });

  it('back-off doubles from retryBaseMs up to retryMaxMs, with no connection attempt before each retry is due, and one warn line for the outage', async () => {
    const refusing = new RawServer('reset');
    const url = await refusing.start();
    cleanups.push(() => refusing.close());
    const { catalog, log } = catalogOf(url, { retryBaseMs: 100, retryMaxMs: 400 });
    catalog.start();
    await waitFor(() => log.failures().length >= 5, 5_000);
    catalog.close();

    const failures = log.failures().slice(0, 5);
    expect(failures.map((line) => line.fields.retry_in_ms)).toEqual([100, 200, 400, 400, 400]);
    expect(failures.map((line) => line.level)).toEqual(['warn', 'debug', 'debug', 'debug', 'debug']);
    // Between a failure and its retry, the server is not contacted (a little slack for timer jitter).
    for (const failure of failures) {
      const quietUntil = failure.at + Number(failure.fields.retry_in_ms) - 20;
      expect(refusing.acceptedAt.filter((at) => at > failure.at && at < quietUntil)).toEqual([]);
    }
    // While open, the breaker answers requests without touching the server.
    const attempts = refusing.acceptedAt.length;
    expect(await toolsNow(catalog)).toEqual([]);
    expect(catalog.status()[0]).toMatchObject({ state: 'unavailable', tools: 0, retry_in_ms: expect.any(Number) });
    await sleep(150);
    expect(refusing.acceptedAt.length).toBe(attempts);
  });
});
