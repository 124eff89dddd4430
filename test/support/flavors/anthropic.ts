import { textPiecesOf, type ProviderFlavor, type Seen } from './flavor.ts';

const anthropicEvent = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Anthropic's error type for each HTTP status it answers with. */
const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 529: 'overloaded_error' };

export const anthropic: ProviderFlavor<'anthropic'> = {
  name: 'anthropic',
  model: 'claude-test',
  provider: 'anthropic',
  config: (upstream) => ({ providers: { anthropic: { type: 'anthropic', baseUrl: new URL(upstream).origin, apiKey: 'sk-ant-test', defaultMaxTokens: 1024 } }, defaultProvider: 'anthropic' }),
  runsWebSearch: false,
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
  finish: { tools: 'tool_use', done: 'end_turn' },
  answer: { model: 'claude-test', id: /^msg_test$/ },
  seen(request) {
    const seen: Seen[] = [];
    // A string, or text blocks (the gateway sends blocks to mark the prompt cache).
    const system = request.body.system;
    if (system) seen.push({ kind: 'system', text: typeof system === 'string' ? system : (system as any[]).map((block) => block.text).join('') });
    for (const message of request.body.messages as any[]) {
      for (const block of message.content as any[]) {
        if (block.type === 'text') seen.push({ kind: message.role === 'user' ? 'user' : 'assistant', text: block.text });
        else if (block.type === 'tool_use') seen.push({ kind: 'call', id: block.id, name: block.name, args: block.input });
        else if (block.type === 'tool_result') seen.push({ kind: 'result', id: block.tool_use_id, content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content) });
      }
    }
    return seen;
  },
  requestedModel: (request) => request.body.model,
  streamed: (request) => request.body.stream === true,
  offeredTools: (request) => ((request.body.tools ?? []) as any[]).map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.input_schema })),
  toolChoice(request) {
    const choice = request.body.tool_choice;
    if (choice === undefined) return null;
    if (choice.type === 'tool') return { mode: 'required', names: [choice.name] };
    return { mode: choice.type === 'any' ? 'required' : choice.type };
  },
  mentionsTools: (request) => request.body.tools !== undefined || request.body.tool_choice !== undefined,
  format(request) {
    const format = request.body.output_config?.format;
    return format === undefined ? null : { type: 'json_schema', schema: format.schema };
  },
  refusal: (status, message) => ({ kind: 'json', status, body: { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } } }),
  tooLong: (tokens, limit) => ({ kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${limit} maximum` } } }),
  tooLongNamesWindow: true,
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
  // message_start, the text block's start, its first delta.
  piecesThroughFirstText: 3,
  tokenCount: { isCount: (request) => request.path.endsWith('/messages/count_tokens'), reply: (tokens) => ({ kind: 'json', body: { input_tokens: tokens } }) },
  reportsReasoningTokens: false,
};
