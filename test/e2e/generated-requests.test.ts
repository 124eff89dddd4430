import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** Valid bodies covering the request's shapes; the generator mutates them. Filled in once a stored response exists. */
function seedBodies(storedId: string, storedCallId: string): Json[] {
  const weather = { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true };
  return [
    { model: 'm', input: 'Hello' },
    { model: 'm', input: 'Hello', stream: true, instructions: 'Be brief.', temperature: 0.2, top_p: 0.9, max_output_tokens: 64, metadata: { a: 'b' } },
    {
      model: 'm',
      input: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] },
      ],
    },
    { model: 'm', input: 'x', tools: [weather], tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false },
    { model: 'm', input: 'x', tools: [weather], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] } },
    { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object', properties: { a: { type: 'number' } } }, strict: true }, verbosity: 'low' } },
    { model: 'm', input: 'x', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'], store: false },
    {
      model: 'm',
      tools: [weather],
      input: [
        { role: 'user', content: 'weather?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '14' },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thought' }], encrypted_content: 'abc' },
      ],
    },
    { model: 'm', previous_response_id: storedId, input: [{ type: 'function_call_output', call_id: storedCallId, output: '14' }], tools: [weather] },
    { model: 'm', previous_response_id: storedId, input: [{ type: 'item_reference', id: 'msg_missing' }] },
  ];
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

const TYPES = ['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference', 'input_text', 'input_image', 'input_file', 'output_text', 'refusal', 'function', 'json_schema', 'json_object', 'text', 'compaction', 'mcp_approval_response', 'custom', 'web_search', 'unknown'];

const strangeString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('', '\u0000', '\ud800', '\uffff', '💥'.repeat(1_000), 'a'.repeat(70), '__proto__', 'constructor', '{"a":', 'null', '-1', '1e309'),
  fc.constantFrom(...TYPES),
);
const scalar: fc.Arbitrary<Json> = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(-1, 0, 1e308, 2 ** 53, -0), strangeString);
const anyJson = fc.oneof({ weight: 3, arbitrary: scalar }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> });

/** One change to a body: remove, retype, replace, nest deeply, blow up, or add an unknown key. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: anyJson }),
  fc.record({ kind: fc.constant('wrap' as const), pick: fc.nat(), inArray: fc.boolean() }),
  fc.record({ kind: fc.constant('nest' as const), pick: fc.nat(), levels: fc.integer({ min: 50, max: 12_000 }) }),
  fc.record({ kind: fc.constant('huge' as const), pick: fc.nat(), length: fc.integer({ min: 1_000, max: 200_000 }) }),
  fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat(), times: fc.integer({ min: 2, max: 100 }) }),
  fc.record({ kind: fc.constant('extra' as const), pick: fc.nat(), key: strangeString, value: anyJson }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(body: Json, change: Mutation): Json {
  const paths = pathsOf(body);
  const path = paths[change.pick % paths.length]!;
  switch (change.kind) {
    case 'remove':
      return withAt(body, path, () => undefined);
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

/**
 * Thousands of generated request bodies — the shapes of the schema, mutated
 * — sent to the real app: no 5xx, ever; every 4xx in the error envelope;
 * every 2xx a valid response. A failure prints the seed and the smallest
 * body that still fails.
 */
describe('generated requests', () => {
  const upstream = new ScriptedChatUpstream(textReply('fine'));
  let gateway: RunningGateway;
  let app: FastifyInstance;
  let seeds: Json[];

  beforeAll(async () => {
    upstream.setScript((request) => {
      const paused = (request.body.messages as any[]).length === 1 && request.body.messages[0].content === 'seed a call';
      if (paused) return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_s', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] } };
      return textReply('fine')(request);
    });
    gateway = await startGateway(await upstream.start());
    app = gateway.app;
    const stored = await app.inject({ method: 'POST', url: '/v1/responses', payload: { model: 'm', input: 'seed a call', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }] } });
    seeds = seedBodies(stored.json().id, 'call_s');
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('no mutated body gets a 5xx; 4xx carry the error envelope; 2xx are valid responses', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 }), async (seedIndex, changes) => {
        const body = changes.reduce(mutate, seeds[seedIndex % seeds.length]!);
        const response = await app.inject({ method: 'POST', url: '/v1/responses', headers: { 'content-type': 'application/json' }, payload: safeStringify(body) });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        expect(response.statusCode).toBeLessThan(500);
        if (response.statusCode >= 400) {
          assertErrorEnvelope(response.json());
          return;
        }
        if (response.headers['content-type']?.toString().startsWith('text/event-stream')) {
          expect(response.body).toMatch(/event: response\.(completed|incomplete|failed)\n/);
          return;
        }
        assertValidResponse(response.json());
      }),
      { numRuns: 2_000, seed: 20261122, endOnFailure: true },
    );
    // The generator reached both sides: accepted bodies and refused ones.
    expect([...statuses.keys()].some((status) => status === 200)).toBe(true);
    expect([...statuses.keys()].some((status) => status === 400)).toBe(true);
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
