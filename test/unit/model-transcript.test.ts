import { describe, expect, it } from 'vitest';
import { ModelTranscript } from '../../src/engine/model-transcript.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import type { OutputItem } from '../../src/protocol/output-items.ts';

const user: InputItem = { type: 'message', role: 'user', content: 'go' };
const shape = (items: InputItem[]) => items.map((item) => (item.type === 'function_call' ? `call ${item.call_id}` : item.type === 'function_call_output' ? `output ${item.call_id}` : item.type));

describe('what the model is shown of its own turns', () => {
  it("a turn's calls come before its outputs, whichever items hold them (a server-run call's output item, an MCP call holding its own)", () => {
    const transcript = new ModelTranscript([user]);
    const output = [
      { type: 'function_call', id: 'fc_1', call_id: 'call_s', name: 'server_tool', arguments: '{}', status: 'completed' },
      { type: 'function_call_output', id: 'fco_1', call_id: 'call_s', output: 'S', status: 'completed' },
      { type: 'mcp_call', id: 'mcp_a', server_label: 'calc', name: 'add', arguments: '{}', output: 'A', status: 'completed' },
    ] as unknown as OutputItem[];
    expect(shape(transcript.next(output))).toEqual(['message', 'call call_s', 'call mcp_a', 'output call_s', 'output mcp_a']);
  });

  it("a paused turn's outputs in the history follow the calls the turn goes on with", () => {
    const before: InputItem[] = [user, { type: 'function_call', call_id: 'mcp_a', name: 'calc__add', arguments: '{}' }, { type: 'function_call_output', call_id: 'mcp_a', output: 'A' }];
    const transcript = new ModelTranscript(before, new Set(['mcp_a']));
    const resumed = [{ type: 'mcp_call', id: 'mcp_b', server_label: 'calc', name: 'slow', arguments: '{}', output: 'B', status: 'completed', approval_request_id: 'mcpr_b' }] as unknown as OutputItem[];
    expect(shape(transcript.next(resumed))).toEqual(['message', 'call mcp_a', 'call mcp_b', 'output mcp_a', 'output mcp_b']);
    // Once only: the next turn's items follow as they come.
    const more = [...resumed, { type: 'mcp_call', id: 'mcp_c', server_label: 'calc', name: 'add', arguments: '{}', output: 'C', status: 'completed' }] as unknown as OutputItem[];
    expect(shape(transcript.next(more)).slice(-2)).toEqual(['call mcp_c', 'output mcp_c']);
  });
});
