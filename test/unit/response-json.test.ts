import { describe, expect, it } from 'vitest';
import { finishResponse } from '../../src/engine/finish-response.ts';
import { initialResponse } from '../../src/engine/initial-response.ts';
import { OutputBuilder } from '../../src/engine/output-builder.ts';
import { UsageTotal } from '../../src/engine/usage-total.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { responseJson } from '../../src/protocol/response-json.ts';
import type { ResponseResource } from '../../src/protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../../src/protocol/stream-events.ts';
import type { StoredResponse } from '../../src/store/response-store.ts';
import { storedRecordParts } from '../../src/store/stored-record-json.ts';

const storedRecordJson = (stored: StoredResponse) => storedRecordParts(stored).record;

function record(): StoredResponse {
  const response = initialResponse({ model: 'm', instructions: 'Say "hi" \u2028 then stop', metadata: { note: 'ünïcødé 🚀 \\ "quoted"' } }, 'resp_1', 'm', 1_700_000_000);
  response.status = 'completed';
  response.output = [
    { type: 'message', id: 'msg_out', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello\n"there"', annotations: [] }] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{"q":"x"}', status: 'completed' },
  ] as ResponseResource['output'];
  return {
    tenant: 'tenant "a"',
    response,
    inputItems: [
      { id: 'msg_in', type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'Hi\u0000there' }] },
      { id: 'fco_1', type: 'function_call_output', call_id: 'call_0', output: '[]', status: 'completed' },
    ] as StoredResponse['inputItems'],
    previousResponseId: 'resp_0',
  };
}

describe('a stored record serialized around its response', () => {
  it('is the same text JSON.stringify gives the record, its turn and its items', () => {
    const stored = record();
    expect(storedRecordJson(stored)).toBe(JSON.stringify(stored));
    const parts = storedRecordParts(stored);
    expect(parts.record).toBe(JSON.stringify(stored));
    expect(parts.turn).toBe(JSON.stringify({ responseId: 'resp_1', status: 'completed', inputItems: stored.inputItems, output: stored.response.output }));
    expect(parts.items).toEqual([...stored.inputItems, ...stored.response.output].map((item) => JSON.stringify(item)));
    expect(storedRecordJson({ ...stored, previousResponseId: null, inputItems: [] })).toBe(JSON.stringify({ ...stored, previousResponseId: null, inputItems: [] }));
  });

  it('leaves the reply the exact JSON of the response it stored', () => {
    const stored = record();
    const text = storedRecordJson(stored);
    expect(responseJson(stored.response)).toBe(JSON.stringify(stored.response));
    expect(text).toContain(responseJson(stored.response));
  });

  it('is made afresh when the response is stored again after a change', () => {
    const stored = record();
    storedRecordJson(stored);
    stored.response.status = 'incomplete';
    storedRecordParts(stored);
    expect(JSON.parse(responseJson(stored.response)).status).toBe('incomplete');
  });
});

describe('a response changed after it was stored', () => {
  it('is never answered with the JSON made before the change', async () => {
    const response = initialResponse({ model: 'm' }, 'resp_2', 'm', 0);
    const events: ResponseStreamEvent[] = [];
    const finishing = finishResponse(
      {
        response,
        pausedStatus: 'requires_action',
        clientGone: false,
        toolsRan: false,
        hooks: {
          // Stored (and so serialized) as completed, then a later step of the same hook fails: the response ends failed.
          beforeTerminal: async (final) => {
            storedRecordJson({ tenant: 't', response: final, inputItems: [], previousResponseId: null });
            throw new GatewayError({ status: 500, type: 'server_error', code: 'server_error', message: 'The conversation could not be updated.' });
          },
          onHookFailure: 'fail-response',
        },
      },
      new OutputBuilder(),
      new UsageTotal(),
      { status: 'completed' },
      (body) => [{ ...body, sequence_number: 0 } as ResponseStreamEvent],
    );
    events.push(...(await finishing));
    expect(events.map((event) => event.type)).toEqual(['response.failed']);
    const sent = JSON.parse(responseJson(response));
    expect(sent.status).toBe('failed');
    expect(sent).toEqual(JSON.parse(JSON.stringify(response)));
  });
});
