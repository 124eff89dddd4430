import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Server as McpLowLevelServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/executors/mcp/egress-policy.ts';
import { McpSessionPool, McpTimeoutError } from '../../src/executors/mcp/mcp-session-pool.ts';
import { waitFor } from '../support/wait-for.ts';

/** Accepts TCP connections and never writes a byte; tracks connections that carried a request and are still open. */
class BlackHole {
  readonly open = new Set<Socket>();
  readonly #all = new Set<Socket>();
  accepted = 0;
  #server: Server | null = null;

  async start(): Promise<string> {
    this.#server = createServer((socket) => {
      this.accepted++;
      this.#all.add(socket);
      // undici may open a spare idle connection after an abort (closed on its own keep-alive timeout); only those with a request count.
      socket.once('data', () => this.open.add(socket));
      socket.on('error', () => {});
      socket.on('close', () => {
        this.open.delete(socket);
        this.#all.delete(socket);
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    for (const socket of this.#all) socket.destroy();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }
}

/** A real SDK server that completes the handshake and then never answers `tools/list`. */
class SilentListingServer {
  #http: HttpServer | null = null;
  readonly #servers: McpLowLevelServer[] = [];

  async start(): Promise<string> {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    this.#http = createHttpServer(async (req, res) => {
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, transport!) });
        const server = new McpLowLevelServer({ name: 'silent-lister', version: '1.0.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, () => new Promise(() => {}));
        this.#servers.push(server);
        await server.connect(transport);
      }
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => this.#http!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#http.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#servers.map((server) => server.close()));
    this.#http?.closeAllConnections();
    await new Promise<void>((resolve) => this.#http?.close(() => resolve()) ?? resolve());
  }
}

describe('McpSession bounds', () => {
  const egress = new EgressPolicy({ allowedUrlPrefixes: [] });
  const blackHole = new BlackHole();
  const silentListing = new SilentListingServer();
  let blackHoleUrl: string;
  let silentListingUrl: string;
  const newPool = () =>
    new McpSessionPool({ listTtlMs: 60_000, maxOutputChars: 1_000, maxSessions: 8, untrustedFetch: egress.fetch, connectTimeoutMs: 400, listTimeoutMs: 400 });

  beforeAll(async () => {
    [blackHoleUrl, silentListingUrl] = await Promise.all([blackHole.start(), silentListing.start()]);
  });
  afterAll(async () => {
    await Promise.all([blackHole.close(), silentListing.close(), egress.close()]);
  });

  it('connecting to a server that accepts TCP and never answers fails within connectTimeoutMs and leaves no connection open', async () => {
    const pool = newPool();
    const started = performance.now();
    const error = await pool.session({ url: blackHoleUrl, headers: {}, untrusted: false }, 'tenant-a').tools().catch((caught: unknown) => caught);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect((error as Error).message).toMatch(/400 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(2_000);
    expect(blackHole.accepted).toBeGreaterThan(0);
    // The abandoned handshake's request is torn down, not left half-open on the server.
    await waitFor(() => blackHole.open.size === 0, 1_000);
    await pool.close();
  });

  it('a server that completes the handshake and never answers tools/list fails within listTimeoutMs', async () => {
    const pool = newPool();
    const started = performance.now();
    const error = await pool.session({ url: silentListingUrl, headers: {}, untrusted: false }, 'tenant-a').tools().catch((caught: unknown) => caught);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/timed out/i);
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(2_000);
    await pool.close();
  });

  it('a call whose session must first connect to a silent server ends as an error result once connecting times out', async () => {
    const pool = newPool();
    const started = performance.now();
    const result = await pool.session({ url: blackHoleUrl, headers: {}, untrusted: false }, 'tenant-a').call('add', {}, new AbortController().signal, 30_000);
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/400 ms/);
    expect(performance.now() - started).toBeLessThan(2_000);
    await pool.close();
  });
});
