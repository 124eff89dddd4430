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

  it('a dialect neither compiler knows is a 400 on text.format.schema', () => {
    expect(() => schemaAnswerCheck({ type: 'json_schema', name: 'r', schema: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } })).toThrow(expect.objectContaining({ status: 400, param: 'text.format.schema' }));
  });
});
