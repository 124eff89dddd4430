import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** What `connect` takes: the SDK's high-level `McpServer` or its low-level `Server`. */
interface Connectable {
  connect(transport: StreamableHTTPServerTransport): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real MCP server over stateless Streamable HTTP: each request gets a
 * server `build` makes (its tools, its handlers), as the SDK's stateless
 * examples do. Returns its URL and the HTTP server, to close.
 */
export async function startStatelessMcpServer(build: () => Connectable): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const mcp = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void mcp.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}
