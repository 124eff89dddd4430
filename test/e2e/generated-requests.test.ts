import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { anthropic, openaiChat, type ProviderFlavor } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../support/scripted-chat-upstream.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** What the seed bodies refer to: stored responses and items, the MCP server, the models of both providers. */
interface SeedContext {
  pausedId: string;
  pausedCall: { id: string; call_id: string };
  approvalId: string;
  approvalRequest: Record<string, unknown>;
  listing: Record<string, unknown>;
  calc: Record<string, unknown>;
}

/** Valid bodies covering the request's shapes, one provider's model each time; the generator mutates them. */
function seedBodies(context: SeedContext): Json[] {
  const weather = { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true };
  const patch = { type: 'custom', name: 'apply_patch', description: 'Edits files.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } };
  const namespace = { type: 'namespace', name: 'agents', description: 'Sub-agents.', tools: [{ ...weather, name: 'spawn' }, { type: 'custom', name: 'note' }] };
  const search = { type: 'tool_search', execution: 'client', description: 'Finds tools.', parameters: { type: 'object', properties: { query: { type: 'string' } } } };
  const { calc } = context;
  return [
    { input: 'Hello' },
    { input: 'Hello', stream: true, instructions: 'Be brief.', temperature: 0.2, top_p: 0.9, max_output_tokens: 64, metadata: { a: 'b' } },
    {
      input: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }, { type: 'input_file', filename: 'a.txt', file_data: 'data:text/plain;base64,aGk=' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] },
      ],
    },
    { input: 'x', tools: [weather], tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false },
    { input: 'x', tools: [weather], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] } },
    { input: 'x', text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object', properties: { a: { type: 'number' } } }, strict: true }, verbosity: 'low' } },
    { input: 'x', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false },
    {
      tools: [weather],
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '14' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thought' }], encrypted_content: 'abc' },
      ],
    },
    // Codex's tool kinds, and a history that uses them.
    { input: 'x', stream: true, store: false, tools: [weather, patch, namespace, search, { type: 'web_search' }], prompt_cache_key: 'k', client_metadata: { a: 1 } },
    {
      tools: [patch, namespace, search],
      input: [
        { role: 'user', content: 'go' },
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: 'done' },
        { type: 'function_call', call_id: 'call_n', namespace: 'agents', name: 'spawn', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_n', output: [{ type: 'input_text', text: 'spawned' }] },
        { type: 'tool_search_call', call_id: 'call_s', arguments: { query: 'weather' }, execution: 'client' },
        { type: 'tool_search_output', call_id: 'call_s', execution: 'client', tools: [weather] },
      ],
    },
    // Continuations: stored, by reference, and MCP approvals stored and stateless.
    { previous_response_id: context.pausedId, input: [{ type: 'function_call_output', call_id: context.pausedCall.call_id, output: '14' }], tools: [weather] },
    { previous_response_id: context.pausedId, input: [{ type: 'item_reference', id: 'msg_missing' }] },
    { tools: [weather], input: [{ role: 'user', content: 'again' }, { type: 'item_reference', id: context.pausedCall.id }, { type: 'function_call_output', call_id: context.pausedCall.call_id, output: '15' }] },
    { previous_response_id: context.approvalId, tools: [calc], input: [{ type: 'mcp_approval_response', approval_request_id: context.approvalRequest.id as string, approve: true }] },
    { tools: [calc], input: [{ role: 'user', content: 'add' }, context.listing as Json, context.approvalRequest as Json, { type: 'mcp_approval_response', approval_request_id: context.approvalRequest.id as string, approve: false, reason: 'no' }] },
    { input: 'add', tools: [{ ...calc, require_approval: 'never', allowed_tools: ['add'] }] },
  ] as Json[];
}

/** Every path in a value (objects and arrays), the root included. */
function pathsOf(value: Json, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  // Deeply nested values (from an earlier mutation) are mutated near their top only.
  if (value !== null && typeof value === 'object' && prefix.length < 40) {
    for (const [key, child] of Object.entries(value)) pathsOf(child, [...prefix, Array.isArray(value) ? Number(key) : key], out);
  }
  return out;
}

