import { describe, expect, it } from 'vitest';
import type { AnswerUnderCheck } from '../../src/engine/controls/answer-check.ts';
import { schemaAnswerCheck } from '../../src/engine/controls/schema-answer-check.ts';

const problems = (schema: Record<string, unknown>, text: string) => schemaAnswerCheck({ type: 'json_schema', name: 'r', schema })!.problems({ text } as AnswerUnderCheck); // the schema check reads the text only

describe('schemaAnswerCheck dialects', () => {
  it('a draft-07 schema (what zodTextFormat sends) is compiled as draft-07: a tuple is an items array', async () => {
    const tuple = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false };
    expect(await problems(tuple, '["a", 1]')).toEqual([]);
    expect(await problems(tuple, '["a", "b"]')).toEqual(['/1 must be number']);
    expect(await problems(tuple, '["a", 1, 2]')).toHaveLength(1);
  });

  it('without $schema (or with 2020-12) the schema is 2020-12: prefixItems', async () => {
    for (const $schema of [undefined, 'https://json-schema.org/draft/2020-12/schema']) {
      const tuple = { ...($schema && { $schema }), type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false };
      expect(await problems(tuple, '["a", 1]')).toEqual([]);
      expect(await problems(tuple, '["a", 1, 2]')).toHaveLength(1);
    }
  });

  it('draft-07 under either scheme, and written the older way with no $schema (a tuple as an items list), is read as draft-07', async () => {
    for (const $schema of ['https://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema', undefined]) {
      const tuple = { ...($schema && { $schema }), type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false };
      expect(await problems(tuple, '["a", 1]')).toEqual([]);
      expect(await problems(tuple, '["a", "b"]')).toEqual(['/1 must be number']);
    }
  });

  it('2019-09 by its own rules; drafts 4 and 6 by draft-07 rules, the nearest there are: checked, not refused', async () => {
    const older = (uri: string) => ({ $schema: uri, type: 'object', properties: { n: { type: 'number' } }, required: ['n'] });
    for (const uri of ['https://json-schema.org/draft/2019-09/schema', 'http://json-schema.org/draft-06/schema#', 'http://json-schema.org/draft-04/schema#']) {
      expect(await problems(older(uri), '{"n": 1}')).toEqual([]);
      expect(await problems(older(uri), '{"n": "x"}')).toEqual(['/n must be number']);
    }
  });

  it("draft-04's own keywords are read as it means them: id, and exclusive bounds as flags", async () => {
    const draft04 = { $schema: 'http://json-schema.org/draft-04/schema#', id: 'https://example.com/d4', type: 'object', properties: { id: { type: 'string' }, n: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 10, exclusiveMaximum: false } }, required: ['id', 'n'] };
    expect(await problems(draft04, '{"id": "a", "n": 10}')).toEqual([]);
    expect(await problems(draft04, '{"id": "a", "n": 0}')).toEqual(['/n must be > 0']);
    expect(await problems(draft04, '{"n": 1}')).toEqual(["(the answer) must have required property 'id'"]);
    // Values of enum, const and default are answers, not schemas: left as written.
    const picks = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', properties: { pick: { enum: [{ id: 'a' }, { exclusiveMinimum: true, minimum: 3 }] } } };
    expect(await problems(picks, '{"pick": {"id": "a"}}')).toEqual([]);
    expect(await problems(picks, '{"pick": {"exclusiveMinimum": true, "minimum": 3}}')).toEqual([]);
  });

  it('a schema no compiler can read is a 400 on text.format.schema', () => {
    expect(() => schemaAnswerCheck({ type: 'json_schema', name: 'r', schema: { type: 'object', properties: { n: { type: 'nonsense' } } } })).toThrow(expect.objectContaining({ status: 400, param: 'text.format.schema' }));
  });
});

describe('schemaAnswerCheck and $id', () => {
  it('two versions of a schema with one $id each validate by their own rules, again after 300 other schemas, and a self-reference by $id holds', async () => {
    const version = (required: string) => ({ $id: 'https://example.com/schemas/order', type: 'object', properties: { [required]: { type: 'string' }, parts: { type: 'array', items: { $ref: 'https://example.com/schemas/order' } } }, required: [required] });
    expect(await problems(version('id'), '{"id": "a", "parts": [{"id": "b"}]}')).toEqual([]);
    expect(await problems(version('number'), '{"number": "a"}')).toEqual([]);
    expect(await problems(version('number'), '{"id": "a"}')).toEqual(["(the answer) must have required property 'number'"]);
    expect(await problems(version('id'), '{"id": "a", "parts": [{"number": "b"}]}')).toEqual(["/parts/0 must have required property 'id'"]);
    for (let index = 0; index < 300; index++) await problems({ type: 'object', title: `filler ${index}` }, '{}');
    expect(await problems(version('id'), '{"number": "a"}')).toEqual(["(the answer) must have required property 'id'"]);
  });

  it("one request's schema is never reached by another's $ref", () => {
    schemaAnswerCheck({ type: 'json_schema', name: 'r', schema: { $id: 'https://example.com/schemas/private', type: 'object' } });
    expect(() => schemaAnswerCheck({ type: 'json_schema', name: 'r', schema: { $ref: 'https://example.com/schemas/private' } })).toThrow(expect.objectContaining({ status: 400, param: 'text.format.schema' }));
  });
});
