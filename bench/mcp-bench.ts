import { ExecutorRegistry } from '../src/executors/executor-registry.ts';
import { EgressPolicy } from '../src/executors/mcp/egress-policy.ts';
import { McpExecutor } from '../src/executors/mcp/mcp-executor.ts';
import { McpSessionPool } from '../src/executors/mcp/mcp-session-pool.ts';
import { ToolErrorSanitizer } from '../src/executors/sanitize-tool-error.ts';
import type { ToolContext } from '../src/executors/tool-executor.ts';
import { safeObserver } from '../src/engine/loop-observer.ts';
import { runToolCalls } from '../src/engine/run-tool-calls.ts';
import { McpTestServer } from '../test/support/mcp-test-server.ts';
import { median, ms, percentile } from './bench-support.ts';

/**
 * MCP tools through the executor, against a real MCP server (official SDK,
 * Streamable HTTP) on loopback:
 * 1. one turn of 8 calls of a 100 ms tool: tool-phase wall time against the ideal (100 ms);
 * 2. the executor's cost per call: an instant tool, called one after another.
 *
 *   npm run bench:mcp
 */
const quick = process.env.BENCH_QUICK === '1';
const server = new McpTestServer();
const url = await server.start();
const egress = new EgressPolicy({ allowedUrlPrefixes: [] });
const pool = new McpSessionPool({ listTtlMs: 600_000, maxOutputChars: 100_000, maxSessions: 16, untrustedFetch: egress.fetch });
const executor = new McpExecutor({ servers: [{ name: 'bench', url, headers: {}, allowedTools: null, timeoutMs: null }], pool, egress, defaultTimeoutMs: 10_000 });
const registry = new ExecutorRegistry([executor]);
const base: ToolContext = { tenant: 'bench', tools: [], mcpServers: [], previousOutput: [], offered: new Map() };
const prepared = await registry.prepare(base, new AbortController().signal);
const context: ToolContext = { ...base, offered: new Map(prepared.offered.map((tool) => [tool.definition.name, tool])) };

async function turn(calls: { name: string; args: Record<string, unknown> }[]): Promise<number> {
  const started = performance.now();
  await runToolCalls(
    calls.map((call, index) => ({ call: { callId: `c${index}`, name: call.name, arguments: JSON.stringify(call.args) }, executor })),
    { context, parallel: true, defaultTimeoutMs: 10_000, signal: new AbortController().signal, observer: safeObserver([]), errors: ToolErrorSanitizer.basic, turn: 1, onResult: () => {} },
  );
  return performance.now() - started;
}

const eight = Array.from({ length: 8 }, (_, index) => ({ name: 'bench__slow', args: { ms: 100, label: `c${index}` } }));
await turn(eight);
const walls: number[] = [];
for (let round = 0; round < (quick ? 3 : 10); round++) walls.push(await turn(eight));
const wall = median(walls);
console.log('MCP executor — real MCP server (Streamable HTTP) on loopback');
console.log(`  8 calls of a 100 ms tool in one turn: tool phase ${ms(wall)} vs ideal 100 ms → efficiency ${((100 / wall) * 100).toFixed(1)}% (server saw ${server.maxRunning} at once)`);

const instant = [{ name: 'bench__add', args: { a: 1, b: 2 } }];
for (let index = 0; index < 200; index++) await turn(instant);
const singles: number[] = [];
for (let index = 0; index < (quick ? 300 : 2_000); index++) singles.push(await turn(instant));
console.log(`  per-call cost of an instant tool (pooled session, sequential): p50 ${ms(percentile(singles, 50))}, p99 ${ms(percentile(singles, 99))}`);

await pool.close();
await egress.close();
await server.close();
process.exit(0);
