import { chunk, sse, usageChunk, type RecordedRequest, type ScriptedChatUpstream, type UpstreamReply } from './scripted-chat-upstream.ts';

/** One model turn, said once, rendered in each upstream's own wire format. */
export interface ModelTurn {
  text?: string;
  /** The text streamed in these pieces instead (joined when the upstream call is not streamed). */
  textPieces?: string[];
  calls?: { id: string; name: string; args: Record<string, unknown> }[];
  /** The usage this turn reports (default 10 input, 5 output); `reasoning` only where the upstream reports it (`reportsReasoningTokens`). */
  usage?: TurnTokens;
}

/** A turn's tokens: `cached` is part of `input`, `reasoning` part of `output`. */
export interface TurnTokens {
  input: number;
  output: number;
  /** Default 0. */
  cached?: number;
  /** Default 0. */
  reasoning?: number;
}

/** What the model was shown, flattened the same way for every upstream. */
export type Seen =
  | { kind: 'system'; text: string }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'call'; id: string; name: string; args: unknown }
  | { kind: 'result'; id: string; content: string };

/** The upstream APIs the gateway speaks. */
export type FlavorName = 'openai-chat' | 'anthropic' | 'openai-responses' | 'gemini';

export interface ProviderFlavor<Name extends FlavorName = FlavorName> {
  name: Name;
  /** The model name clients use; it routes to this flavor. */
  model: string;
  /** Gateway configuration pointing this flavor's provider at the scripted upstream. */
  config(upstreamBaseUrl: string): Record<string, unknown>;
  render(request: RecordedRequest, turn: ModelTurn): UpstreamReply;
  seen(request: RecordedRequest): Seen[];
  /** The upstream refusing at once, before any content, and the HTTP status the client must get. */
  failAtOnce(): { reply: UpstreamReply; status: number };
  /** A streamed turn that sends `text`, then fails; `code` is the error code the gateway reports for that failure. */
  failMidStream(text: string): { reply: UpstreamReply; code: string };
  /** Whether this upstream reports reasoning tokens (Anthropic's Messages API does not). */
  reportsReasoningTokens: boolean;
}

export const openaiChat: ProviderFlavor<'openai-chat'> = {
  name: 'openai-chat',
  model: 'gpt-test',
  config: (upstream) => ({ providers: { openai: { type: 'openai-chat', baseUrl: upstream, apiKey: 'sk-test' } } }),
  render(request, turn) {
    const calls = (turn.calls ?? []).map((call, index) => ({ index, id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }));
    const finish = calls.length > 0 ? 'tool_calls' : 'stop';
    const pieces = textPiecesOf(turn);
    const usage = turn.usage
      ? { prompt_tokens: turn.usage.input, completion_tokens: turn.usage.output, prompt_tokens_details: { cached_tokens: turn.usage.cached ?? 0 }, completion_tokens_details: { reasoning_tokens: turn.usage.reasoning ?? 0 } }
      : { prompt_tokens: 10, completion_tokens: 5 };
    if (!request.body.stream) {
      const message = { role: 'assistant', content: turn.textPieces ? turn.textPieces.join('') : (turn.text ?? null), ...(calls.length > 0 && { tool_calls: calls.map(({ index: _index, ...call }) => call) }) };
      return { kind: 'json', body: { id: 'chatcmpl-scripted', model: 'upstream-model', choices: [{ index: 0, message, finish_reason: finish }], usage } };
    }
    return {
      kind: 'sse',
      pieces: sse([chunk({ role: 'assistant', content: '' }), ...pieces.map((piece) => chunk({ content: piece })), ...calls.map((call) => chunk({ tool_calls: [call] })), chunk({}, finish), turn.usage ? { ...usageChunk(0, 0), usage } : usageChunk(10, 5)]),
    };
  },
  seen(request) {
    const seen: Seen[] = [];
    for (const message of request.body.messages as any[]) {
      const text = typeof message.content === 'string' ? message.content : Array.isArray(message.content) ? message.content.map((part: any) => part.text ?? '').join('') : '';
      if (message.role === 'system' || message.role === 'developer') seen.push({ kind: 'system', text });
      else if (message.role === 'user') seen.push({ kind: 'user', text });
      else if (message.role === 'tool') seen.push({ kind: 'result', id: message.tool_call_id, content: message.content });
      else {
        if (text) seen.push({ kind: 'assistant', text });
        for (const call of message.tool_calls ?? []) seen.push({ kind: 'call', id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments || '{}') });
      }
    }
    return seen;
  },
  failAtOnce: () => ({ reply: { kind: 'json', status: 500, body: { error: { message: 'boom' } } }, status: 502 }),
  failMidStream: (text) => ({
    reply: { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), chunk({ content: text }), { error: { message: 'The server had an error.', type: 'server_error', param: null, code: 'server_error' } }], false) },
    code: 'server_error',
  }),
  reportsReasoningTokens: true,
};

