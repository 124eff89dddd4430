import { describe, expect, it } from 'vitest';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { parseCreateResponseRequest } from '../../src/protocol/parse-create-response-request.ts';
import { parseRequest } from '../../src/protocol/parse-request.ts';
import { REQUEST_LIMITS } from '../../src/protocol/request-limits.ts';

/** A deterministic stream of numbers in [0, 1), so a failure names a reproducible case. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const VALUES: unknown[] = [
  null, undefined, true, false, 0, -0, 1.5, -3, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY,
  '', 'm', 'Hello', 'x'.repeat(REQUEST_LIMITS.maxIdChars), 'x'.repeat(REQUEST_LIMITS.maxIdChars + 1),
  [], ['Hello'], [{ type: 'message', role: 'user', content: 'hi' }], {}, { id: 'conv_1' },
];
const KEYS = ['model', 'input', 'previous_response_id', 'temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'parallel_tool_calls', 'stream', 'background', 'instructions', 'store', 'metadata', 'tools', 'max_output_tokens', 'conversation', 'temprature', '__proto__'];

function outcome(parse: () => unknown): { ok: true; json: string; keys: string[] } | { ok: false; error: unknown } {
  try {
    const value = parse() as Record<string, unknown>;
    return { ok: true, json: JSON.stringify(value), keys: Object.keys(value) };
  } catch (error) {
    return { ok: false, error: JSON.stringify(error) + String((error as Error).message) };
  }
}

describe('the common request parsed without walking the schema', () => {
  it('gives what the schema gives, key order included, or the schema error, for every body', () => {
    const next = random(16);
    const pick = <T>(from: readonly T[]) => from[Math.floor(next() * from.length)]!;
    for (let index = 0; index < 5_000; index++) {
      const body: Record<string, unknown> = {};
      const count = Math.floor(next() * 5);
      for (let field = 0; field < count; field++) {
        // Mostly values the field accepts, so the fast path is exercised, not only refused.
        const key = pick(KEYS);
        // An own property, as JSON.parse makes (an assignment to `__proto__` would set the prototype instead).
        Object.defineProperty(body, key, { value: next() < 0.6 ? pick(['Hello', true, false, 0.7, null, 'resp_1']) : pick(VALUES), enumerable: true, configurable: true, writable: true });
      }
      const fast = outcome(() => parseCreateResponseRequest(body));
      const schema = outcome(() => parseRequest(CreateResponseRequest, body));
      expect(fast, JSON.stringify(body)).toEqual(schema);
    }
  });

  it('takes the plain request as the schema would, in the schema order', () => {
    const request = parseCreateResponseRequest({ stream: false, input: 'Hello', store: null, model: 'm', temperature: 0.2 });
    expect(Object.keys(request)).toEqual(['model', 'input', 'temperature', 'stream', 'store']);
    expect(request).toEqual(CreateResponseRequest.parse({ stream: false, input: 'Hello', store: null, model: 'm', temperature: 0.2 }));
  });

  it('leaves every refusal to the schema: the same status, code and param', () => {
    for (const body of [{ model: '' }, { model: 'm', input: 'x', temprature: 1 }, { model: 'm', stream: 'yes' }, { model: 'm', temperature: Number.NaN }, { model: 'm', input: 'x'.repeat(REQUEST_LIMITS.maxTextChars + 1) }]) {
      expect(() => parseCreateResponseRequest(body)).toThrow();
      expect(outcome(() => parseCreateResponseRequest(body))).toEqual(outcome(() => parseRequest(CreateResponseRequest, body)));
    }
  });
});
