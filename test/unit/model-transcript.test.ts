import { describe, expect, it } from 'vitest';
import { callItemsFor } from '../../src/engine/call-items.ts';
import { ModelTranscript } from '../../src/engine/model-transcript.ts';
import { OutputBuilder } from '../../src/engine/output-builder.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';

/** An MCP call of this response, as the loop adds it: the model's call, then its result. */
function mcpCall(builder: OutputBuilder, callId: string): void {
  const finish = callItemsFor({ kind: 'mcp', serverLabel: 'calc', toolName: 'add', requiresApproval: false }).openResult(builder, { callId, name: 'calc__add', arguments: '{}' }, null);
  finish({ output: '3', isError: false });
}

describe('ModelTranscript', () => {
  it("shows an MCP call of this response under the model's own id, and under the item's own where the model was already shown that id", () => {
    const before: InputItem[] = [{ type: 'message', role: 'user', content: 'go' }, { type: 'function_call', call_id: 'call_0', name: 'calc__add', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_0', output: '1' }];
    const builder = new OutputBuilder();
    mcpCall(builder, 'call_0');
    mcpCall(builder, 'gemini_1');
    const shown = new ModelTranscript(before).next(builder.output).slice(before.length);
    const [reused, own] = builder.output as { id: string }[];
    expect(own).toBeDefined();
    expect(shown.map((item) => (item as { call_id?: string }).call_id)).toEqual([reused!.id, 'gemini_1', reused!.id, 'gemini_1']);
    // Nothing of it reaches a client or the store.
    expect(JSON.stringify(builder.output)).not.toContain('gemini_1');
  });
});