const anthropicEvent = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

export const anthropic: ProviderFlavor<'anthropic'> = {
  name: 'anthropic',
  model: 'claude-test',
  config: (upstream) => ({ providers: { anthropic: { type: 'anthropic', baseUrl: new URL(upstream).origin, apiKey: 'sk-ant-test', defaultMaxTokens: 1024 } }, defaultProvider: 'anthropic' }),
  render(_request, turn) {
    const tokens = { input: 10, output: 5, cached: 0, reasoning: 0, ...turn.usage };
    const startUsage = { input_tokens: tokens.input - tokens.cached, ...(turn.usage && { cache_read_input_tokens: tokens.cached }), output_tokens: 1 };
    const pieces = [anthropicEvent('message_start', { type: 'message_start', message: { id: 'msg_test', type: 'message', role: 'assistant', content: [], model: 'claude-test', stop_reason: null, usage: startUsage } })];
    let index = 0;
    const text = textPiecesOf(turn);
    if (text.length > 0) {
      pieces.push(anthropicEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      for (const piece of text) pieces.push(anthropicEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }));
      pieces.push(anthropicEvent('content_block_stop', { type: 'content_block_stop', index }));
      index++;
    }
    for (const call of turn.calls ?? []) {
      pieces.push(anthropicEvent('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }));
      pieces.push(anthropicEvent('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } }));
      pieces.push(anthropicEvent('content_block_stop', { type: 'content_block_stop', index }));
      index++;
    }
    const stopReason = (turn.calls ?? []).length > 0 ? 'tool_use' : 'end_turn';
    pieces.push(anthropicEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: tokens.output } }));
    pieces.push(anthropicEvent('message_stop', { type: 'message_stop' }));
    return { kind: 'sse', pieces };
  },
  seen(request) {
    const seen: Seen[] = [];
    if (request.body.system) seen.push({ kind: 'system', text: request.body.system });
    for (const message of request.body.messages as any[]) {
      for (const block of message.content as any[]) {
        if (block.type === 'text') seen.push({ kind: message.role === 'user' ? 'user' : 'assistant', text: block.text });
        else if (block.type === 'tool_use') seen.push({ kind: 'call', id: block.id, name: block.name, args: block.input });
        else if (block.type === 'tool_result') seen.push({ kind: 'result', id: block.tool_use_id, content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content) });
      }
    }
    return seen;
  },
  failAtOnce: () => ({ reply: { kind: 'sse', pieces: [anthropicEvent('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })] }, status: 503 }),
  failMidStream: (text) => ({
    reply: {
      kind: 'sse',
      pieces: [
        anthropicEvent('message_start', { type: 'message_start', message: { id: 'msg_test', type: 'message', role: 'assistant', content: [], model: 'claude-test', stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
        anthropicEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
        anthropicEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
        anthropicEvent('error', { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
      ],
    },
    code: 'upstream_error',
  }),
  reportsReasoningTokens: false,
};

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
  config: (upstream) => ({ providers: { responses: { type: 'openai-responses', baseUrl: upstream, apiKey: 'sk-test' } }, defaultProvider: 'responses' }),
  render(request, turn) {
    const tokens = turn.usage ?? { input: 10, output: 5 };
    const pieces = textPiecesOf(turn);
    const message = pieces.length > 0 ? { id: 'msg_scripted', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: pieces.join(''), annotations: [] }] } : null;
    const calls = (turn.calls ?? []).map((call, index) => ({ id: `fc_scripted_${index}`, type: 'function_call', status: 'completed', call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) }));
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
      frames.push(event({ type: 'response.output_item.added', output_index: outputIndex, item: { ...call, status: 'in_progress', arguments: '' } }));
      frames.push(event({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index: outputIndex, delta: call.arguments }));
      frames.push(event({ type: 'response.output_item.done', output_index: outputIndex, item: call }));
    });
    frames.push(event({ type: 'response.completed', response: responsesBody('completed', output, tokens) }));
    return { kind: 'sse', pieces: frames };
  },
  seen(request) {
    const seen: Seen[] = [];
    if (request.body.instructions) seen.push({ kind: 'system', text: request.body.instructions });
    for (const item of request.body.input as any[]) {
      if (item.type === 'function_call') seen.push({ kind: 'call', id: item.call_id, name: item.name, args: JSON.parse(item.arguments || '{}') });
      else if (item.type === 'function_call_output') seen.push({ kind: 'result', id: item.call_id, content: typeof item.output === 'string' ? item.output : item.output.map((part: any) => part.text ?? '').join('') });
      else if (item.type === 'message') {
        const text = typeof item.content === 'string' ? item.content : item.content.map((part: any) => part.text ?? part.refusal ?? '').join('');
        seen.push({ kind: item.role === 'system' || item.role === 'developer' ? 'system' : item.role === 'user' ? 'user' : 'assistant', text });
      }
    }
    return seen;
  },
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
  reportsReasoningTokens: true,
};

export const flavors: ProviderFlavor<'openai-chat' | 'anthropic'>[] = [openaiChat, anthropic];


const geminiChunk = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/** Gemini's native API: the model is in the path, `:streamGenerateContent?alt=sse` when streamed, each function call whole in one part. */
export const gemini: ProviderFlavor<'gemini'> = {
  name: 'gemini',
  model: 'gemini-test',
  config: (upstream) => ({ providers: { gemini: { type: 'gemini', baseUrl: new URL(upstream).origin, apiKey: 'AIza-test' } }, defaultProvider: 'gemini' }),
  render(request, turn) {
    const tokens = { input: 10, output: 5, cached: 0, reasoning: 0, ...turn.usage };
    const usageMetadata = { promptTokenCount: tokens.input, candidatesTokenCount: tokens.output - tokens.reasoning, totalTokenCount: tokens.input + tokens.output, cachedContentTokenCount: tokens.cached, thoughtsTokenCount: tokens.reasoning };
    const callParts = (turn.calls ?? []).map((call) => ({ functionCall: { id: call.id, name: call.name, args: call.args } }));
    const candidate = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason && { finishReason }), index: 0 }], modelVersion: 'gemini-test-001' });
    if (!request.path.includes(':streamGenerateContent')) {
      const text = textPiecesOf(turn).join('');
      return { kind: 'json', body: { ...candidate([...(text ? [{ text }] : []), ...callParts], 'STOP'), usageMetadata } };
    }
    const pieces = textPiecesOf(turn).map((piece) => geminiChunk(candidate([{ text: piece }])));
    pieces.push(geminiChunk({ ...candidate(callParts, 'STOP'), usageMetadata }));
    return { kind: 'sse', pieces };
  },
  seen(request) {
    const seen: Seen[] = [];
    const system = request.body.systemInstruction?.parts.map((part: any) => part.text).join('');
    if (system) seen.push({ kind: 'system', text: system });
    for (const content of request.body.contents as any[]) {
      for (const part of content.parts as any[]) {
        if (part.thought) continue;
        if (part.text !== undefined) seen.push({ kind: content.role === 'user' ? 'user' : 'assistant', text: part.text });
        else if (part.functionCall) seen.push({ kind: 'call', id: part.functionCall.id, name: part.functionCall.name, args: part.functionCall.args });
        else if (part.functionResponse) seen.push({ kind: 'result', id: part.functionResponse.id, content: part.functionResponse.response.output });
      }
    }
    return seen;
  },
  failAtOnce: () => ({ reply: { kind: 'json', status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } }, status: 502 }),
  failMidStream: (text) => ({
    reply: { kind: 'sse', pieces: [geminiChunk({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }] }), geminiChunk({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } })] },
    code: 'internal',
  }),
  reportsReasoningTokens: true,
};

/** Every flavor, Gemini included; the suites on `flavors` have not been run against Gemini yet. */
/**
 * Every upstream API. Only the parity suite runs over all four so far; the
 * other suites taking `flavors` read the first two upstreams' wire formats
 * in their own helpers and have not been extended to the newer two.
 */
export const parityFlavors: ProviderFlavor[] = [...flavors, openaiResponses, gemini];

function usageOf(turn: ModelTurn): { input: number; output: number } {
  return turn.usage ?? { input: 10, output: 5 };
}

function textPiecesOf(turn: ModelTurn): string[] {
  return turn.textPieces ?? (turn.text ? [turn.text] : []);
}

/** Scripts `upstream` to answer each call in `flavor`'s wire format, from the tool results the model has seen so far. */
export function scriptModel(upstream: ScriptedChatUpstream, flavor: ProviderFlavor, turn: (request: RecordedRequest, results: string[]) => ModelTurn): void {
  upstream.setScript((request) => flavor.render(request, turn(request, flavor.seen(request).flatMap((seen) => (seen.kind === 'result' ? [seen.content] : [])))));
}