/** `root` with the value at `path` changed (undefined removes it); copies only the containers along the path. */
function withAt(root: Json, path: Path, change: (value: Json | undefined) => Json | undefined): Json {
  if (path.length === 0) return change(root) ?? null;
  const [key, ...rest] = path as [string | number, ...Path];
  const container = root as any;
  const copy = Array.isArray(container) ? [...container] : { ...container };
  const next = rest.length === 0 ? change(container[key]) : withAt(container[key], rest, change);
  if (next !== undefined) copy[key] = next;
  else if (Array.isArray(copy)) copy.splice(Number(key), 1);
  else delete copy[key];
  return copy;
}

const TYPES = [
  'message', 'function_call', 'function_call_output', 'reasoning', 'item_reference', 'input_text', 'input_image', 'input_file', 'input_video', 'output_text', 'refusal', 'summary_text', 'reasoning_text',
  'function', 'json_schema', 'json_object', 'text', 'grammar', 'compaction', 'custom', 'namespace', 'tool_search', 'web_search', 'mcp', 'unknown',
  'custom_tool_call', 'custom_tool_call_output', 'tool_search_call', 'tool_search_output', 'mcp_call', 'mcp_list_tools', 'mcp_approval_request', 'mcp_approval_response',
];

const strangeString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('', '\u0000', '\ud800', '\uffff', '💥'.repeat(1_000), 'a'.repeat(70), '__proto__', 'constructor', '{"a":', 'null', '-1', '1e309'),
  fc.constantFrom(...TYPES),
);
const scalar: fc.Arbitrary<Json> = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(-1, 0, 1e308, 2 ** 53, -0), strangeString);
const anyJson = fc.oneof({ weight: 3, arbitrary: scalar }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> });

/**
 * One change to a body: remove, retype, replace, nest deeply, blow up, add an
 * unknown key — or keep the type and change the value (a strange string, a
 * number at an edge), which keeps many bodies valid so they reach the engine,
 * the providers and the upstreams.
 */
const mutation = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('sameType' as const), pick: fc.nat(), text: strangeString, number: fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(0, -1, 1e308, 2 ** 53)) }) },
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: anyJson }),
  fc.record({ kind: fc.constant('wrap' as const), pick: fc.nat(), inArray: fc.boolean() }),
  fc.record({ kind: fc.constant('nest' as const), pick: fc.nat(), levels: fc.integer({ min: 50, max: 12_000 }) }),
  fc.record({ kind: fc.constant('huge' as const), pick: fc.nat(), length: fc.integer({ min: 1_000, max: 200_000 }) }),
  fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat(), times: fc.integer({ min: 2, max: 100 }) }),
  fc.record({ kind: fc.constant('extra' as const), pick: fc.nat(), key: strangeString, value: anyJson }),
);
/** Keys whose strings are enums or discriminators: a same-type change leaves them, so the body stays one the gateway serves. */
const ENUM_KEYS = new Set(['type', 'role', 'status', 'detail', 'effort', 'summary', 'syntax', 'execution', 'mode', 'truncation', 'verbosity', 'require_approval', 'server_url', 'previous_response_id', 'approval_request_id', 'id', 'call_id', 'name', 'model']);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(body: Json, change: Mutation): Json {
  const paths = pathsOf(body);
  const path = paths[change.pick % paths.length]!;
  switch (change.kind) {
    case 'remove':
      return withAt(body, path, () => undefined);
    case 'sameType':
      return withAt(body, path, (value) => {
        if (typeof value === 'string') return ENUM_KEYS.has(String(path.at(-1))) ? value : change.text;
        if (typeof value === 'number') return change.number;
        if (typeof value === 'boolean') return !value;
        if (Array.isArray(value)) return [...value, ...value];
        return value ?? null;
      });
    case 'replace':
      return withAt(body, path, () => change.value);
    case 'wrap':
      return withAt(body, path, (value) => (change.inArray ? [value ?? null] : { value: value ?? null }));
    case 'nest':
      return withAt(body, path, (value) => {
        let nested: Json = value ?? null;
        for (let level = 0; level < change.levels; level++) nested = level % 2 ? [nested] : { a: nested };
        return nested;
      });
    case 'huge':
      return withAt(body, path, () => 'x'.repeat(change.length));
    case 'repeat':
      return withAt(body, path, (value) => Array.from({ length: change.times }, () => value ?? null));
    case 'extra':
      return withAt(body, path, (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value, [change.key]: change.value } : value ?? null));
  }
}

