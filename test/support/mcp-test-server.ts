import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A real MCP server, built with the official SDK, on loopback: Streamable
 * HTTP (stateful sessions) or the older HTTP+SSE transport. It records what a
 * test needs to see: JSON-RPC methods received, headers, cancellations, tool
 * calls in flight. With `records: true` it also keeps records behind tools
 * annotated as MCP describes them (read-only, destructive, additive), for
 * approval gates that read annotations.
 */
export class McpTestServer {
  readonly methods: string[] = [];
  readonly headers: IncomingHttpHeaders[] = [];
  /** Sessions a client ended (HTTP DELETE with its session id, as the specification asks of a client done with one). */
  readonly endedSessions: string[] = [];
  readonly cancelledCalls: string[] = [];
  readonly calls: { name: string; args: unknown }[] = [];
  /** The `params._meta` each tools/call of `add` and `fail` carried (trace context goes there), and the MCP session it came in (streamable HTTP). */
  readonly callMeta: { name: string; meta: Record<string, unknown> | undefined; sessionId?: string | undefined }[] = [];
  running = 0;
  maxRunning = 0;
  /** HTTP exchanges under way: requests whose response is not yet over (an event stream held open counts). */
  openExchanges = 0;
  /** More tools a test registers on every session, beside the built-in ones. */
  readonly extraTools: ((server: McpServer) => void)[] = [];
  #http: Server | null = null;
  #servers: McpServer[] = [];
  readonly #transport: 'streamable' | 'sse';
  readonly #records: boolean;
  readonly #adminTools: boolean;
  /** The records behind `lookup`, `delete_record` and `append_log`. */
  readonly records = new Map<string, string>([['r1', 'first record'], ['r2', 'second record']]);
  /** The URL of the last HTTP request received, as the server saw it (query included). */
  #lastUrl = '';
  /** Tools whose call's own HTTP response is cut shortly after it arrives (a proxy timing out that one stream); the server lives on. */
  readonly cutCallsOf = new Set<string>();
  #expire: () => void = () => {};

  /** `records` adds annotated `lookup`, `delete_record`, `append_log`; `adminTools` adds `delete` (recorded like `add`) and `explode` (fails carelessly: stack, internal address, secrets). */
  constructor(transport: 'streamable' | 'sse' = 'streamable', options: { records?: boolean; adminTools?: boolean } = {}) {
    this.#transport = transport;
    this.#records = options.records ?? false;
    this.#adminTools = options.adminTools ?? false;
  }

  /** The calls received for tool `name`. */
  callsOf(name: string): unknown[] {
    return this.calls.filter((call) => call.name === name).map((call) => call.args);
  }

  /** Number of `tools/list` requests received. */
  get listCalls(): number {
    return this.methods.filter((method) => method === 'tools/list').length;
  }

