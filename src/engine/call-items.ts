import type { CallPresentation, ToolCall, ToolResult } from '../executors/tool-executor.ts';
import type { McpCallItem, OutputItem } from '../protocol/output-items.ts';
import { newId } from '../util/ids.ts';
import { jsonStringField } from '../util/json-string-field.ts';
import type { Emit, OutputBuilder } from './output-builder.ts';

/**
 * How one kind of server-run tool shows its calls to the client, in one
 * place per kind so the loop never branches on kinds: whether the model's
 * call appears as a `function_call` item, which item its result goes into,
 * and which item asks the client to approve it. (Kinds the client runs —
 * functions, freeform tools, tool search — are in client-call-kinds.ts.)
 */
export interface CallItems {
  /** The model's call is not shown as a `function_call`: the result item stands for it. */
  readonly hidesCall: boolean;
  /** Adds the item the result goes into; the returned function completes it (with the images the tool answered with, where the item holds them). */
  openResult(builder: OutputBuilder, call: ToolCall, emit: Emit, approvalRequestId?: string): OpenedResult;
  /** The item that pauses the response until the client approves the call, for kinds that ask. */
  approvalRequest(call: ToolCall): OutputItem | null;
}

/** A call's result item, begun: `finish` completes it; `shownAs` is the id a client finds the call by (its `call_id`, or its `mcp_call`'s id). */
export interface OpenedResult {
  finish(result: ToolResult): void;
  shownAs: string;
}

/** Seed 004's shape: `function_call` + `function_call_output`. */
const FUNCTION_CALL_ITEMS: CallItems = {
  hidesCall: false,
  openResult(builder, call, emit) {
    const slot = builder.beginToolOutput(call, emit);
    return {
      // Images go as parts after the text, as OpenAI's function_call_output holds them.
      finish: ({ output, images }) => builder.finishToolOutput(slot, images?.length ? [{ type: 'input_text', text: output }, ...images] : output, emit),
      shownAs: call.callId,
    };
  },
  approvalRequest: () => null,
};

/** OpenAI's MCP items: one `mcp_call` holding arguments and output or error; `mcp_approval_request` to ask. */
function mcpCallItems(presentation: Extract<CallPresentation, { kind: 'mcp' }>): CallItems {
  return {
    hidesCall: true,
    openResult(builder, call, emit, approvalRequestId) {
      const slot = builder.beginItem<McpCallItem>(
        { type: 'mcp_call', id: newId('mcp'), server_label: presentation.serverLabel, name: presentation.toolName, arguments: call.arguments, status: 'in_progress', ...(approvalRequestId && { approval_request_id: approvalRequestId }) },
        emit,
      );
      const finish = ({ output, isError, unfinished, images }: ToolResult) => {
        if (isError) slot.item.error = jsonStringField(output, 'error') ?? output;
        else slot.item.output = output;
        if (images?.length) slot.item['loopgate:images'] = images.map((image) => ({ type: 'input_image', image_url: image.image_url! }));
        // Cut off (cancelled, out of time): the call did not finish, and whether it took effect is unknown.
        slot.item.status = unfinished ? 'incomplete' : 'completed';
        builder.finishItem(slot, emit);
      };
      return { finish, shownAs: slot.item.id };
    },
    approvalRequest: (call) => ({ type: 'mcp_approval_request', id: newId('mcpr'), server_label: presentation.serverLabel, name: presentation.toolName, arguments: call.arguments }),
  };
}

export function callItemsFor(presentation: CallPresentation): CallItems {
  switch (presentation.kind) {
    case 'function':
      return FUNCTION_CALL_ITEMS;
    case 'mcp':
      return mcpCallItems(presentation);
  }
}
