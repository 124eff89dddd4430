import type { TurnTokens } from './flavor.ts';
import { openaiRefusal, textOfContent, textPiecesOf, type ProviderFlavor, type Seen, type ToolChoiceSeen } from './flavor.ts';

const responsesEvent = (data: { type: string } & Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** The Responses API's whole answer object, as its terminal event and a non-streamed reply carry it. */
function responsesBody(status: string, output: unknown[], tokens: TurnTokens, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const usage = {
    input_tokens: tokens.input,
    input_tokens_details: { cached_tokens: tokens.cached ?? 0 },
    output_tokens: tokens.output,
    output_tokens_details: { reasoning_tokens: tokens.reasoning ?? 0 },
    total_tokens: tokens.input + tokens.output,
  };
  return { id: 'resp_scripted', object: 'response', created_at: 0, status, model: 'upstream-model', output, usage: status === 'in_progress' ? null : usage, error: null, incomplete_details: null, ...extra };
}

export const openaiResponses: ProviderFlavor<'openai-responses'> = {
  name: 'openai-responses',
  model: 'gpt-responses-test',
  provider: 'responses',
  config: (upstream, options) => ({ providers: { responses: { type: 'openai-responses', baseUrl: upstream, apiKey: 'sk-test', ...(options?.hostedTools && { hostedTools: options.hostedTools }) } }, defaultProvider: 'responses' }),
  runsWebSearch: true,
  render(request, turn) {
    const tokens = turn.usage ?? { input: 10, output: 5 };
    const pieces = textPiecesOf(turn);
    const message = pieces.length > 0 ? { id: 'msg_scripted', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: pieces.join(''), annotations: [] }] } : null;
    // A call to a tool offered as freeform (`custom`) comes back as OpenAI answers it: a custom_tool_call with the raw input.
    const freeform = new Set(((request.body.tools ?? []) as any[]).filter((tool) => tool.type === 'custom').map((tool) => tool.name));
    const calls = (turn.calls ?? []).map((call, index) =>
      freeform.has(call.name)
        ? { id: `ctc_scripted_${index}`, type: 'custom_tool_call', status: 'completed', call_id: call.id, name: call.name, input: String(call.args.input) }
        : { id: `fc_scripted_${index}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) },
    );
    const output = [...(message ? [message] : []), ...calls];
    if (!request.body.stream) return { kind: 'json', body: responsesBody('completed', output, tokens) };
    let sequence = 0;
    const event = (data: { type: string } & Record<string, unknown>) => responsesEvent({ ...data, sequence_number: sequence++ });
    const frames = [event({ type: 'response.created', response: responsesBody('in_progress', [], tokens) })];
    if (message) {
      frames.push(event({ type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } }));
      for (const delta of pieces) frames.push(event({ type: 'response.output_text.delta', item_id: message.id, output_index: 0, content_index: 0, delta, logprobs: [] }));
      frames.push(event({ type: 'response.output_item.done', output_index: 0, item: message }));
    }
    calls.forEach((call, index) => {
      const outputIndex = index + (message ? 1 : 0);
      if (call.type === 'custom_tool_call') {
        frames.push(event({ type: 'response.output_item.added', output_index: outputIndex, item: { ...call, status: 'in_progress', input: '' } }));
        const half = Math.ceil(call.input!.length / 2);
        for (const delta of [call.input!.slice(0, half), call.input!.slice(half)]) frames.push(event({ type: 'response.custom_tool_call_input.delta', item_id: call.id, output_index: outputIndex, delta }));
        frames.push(event({ type: 'response.custom_tool_call_input.done', item_id: call.id, output_index: outputIndex, input: call.input }));
      } else {
        frames.push(event({ type: 'response.output_item.added', output_index: outputIndex, item: { ...call, status: 'in_progress', arguments: '' } }));
        frames.push(event({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index: outputIndex, delta: call.arguments }));
      }
      frames.push(event({ type: 'response.output_item.done', output_index: outputIndex, item: call }));
    });
    frames.push(event({ type: 'response.completed', response: responsesBody('completed', output, tokens) }));
    return { kind: 'sse', pieces: frames };
  },
  // A Responses answer has a status, not a finish reason: `completed` either way.
  finish: { tools: 'completed', done: 'completed' },
  answer: { model: 'upstream-model', id: /^resp_scripted$/ },
  seen(request) {
    const seen: Seen[] = [];
    if (request.body.instructions) seen.push({ kind: 'system', text: request.body.instructions });
    for (const item of request.body.input as any[]) {
      if (item.type === 'function_call') seen.push({ kind: 'call', id: item.call_id, name: item.name, args: JSON.parse(item.arguments || '{}') });
      // A freeform call in the engine's terms: its input as the one argument.
      else if (item.type === 'custom_tool_call') seen.push({ kind: 'call', id: item.call_id, name: item.name, args: { input: item.input } });
      else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') seen.push({ kind: 'result', id: item.call_id, content: textOfContent(item.output) });
      else if (item.type === 'message') {
        seen.push({ kind: item.role === 'system' || item.role === 'developer' ? 'system' : item.role === 'user' ? 'user' : 'assistant', text: textOfContent(item.content) });
      }
    }
    return seen;
  },
  requestedModel: (request) => request.body.model,
  streamed: (request) => request.body.stream === true,
  // A freeform tool's format (its grammar) stands where a function's parameters would.
  offeredTools: (request) => ((request.body.tools ?? []) as any[]).filter((tool) => tool.type === 'function' || tool.type === 'custom').map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.type === 'custom' ? tool.format : tool.parameters })),
  toolChoice(request) {
    const choice = request.body.tool_choice;
    if (choice === undefined) return null;
    if (typeof choice === 'string') return { mode: choice } as ToolChoiceSeen;
    if (choice.type === 'function' || choice.type === 'custom') return { mode: 'required', names: [choice.name] };
    return { mode: choice.mode, names: choice.tools.map((tool: any) => tool.name) };
  },
  mentionsTools: (request) => request.body.tools !== undefined || request.body.tool_choice !== undefined || request.body.parallel_tool_calls !== undefined,
  format(request) {
    const format = request.body.text?.format;
    if (format === undefined) return null;
    return format.type === 'json_schema' ? { type: 'json_schema', schema: format.schema } : { type: 'json_object' };
  },
  refusal: (status, message) => openaiRefusal(status, message),
  // As OpenAI's Responses API words it: the sizes are not named.
  tooLong: () => openaiRefusal(400, 'Your input exceeds the context window of this model. Please adjust your input and try again.', 'context_length_exceeded', 'input'),
  tooLongNamesWindow: false,
  failAtOnce: () => ({
    reply: {
      kind: 'sse',
      pieces: [
        responsesEvent({ type: 'response.created', sequence_number: 0, response: responsesBody('in_progress', [], { input: 0, output: 0 }) }),
        responsesEvent({ type: 'response.failed', sequence_number: 1, response: responsesBody('failed', [], { input: 0, output: 0 }, { error: { code: 'server_error', message: 'The server had an error.' } }) }),
      ],
    },
    status: 502,
  }),
  failMidStream: (text) => ({
    reply: {
      kind: 'sse',
      pieces: [
        responsesEvent({ type: 'response.created', sequence_number: 0, response: responsesBody('in_progress', [], { input: 0, output: 0 }) }),
        responsesEvent({ type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'msg_scripted', type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
        responsesEvent({ type: 'response.output_text.delta', sequence_number: 2, item_id: 'msg_scripted', output_index: 0, content_index: 0, delta: text, logprobs: [] }),
        responsesEvent({ type: 'error', sequence_number: 3, code: 'server_error', message: 'The server had an error.', param: null }),
      ],
    },
    code: 'server_error',
  }),
  // response.created, the message added, its first delta.
  piecesThroughFirstText: 3,
  tokenCount: { isCount: (request) => request.path.endsWith('/responses/input_tokens'), reply: (tokens) => ({ kind: 'json', body: { object: 'response.input_tokens', input_tokens: tokens } }) },
  reportsReasoningTokens: true,
};