  /** Listens on `port` (a free one by default) and returns the MCP endpoint URL. */
  async start(port = 0): Promise<string> {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const sseSessions = new Map<string, SSEServerTransport>();
    this.#http = createServer(async (req, res) => {
      this.openExchanges++;
      res.once('close', () => this.openExchanges--);
      this.headers.push(req.headers);
      this.#lastUrl = `http://${req.headers.host}${req.url}`;
      const body = await readBody(req);
      for (const message of [body].flat()) if (message && typeof message === 'object' && 'method' in message) this.methods.push(String(message.method));
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (this.#transport === 'sse') {
        if (req.method === 'GET' && url.pathname === '/sse') {
          const transport = new SSEServerTransport('/messages', res);
          sseSessions.set(transport.sessionId, transport);
          await this.#newServer().connect(transport);
          return;
        }
        if (req.method === 'POST' && url.pathname === '/messages') {
          const transport = sseSessions.get(url.searchParams.get('sessionId') ?? '');
          if (!transport) return void res.writeHead(404).end();
          await transport.handlePostMessage(req, res, body);
          return;
        }
        res.writeHead(405).end();
        return;
      }
      if (([body].flat() as any[]).some((message) => message?.method === 'tools/call' && this.cutCallsOf.has(message.params?.name))) setTimeout(() => req.socket.destroy(), 100);
      const sessionId = req.headers['mcp-session-id'];
      if (req.method === 'DELETE' && typeof sessionId === 'string' && sessions.has(sessionId)) this.endedSessions.push(sessionId);
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      // A session this server no longer knows (expired, or from before a restart): 404, as the specification says.
      if (typeof sessionId === 'string' && !transport) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      if (!transport) {
        transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void sessions.set(id, transport!) });
        await this.#newServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    });
    this.#expire = () => sessions.clear();
    await new Promise<void>((resolve) => this.#http!.listen(port, '127.0.0.1', resolve));
    const bound = (this.#http.address() as AddressInfo).port;
    return this.#transport === 'sse' ? `http://127.0.0.1:${bound}/sse` : `http://127.0.0.1:${bound}/mcp`;
  }

  /** Forgets every session, as a server expiring idle sessions does: their next request gets a 404. */
  expireSessions(): void {
    this.#expire();
  }

  /** Adds a tool on every live session and tells clients their lists changed. */
  addTool(name: string): void {
    for (const server of this.#servers) {
      server.registerTool(name, { description: `added later: ${name}`, inputSchema: {} }, async () => ({ content: [{ type: 'text', text: name }] }));
      server.sendToolListChanged();
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#servers.map((server) => server.close()));
    this.#http?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#http ? this.#http.close(() => resolve()) : resolve()));
  }

  #newServer(): McpServer {
    const server = new McpServer({ name: 'test-tools', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    for (const register of this.extraTools) register(server);
    server.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }, extra) => {
      this.calls.push({ name: 'add', args: { a, b } });
      this.callMeta.push({ name: 'add', meta: extra._meta, sessionId: extra.sessionId });
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    server.registerTool('slow', { description: 'Waits, then answers.', inputSchema: { ms: z.number(), label: z.string().optional() } }, async ({ ms, label }, extra) => {
      this.calls.push({ name: 'slow', args: { ms, label } });
      this.running++;
      this.maxRunning = Math.max(this.maxRunning, this.running);
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            this.cancelledCalls.push(label ?? 'slow');
            reject(new Error('cancelled'));
          }, { once: true });
        });
      } finally {
        this.running--;
      }
      return { content: [{ type: 'text', text: `slept ${ms} ms${label ? ` (${label})` : ''}` }] };
    });
    server.registerTool('fail', { description: 'Always fails.', inputSchema: {} }, async (_args, extra) => {
      this.callMeta.push({ name: 'fail', meta: extra._meta });
      return { content: [{ type: 'text', text: 'the thing is broken' }], isError: true };
    });
    server.registerTool('secret', { description: 'Should be filtered by allowed_tools.', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: 'secret' }] }));
    if (this.#records) this.#registerRecordTools(server);
    if (this.#adminTools) this.#registerAdminTools(server);
    this.#servers.push(server);
    return server;
  }

  #registerRecordTools(server: McpServer): void {
    server.registerTool('lookup', { description: 'Reads a record.', inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } }, async ({ id }) => {
      this.calls.push({ name: 'lookup', args: { id } });
      const record = this.records.get(id);
      return record === undefined ? { content: [{ type: 'text', text: `no record ${id}` }], isError: true } : { content: [{ type: 'text', text: record }] };
    });
    server.registerTool('delete_record', { description: 'Deletes a record.', inputSchema: { id: z.string() }, annotations: { readOnlyHint: false, destructiveHint: true } }, async ({ id }) => {
      this.calls.push({ name: 'delete_record', args: { id } });
      return { content: [{ type: 'text', text: this.records.delete(id) ? `deleted ${id}` : `no record ${id}` }] };
    });
    server.registerTool('append_log', { description: 'Appends a line to the log; never changes what is there.', inputSchema: { line: z.string() }, annotations: { readOnlyHint: false, destructiveHint: false } }, async ({ line }) => {
      this.calls.push({ name: 'append_log', args: { line } });
      return { content: [{ type: 'text', text: `logged ${line}` }] };
    });
  }

  #registerAdminTools(server: McpServer): void {
    server.registerTool('delete', { description: 'Deletes a record.', inputSchema: { id: z.string() } }, async ({ id }) => {
      this.calls.push({ name: 'delete', args: { id } });
      return { content: [{ type: 'text', text: `deleted ${id}` }] };
    });
    // A careless server: its error message is the whole stack, with an internal address and the URL and key it was called with.
    server.registerTool('explode', { description: 'Reads the admin API.', inputSchema: {} }, async (_args, extra) => {
      this.calls.push({ name: 'explode', args: {} });
      const key = String(extra.requestInfo?.headers['x-api-key'] ?? '');
      throw new Error(
        [
          `AdminError: request to http://10.0.3.7:9000/admin failed with 503 (called at ${this.#lastUrl}, key ${key})`,
          '    at queryAdmin (/srv/tools/src/admin.js:41:13)',
          '    at async Server.handleExplode (/srv/tools/src/server.js:88:5)',
        ].join('\n'),
      );
    });
  }
}

async function readBody(req: import('node:http').IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST') return undefined;
  let raw = '';
  for await (const piece of req) raw += piece;
  try {
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
}
