import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { CodexCli } from '../../support/codex-cli.ts';
import { flavors, scriptModel, type ModelTurn } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

const codex = new CodexCli({ LOOPGATE_KEY: 'client-key' });
beforeAll(() => codex.start());
afterAll(() => codex.close());

/** Codex CLI, as installed, against the gateway over each upstream: its default tool set accepted, a shell round trip. */
describe.each(flavors)('Codex CLI over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  /** An operator's MCP server: its tools run inside the gateway, which Codex never sees as calls of its own. */
  const operatorMcp = new McpTestServer();
  let gateway: RunningGateway;
  let home: string;
  let workdir: string;
  const logLines: string[] = [];
  let upstreamUrl: string;
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);

  beforeAll(async () => {
    let operatorUrl: string;
    [upstreamUrl, operatorUrl] = await Promise.all([upstream.start(), operatorMcp.start()]);
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), logLevel: 'info', mcp: { servers: [{ name: 'ops', url: operatorUrl, allowedTools: ['add'] }] } }, {}, [], { write: (line) => void logLines.push(line) });
    home = mkdtempSync(join(tmpdir(), 'loopgate-codex-home-'));
    workdir = mkdtempSync(join(tmpdir(), 'loopgate-codex-work-'));
    writeFileSync(join(home, 'config.toml'), CodexCli.gatewayConfig(gateway.baseURL, flavor.model));
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), operatorMcp.close()]);
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  });

  // Codex's tool set depends on the model: an unknown name gets its fallback set (namespaced multi-agent tools),
  // a model from its catalog the freeform apply_patch and a client-run tool_search; both send hosted web_search.
  it.each([
    { model: flavor.model, expected: ['exec_command', 'multi_agent_v1__spawn_agent'] },
    { model: 'gpt-5.5', expected: ['exec_command', 'apply_patch', 'tool_search'] },
  ])('one turn with $model: every tool Codex sends is accepted, the answer is printed', async ({ model, expected }) => {
    script(() => ({ text: 'Hello from the gateway.' }));
    const before = upstream.requests.length;
    const logsBefore = logLines.length;
    const run = await codex.exec(home, workdir, 'Say hello.', { options: ['--model', model] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Hello from the gateway.');
    const sent = upstream.requests.slice(before).at(-1)!;
    const offered = flavor.offeredTools(sent).map((tool) => tool.name);
    expect(offered).toEqual(expect.arrayContaining(expected));
    const summary = logLines.slice(logsBefore).map((line) => JSON.parse(line)).find((entry) => entry.response_id);
    expect(offered).not.toContain('web_search');
    if (flavor.runsWebSearch) {
      // OpenAI's Responses API runs web_search itself: offered to it as Codex sent it, nothing omitted.
      expect((sent.body.tools as { type: string }[]).map((tool) => tool.type)).toContain('web_search');
      expect(summary).toMatchObject({ status: 'completed' });
      expect(summary).not.toHaveProperty('omitted_tools');
    } else {
      // Hosted web_search cannot run here: left out of what the model sees, named in the response's log line.
      expect(summary).toMatchObject({ status: 'completed', omitted_tools: ['web_search'] });
    }
  }, 60_000);

  it('a shell round trip: the model runs a command through Codex and sees its output', async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_sh', name: 'exec_command', args: { cmd: 'echo written-by-codex > marker.txt && echo shell-ok' } }] } : { text: 'The command ran.' }));
    const run = await codex.exec(home, workdir, 'Write the marker file.');
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'marker.txt'), 'utf8').trim()).toBe('written-by-codex');
    expect(run.stdout).toContain('The command ran.');
    const results = flavor.seen(upstream.requests.at(-1)!).filter((seen) => seen.kind === 'result');
    expect(JSON.stringify(results)).toContain('shell-ok');
  }, 60_000);

  it("the gateway's own MCP tool: it runs inside the gateway, and Codex prints the answer without taking the call for one of its own", async () => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_ops', name: 'ops__add', args: { a: 20, b: 22 } }] } : { text: `The sum is ${results[0]}.` }));
    const before = upstream.requests.length;
    const run = await codex.exec(home, workdir, 'Add 20 and 22.');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The sum is 42.');
    expect(operatorMcp.calls).toContainEqual({ name: 'add', args: { a: 20, b: 22 } });
    // One exchange: the model's call and its answer, no second request from Codex answering the call itself.
    expect(upstream.requests.length - before).toBe(2);
    expect(flavor.seen(upstream.requests.at(-1)!).filter((seen) => seen.kind === 'result').map((seen) => (seen as { content: string }).content)).toEqual(['42']);
  }, 60_000);

  it('an apply_patch round trip: the freeform call reaches Codex as custom_tool_call, the file is written, the result goes back to the model', async () => {
    const patch = ['*** Begin Patch', '*** Add File: patched.txt', '+written by apply_patch', '*** End Patch'].join('\n');
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_patch', name: 'apply_patch', args: { input: patch } }] } : { text: 'The patch is applied.' }));
    const before = upstream.requests.length;
    const run = await codex.exec(home, workdir, 'Create patched.txt.', { options: ['--model', 'gpt-5.5'] });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'patched.txt'), 'utf8').trim()).toBe('written by apply_patch');
    expect(run.stdout).toContain('The patch is applied.');
    // Codex offers apply_patch as a freeform tool: the model sees a function taking one string, its grammar described.
    const offered = flavor.offeredTools(upstream.requests[before]!).find((tool) => tool.name === 'apply_patch');
    expect(JSON.stringify(offered)).toContain('grammar');
    if (flavor.name === 'openai-responses') {
      // OpenAI's Responses API takes it as the freeform tool it is, its Lark grammar constraining the patch; the call and its output go back as such.
      expect((upstream.requests[before]!.body.tools as any[]).find((tool) => tool.name === 'apply_patch')).toMatchObject({ type: 'custom', format: { type: 'grammar', syntax: 'lark' } });
      const input = upstream.requests.at(-1)!.body.input as any[];
      expect(input).toContainEqual({ type: 'custom_tool_call', call_id: 'call_patch', name: 'apply_patch', input: patch });
      expect(input.find((item) => item.call_id === 'call_patch' && item.type.endsWith('_output'))).toMatchObject({ type: 'custom_tool_call_output' });
    }
    const seen = flavor.seen(upstream.requests.at(-1)!);
    expect(seen).toContainEqual({ kind: 'call', id: 'call_patch', name: 'apply_patch', args: { input: patch } });
    const result = seen.find((entry) => entry.kind === 'result' && entry.id === 'call_patch');
    expect(JSON.stringify(result)).toContain('patched.txt');
  }, 60_000);

  it('a tool_search round trip: the search reaches Codex as tool_search_call, the MCP tools it loads are offered from then on, and a call of one runs in Codex', async () => {
    // Codex defers its MCP servers' tools behind tool_search: it answers a search with a tool_search_output holding a namespace.
    const mcp = new McpTestServer();
    const mcpUrl = await mcp.start();
    script((_request, results) => {
      if (results.length === 0) return { calls: [{ id: 'call_search', name: 'tool_search', args: { query: 'add two numbers' } }] };
      if (results.length === 1) return { calls: [{ id: 'call_add', name: 'mcp__calc__add', args: { a: 2, b: 3 } }] };
      return { text: `The sum is ${results[1]}.` };
    });
    const before = upstream.requests.length;
    const run = await codex.exec(home, workdir, 'Add 2 and 3 with a tool.', { options: ['--model', 'gpt-5.5', '-c', `mcp_servers.calc.url="${mcpUrl}"`] });
    await mcp.close();
    expect(run.code, run.stderr).toBe(0);
    const offered = (request: RecordedRequest) => flavor.offeredTools(request).map((tool) => tool.name);
    expect(offered(upstream.requests[before]!)).not.toContain('mcp__calc__add');
    expect(offered(upstream.requests.at(-1)!)).toContain('mcp__calc__add');
    expect(mcp.calls).toContainEqual({ name: 'add', args: { a: 2, b: 3 } });
    const seen = flavor.seen(upstream.requests.at(-1)!);
    expect(seen).toContainEqual({ kind: 'result', id: 'call_search', content: '{"loaded":["mcp__calc"]}' });
    expect(JSON.stringify(seen.find((entry) => entry.kind === 'result' && entry.id === 'call_add'))).toContain('5');
    expect(run.stdout).toContain('The sum is');
  }, 60_000);

  it('--output-schema: the schema reaches the upstream as structured output, the JSON is printed', async () => {
    writeFileSync(join(workdir, 'schema.json'), JSON.stringify({ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false }));
    script(() => ({ text: JSON.stringify({ answer: 'forty-two' }) }));
    const run = await codex.exec(home, workdir, 'Answer in JSON.', { options: ['--output-schema', join(workdir, 'schema.json')] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('{"answer":"forty-two"}');
    expect(flavor.format(upstream.requests.at(-1)!)).toMatchObject({ type: 'json_schema', schema: { properties: { answer: { type: 'string' } } } });
  }, 60_000);

  it('the strict hosted-tool policy: Codex gets the 400 naming web_search, prints it and stops (no hang, no model call)', async () => {
    // An upstream that runs web_search itself is configured not to here, so the policy applies to it.
    const strict = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl, { hostedTools: [] }), loop: { hostedTools: 'reject' } });
    try {
      const before = upstream.requests.length;
      const started = Date.now();
      const run = await codex.exec(home, workdir, 'Search the web.', { options: ['--model', 'gpt-5.5', '-c', `model_providers.loopgate.base_url="${strict.baseURL}"`] });
      expect(run.code).not.toBe(0);
      expect(run.stdout + run.stderr).toContain("The hosted tool 'web_search' cannot run behind this gateway");
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(upstream.requests.length).toBe(before);
    } finally {
      await strict.close();
    }
  }, 60_000);

  it('resume: a later exec continues the session, resending the earlier turns', async () => {
    script(() => ({ text: 'First answer.' }));
    expect((await codex.exec(home, workdir, 'Remember the word pelican.')).code).toBe(0);
    script(() => ({ text: 'The word was pelican.' }));
    const run = await codex.exec(home, workdir, 'Which word?', { before: ['resume', '--last'] });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The word was pelican.');
    const seen = flavor.seen(upstream.requests.at(-1)!).flatMap((entry) => ('text' in entry && entry.kind !== 'system' ? [entry.text] : []));
    expect(seen.join('\n')).toContain('Remember the word pelican.');
    expect(seen).toContain('First answer.');
    expect(seen.at(-1)).toContain('Which word?');
  }, 90_000);

  it('Codex reached no host but the gateway (no update check, plugin sync or analytics)', () => {
    expect(codex.outbound.attempts).toEqual([]);
  });
});