/** Damage to the body's bytes after serialising (one body in ten): cut short, or invalid UTF-8 spliced in. */
const rawDamage = fc.oneof(
  { weight: 9, arbitrary: fc.constant(null) },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('bytes' as const), at: fc.nat(), bytes: fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x00]) }),
    ),
  },
);

function damage(payload: Buffer, change: NonNullable<typeof rawDamage extends fc.Arbitrary<infer D> ? D : never>): Buffer {
  const at = change.at % Math.max(payload.length, 1);
  if (change.kind === 'truncate') return payload.subarray(0, at);
  return Buffer.concat([payload.subarray(0, at), Buffer.from(change.bytes), payload.subarray(at)]);
}

/** The model of each provider; each body goes to one of them. */
const MODELS = [openaiChat.model, anthropic.model];

/**
 * Thousands of generated request bodies — the shapes of the schema, mutated
 * — sent to the real app over both providers: no 5xx, ever; every 4xx in the
 * error envelope; every 2xx a valid response. `GENERATED_SEED` and
 * `GENERATED_RUNS` replay or widen a run; a failure prints the seed, the
 * shrunk counterexample and the body that failed.
 */
describe('generated requests', () => {
  const chat = new ScriptedChatUpstream();
  const claude = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let app: FastifyInstance;
  let seeds: Json[];

  /**
   * The model calls one of the tools it is offered until it has seen a result,
   * then answers in text; the two seeding requests call what the stored
   * continuations need. Read without parsing: mutated arguments reach the
   * upstream too.
   */
  const script = (flavor: ProviderFlavor) => (request: RecordedRequest) => {
    const messages = (request.body?.messages ?? []) as { role: string; content: unknown }[];
    const content = messages.length === 1 && messages[0]!.role === 'user' ? messages[0]!.content : null;
    const only = typeof content === 'string' ? content : Array.isArray(content) ? content.map((block: { text?: unknown }) => String(block.text ?? '')).join('') : '';
    if (only === 'seed a call') return flavor.render(request, { calls: [{ id: 'call_s', name: 'get_weather', args: { city: 'Oslo' } }] });
    if (only === 'seed an approval') return flavor.render(request, { calls: [{ id: 'call_a', name: 'calc__add', args: { a: 1, b: 2 } }] });
    const offered = ((request.body?.tools ?? []) as { name?: string; function?: { name?: string } }[]).map((tool) => tool.function?.name ?? tool.name ?? '').filter(Boolean);
    const answered = messages.some((message) => message.role === 'tool' || (Array.isArray(message.content) && message.content.some((block: { type?: unknown }) => block?.type === 'tool_result')));
    if (offered.length > 0 && !answered) {
      return flavor.render(request, { calls: [{ id: `call_g${messages.length}`, name: offered[messages.length % offered.length]!, args: { city: 'Oslo', a: 1, b: 2, input: 'x', query: 'q' } }] });
    }
    return flavor.render(request, { text: 'fine' });
  };

  beforeAll(async () => {
    chat.setScript(script(openaiChat));
    claude.setScript(script(anthropic));
    const [chatUrl, claudeUrl, mcpUrl] = await Promise.all([chat.start(), claude.start(), mcp.start()]);
    gateway = await startGateway(chatUrl, {
      providers: { ...(openaiChat.config(chatUrl).providers as object), ...(anthropic.config(claudeUrl).providers as object) },
      defaultProvider: 'openai',
      mcp: { allowedUrls: [`${new URL(mcpUrl).origin}/`] },
    });
    app = gateway.app;
    const create = async (body: Record<string, unknown>) => (await app.inject({ method: 'POST', url: '/v1/responses', payload: { model: openaiChat.model, ...body } })).json();
    const calc = { type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'always' };
    const paused = await create({ input: 'seed a call', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }] });
    const approval = await create({ input: 'seed an approval', tools: [calc] });
    const [listing, approvalRequest] = approval.output;
    expect(approvalRequest.type).toBe('mcp_approval_request');
    seeds = seedBodies({ pausedId: paused.id, pausedCall: paused.output.find((item: any) => item.type === 'function_call'), approvalId: approval.id, approvalRequest, listing, calc });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([chat.close(), claude.close(), mcp.close()]);
  });

  it('no mutated body gets a 5xx; 4xx carry the error envelope; 2xx are valid responses', async () => {
    const statuses = new Map<number, number>();
    const seed = Number(process.env.GENERATED_SEED ?? 20261122);
    const numRuns = Number(process.env.GENERATED_RUNS ?? 3_000);
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat(), fc.array(mutation, { minLength: 0, maxLength: 3 }), rawDamage, async (seedIndex, modelIndex, changes, raw) => {
        const seedBody = { model: MODELS[modelIndex % MODELS.length]!, ...(seeds[seedIndex % seeds.length] as object) };
        const body = changes.reduce(mutate, seedBody as Json);
        let payload: Buffer = Buffer.from(safeStringify(body));
        if (raw) payload = damage(payload, raw);
        const response = await app.inject({ method: 'POST', url: '/v1/responses', headers: { 'content-type': 'application/json' }, payload });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const shown = () => `status ${response.statusCode} for ${payload.subarray(0, 1_500).toString()}${payload.length > 1_500 ? '…' : ''}\n→ ${response.body.slice(0, 600)}`;
        if (response.statusCode >= 500) throw new Error(shown());
        if (response.statusCode >= 400) {
          assertErrorEnvelope(response.json());
          return;
        }
        if (response.headers['content-type']?.toString().startsWith('text/event-stream')) {
          const terminal = /event: response\.(completed|incomplete|failed)\ndata: (.*)\n/.exec(response.body);
          if (!terminal) throw new Error(`no terminal event: ${shown()}`);
          assertValidResponseWithOpenAIItems(JSON.parse(terminal[2]!).response);
          return;
        }
        assertValidResponseWithOpenAIItems(response.json());
      }),
      { numRuns, seed, endOnFailure: true },
    );
    // The generator reaches both sides in earnest: a fifth at least accepted (so the engine, providers and MCP see them), a fifth refused.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(numRuns / 5);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(numRuns / 5);
  }, 120_000);
});

/** A piece of JSON text, between values. */
class Token {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** JSON text of a value too deep for JSON.stringify's recursion, written iteratively. */
function safeStringify(root: Json): string {
  const out: string[] = [];
  const stack: (Json | Token)[] = [root];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next instanceof Token) {
      out.push(next.text);
    } else if (next === null || typeof next !== 'object') {
      out.push(JSON.stringify(next) ?? 'null');
    } else if (Array.isArray(next)) {
      stack.push(new Token(']'));
      for (let index = next.length - 1; index >= 0; index--) {
        stack.push(next[index]!);
        if (index > 0) stack.push(new Token(','));
      }
      out.push('[');
    } else {
      stack.push(new Token('}'));
      const entries = Object.entries(next);
      for (let index = entries.length - 1; index >= 0; index--) {
        stack.push(entries[index]![1]);
        stack.push(new Token(`${index > 0 ? ',' : ''}${JSON.stringify(entries[index]![0])}:`));
      }
      out.push('{');
    }
  }
  return out.join('');
}
