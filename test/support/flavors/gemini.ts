import { textPiecesOf, type JsonReply, type ProviderFlavor, type Seen } from './flavor.ts';

const geminiChunk = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;

/** Google's status word for each HTTP status its APIs answer with. */
const STATUS_WORDS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

function googleError(status: number, message: string): JsonReply {
  return { kind: 'json', status, body: { error: { code: status, message, status: STATUS_WORDS[status] ?? 'UNKNOWN' } } };
}

/** The model, from the path: `/v1beta/models/<model>:generateContent`. */
const modelInPath = (path: string) => decodeURIComponent(/\/models\/([^:/?]+)/.exec(path)?.[1] ?? '');

/** Gemini's native API: the model is in the path, `:streamGenerateContent?alt=sse` when streamed, each function call whole in one part. */
export const gemini: ProviderFlavor<'gemini'> = {
  name: 'gemini',
  model: 'gemini-test',
  provider: 'gemini',
  config: (upstream) => ({ providers: { gemini: { type: 'gemini', baseUrl: new URL(upstream).origin, apiKey: 'AIza-test' } }, defaultProvider: 'gemini' }),
  runsWebSearch: false,
  render(request, turn) {
    const tokens = { input: 10, output: 5, cached: 0, reasoning: 0, ...turn.usage };
    const usageMetadata = { promptTokenCount: tokens.input, candidatesTokenCount: tokens.output - tokens.reasoning, totalTokenCount: tokens.input + tokens.output, cachedContentTokenCount: tokens.cached, thoughtsTokenCount: tokens.reasoning };
    const callParts = (turn.calls ?? []).map((call) => ({ functionCall: { id: call.id, name: call.name, args: call.args } }));
    const candidate = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason && { finishReason }), index: 0 }], modelVersion: 'gemini-test-001', responseId: 'gemini-scripted' });
    if (!request.path.includes(':streamGenerateContent')) {
      const text = textPiecesOf(turn).join('');
      return { kind: 'json', body: { ...candidate([...(text ? [{ text }] : []), ...callParts], 'STOP'), usageMetadata } };
    }
    const pieces = textPiecesOf(turn).map((piece) => geminiChunk(candidate([{ text: piece }])));
    pieces.push(geminiChunk({ ...candidate(callParts, 'STOP'), usageMetadata }));
    return { kind: 'sse', pieces };
  },
  // Gemini says STOP whether or not the model called functions.
  finish: { tools: 'STOP', done: 'STOP' },
  answer: { model: 'gemini-test-001', id: /^gemini-scripted$/ },
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
  requestedModel: (request) => modelInPath(request.path),
  streamed: (request) => request.path.includes(':streamGenerateContent'),
  offeredTools: (request) => ((request.body.tools ?? []) as any[]).flatMap((tool) => tool.functionDeclarations ?? []).map((declaration: any) => ({ name: declaration.name, description: declaration.description, parameters: declaration.parametersJsonSchema ?? declaration.parameters })),
  toolChoice(request) {
    const config = request.body.toolConfig?.functionCallingConfig;
    if (config === undefined) return null;
    const mode = config.mode === 'ANY' ? 'required' : config.mode === 'NONE' ? 'none' : 'auto';
    return { mode, ...(config.allowedFunctionNames && { names: config.allowedFunctionNames }) };
  },
  mentionsTools: (request) => request.body.tools !== undefined || request.body.toolConfig !== undefined,
  format(request) {
    const generation = request.body.generationConfig;
    if (generation?.responseMimeType !== 'application/json') return null;
    const schema = generation.responseJsonSchema ?? generation.responseSchema;
    return schema === undefined ? { type: 'json_object' } : { type: 'json_schema', schema };
  },
  refusal: googleError,
  // As the Gemini API words it (recorded from real refusals).
  tooLong: (tokens, limit) => googleError(400, `The input token count (${tokens}) exceeds the maximum number of tokens allowed (${limit}).`),
  tooLongNamesWindow: true,
  failAtOnce: () => ({ reply: googleError(503, 'The model is overloaded. Please try again later.'), status: 503 }),
  failMidStream: (text) => ({
    reply: { kind: 'sse', pieces: [geminiChunk({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }] }), geminiChunk({ error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } })] },
    code: 'internal',
  }),
  // The first chunk carries the first text.
  piecesThroughFirstText: 1,
  tokenCount: { isCount: (request) => request.path.endsWith(':countTokens'), reply: (tokens) => ({ kind: 'json', body: { totalTokens: tokens } }) },
  reportsReasoningTokens: true,
};
