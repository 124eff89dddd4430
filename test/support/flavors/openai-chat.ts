import { chunk, sse, usageChunk } from '../scripted-chat-upstream.ts';
import { openaiRefusal, textOfContent, textPiecesOf, type ProviderFlavor, type Seen, type ToolChoiceSeen } from './flavor.ts';

export const openaiChat: ProviderFlavor<'openai-chat'> = {
  name: 'openai-chat',
  model: 'gpt-test',
  provider: 'openai',
  config: (upstream) => ({ providers: { openai: { type: 'openai-chat', baseUrl: upstream, apiKey: 'sk-test' } } }),
  runsWebSearch: false,
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
  finish: { tools: 'tool_calls', done: 'stop' },
  answer: { model: 'upstream-model', id: /^chatcmpl-scripted/ },
  seen(request) {
    const seen: Seen[] = [];
    for (const message of request.body.messages as any[]) {
      const text = textOfContent(message.content);
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
  requestedModel: (request) => request.body.model,
  streamed: (request) => request.body.stream === true,
  offeredTools: (request) => ((request.body.tools ?? []) as any[]).map((tool) => ({ name: tool.function.name, description: tool.function.description, parameters: tool.function.parameters })),
  toolChoice(request) {
    const choice = request.body.tool_choice;
    if (choice === undefined || choice === null) return null;
    if (typeof choice === 'string') return { mode: choice } as ToolChoiceSeen;
    if (choice.type === 'function') return { mode: 'required', names: [choice.function.name] };
    return { mode: choice.allowed_tools.mode, names: choice.allowed_tools.tools.map((tool: any) => tool.function.name) };
  },
  mentionsTools: (request) => request.body.tools !== undefined || request.body.tool_choice !== undefined || request.body.parallel_tool_calls !== undefined,
  format(request) {
    const format = request.body.response_format;
    if (format === undefined) return null;
    return format.type === 'json_schema' ? { type: 'json_schema', schema: format.json_schema.schema } : { type: 'json_object' };
  },
  refusal: (status, message) => openaiRefusal(status, message),
  tooLong: (tokens, limit) =>
    openaiRefusal(400, `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`, 'context_length_exceeded', 'messages'),
  tooLongNamesWindow: true,
  failAtOnce: () => ({ reply: { kind: 'json', status: 500, body: { error: { message: 'boom' } } }, status: 502 }),
  failMidStream: (text) => ({
    reply: { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), chunk({ content: text }), { error: { message: 'The server had an error.', type: 'server_error', param: null, code: 'server_error' } }], false) },
    code: 'server_error',
  }),
  // The role chunk, then the text.
  piecesThroughFirstText: 2,
  tokenCount: null,
  reportsReasoningTokens: true,
};
