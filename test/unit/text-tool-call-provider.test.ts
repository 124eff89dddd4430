import { describe, expect, it } from 'vitest';
import type { FunctionToolParam } from '../../src/protocol/create-response-request.ts';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { ModelRouter } from '../../src/providers/model-router.ts';
import type { Provider, TurnEvent, TurnRequest } from '../../src/providers/provider.ts';
import { TextToolCallProvider } from '../../src/providers/text-tool-calls/text-tool-call-provider.ts';
import { ScriptedProvider, usage, type ScriptedTurn } from '../support/scripted-provider.ts';
import { turnRequest } from '../support/turn-request.ts';

const weather: FunctionToolParam = { type: 'function', name: 'get_weather', description: 'Current weather in a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const echo: FunctionToolParam = { type: 'function', name: 'echo', description: 'Says it back.', parameters: null };

/** A text-only model turn, streamed in the given pieces. */
function says(...pieces: string[]): ScriptedTurn {
  return { events: [...pieces.map((delta): TurnEvent => ({ type: 'text.delta', delta })), { type: 'usage', usage: usage(10, 5) }, { type: 'finish', finish: { reason: 'stop', raw: 'stop' } }] };
}

async function collect(provider: Provider, request: TurnRequest): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of await provider.startTurn(request, new AbortController().signal)) events.push(event);
  return events;
}

const textOf = (events: TurnEvent[]) => events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : [])).join('');
const callsOf = (events: TurnEvent[]) =>
  events.flatMap((event) => (event.type === 'tool_call.start' ? [{ name: event.name, terminal: event.terminal === true, arguments: events.filter((other) => other.type === 'tool_call.delta' && other.callId === event.callId).map((other) => (other as { delta: string }).delta).join('') }] : []));

describe('TextToolCallProvider', () => {
  it('sends no tools and no tool items upstream: the tools are described in the instructions, calls and results written as text', async () => {
    const inner = new ScriptedProvider(() => says('It is sunny.'));
    const provider = new TextToolCallProvider(inner, { retries: 2 });
    await collect(provider, turnRequest({
      instructions: 'Be brief.',
      tools: [weather, echo],
      toolChoice: 'auto',
      parallelToolCalls: true,
      historyLength: 3,
      items: [
        { type: 'message', role: 'user', content: 'Weather in Paris?' },
        { type: 'message', role: 'assistant', content: 'Let me look.' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp": 14}' },
        { type: 'message', role: 'user', content: 'And so?' },
      ],
    }));
    const sent = inner.requests[0]!;
    expect(sent).toMatchObject({ tools: [], toolChoice: null, parallelToolCalls: null });
    expect(sent.instructions).toMatch(/^Be brief\.\n\n# Tools\n/);
    expect(sent.instructions).toContain('{"tool": "<tool name>", "parameters": {');
    expect(sent.instructions).toContain('## get_weather\nCurrent weather in a city.\nParameters: {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}');
    expect(sent.instructions).toContain('## echo\nSays it back.\nParameters: {"type":"object","properties":{}}');
    // The prose and the call are one assistant turn; the result and the user's next words one user turn.
    expect(sent.items).toEqual([
      { type: 'message', role: 'user', content: 'Weather in Paris?' },
      { type: 'message', role: 'assistant', content: 'Let me look.\n\n{"tool":"get_weather","parameters":{"city":"Paris"}}' },
      { type: 'message', role: 'user', content: 'Result of tool call call_1 (get_weather):\n{"temp": 14}\n\nAnd so?' },
    ]);
    expect(sent.historyLength).toBe(2);
  });

  it('a call in the text becomes a native call: a call_ id, the parameters as arguments, finish tool_calls; the prose before it streams', async () => {
    const inner = new ScriptedProvider(() => says('Let me check.\n', '```json\n{"tool": "get_weather", ', '"parameters": {"city": "Oslo"}}\n```\n'));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather] }));
    expect(textOf(events)).toBe('Let me check.');
    expect(callsOf(events)).toEqual([{ name: 'get_weather', terminal: false, arguments: '{"city":"Oslo"}' }]);
    const start = events.find((event) => event.type === 'tool_call.start') as { callId: string };
    expect(start.callId).toMatch(/^call_[0-9a-f]{32}$/);
    expect(events.at(-1)).toEqual({ type: 'finish', finish: { reason: 'tool_calls', raw: 'stop' } });
    expect(events.filter((event) => event.type === 'usage')).toHaveLength(1);
  });

  it('terminate: true marks the call terminal', async () => {
    const inner = new ScriptedProvider(() => says('{"tool": "echo", "parameters": {"text": "bye"}, "terminate": true}'));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [echo] }));
    expect(callsOf(events)).toEqual([{ name: 'echo', terminal: true, arguments: '{"text":"bye"}' }]);
    expect(events.find((event) => event.type === 'tool_call.start')).toHaveProperty('terminal', true);
  });

  it('a broken call is sent back with the problem, and the retry\'s call is taken; every attempt\'s usage is passed on', async () => {
    const inner = new ScriptedProvider((turn) => (turn === 1 ? says('Checking.\n{"tool": "get_weather", "parameters": {"city": "Oslo"},}') : says('{"tool": "get_weather", "parameters": {"city": "Oslo"}}')));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather] }));
    expect(inner.requests).toHaveLength(2);
    expect(inner.requests[1]!.items.slice(-2)).toEqual([
      { type: 'message', role: 'assistant', content: 'Checking.\n{"tool": "get_weather", "parameters": {"city": "Oslo"},}' },
      { type: 'message', role: 'user', content: expect.stringMatching(/^Your last reply could not be used: the tool call is not valid JSON \(.+\)\.\nWrite the call again/) },
    ]);
    expect(textOf(events)).toBe('Checking.');
    expect(callsOf(events)).toEqual([{ name: 'get_weather', terminal: false, arguments: '{"city":"Oslo"}' }]);
    expect(events.filter((event) => event.type === 'usage')).toHaveLength(2);
  });

  it('a good call beside a broken one is not made either: the feedback asks for every call of the reply again', async () => {
    const good = '{"tool": "get_weather", "parameters": {"city": "Oslo"}}';
    const inner = new ScriptedProvider((turn) => (turn === 1 ? says(`${good}\n{"tool": "get_weather", "parameters": {"city": "Rome"`) : says(`${good}\n{"tool": "get_weather", "parameters": {"city": "Rome"}}`)));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather] }));
    expect(inner.requests[1]!.items.at(-1)).toMatchObject({ content: expect.stringContaining('None of its calls was made, not even the one that could be read: write every call of that reply again') });
    expect(callsOf(events).map((call) => call.arguments)).toEqual(['{"city":"Oslo"}', '{"city":"Rome"}']);
  });

  it('a JSON answer (text.format json_schema or json_object): the model is told to write only calls in a calling reply, and prose it writes beside calls is its reasoning, never a message', async () => {
    const format = { type: 'json_schema', name: 'w', schema: { type: 'object', properties: { temp: { type: 'number' } } } } as TurnRequest['textFormat'];
    const inner = new ScriptedProvider((turn) => (turn === 1 ? says('Let me check the weather.\n{"tool": "get_weather", "parameters": {"city": "Oslo"}}') : says('{"temp": 21}')));
    const calling = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather], textFormat: format }));
    expect(inner.requests[0]!.instructions).toContain('Write nothing but the calls in a reply that calls tools');
    expect(textOf(calling)).toBe('');
    expect(calling.filter((event) => event.type === 'reasoning.delta').map((event: any) => event.delta).join('')).toBe('Let me check the weather.');
    expect(callsOf(calling)).toHaveLength(1);
    // The answer itself is text, as it comes.
    const answering = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather], textFormat: format }));
    expect(textOf(answering)).toBe('{"temp": 21}');
  });

  it('still broken after every retry: the turn ends with an invalid_tool_call error, and nothing of the broken call is shown', async () => {
    const inner = new ScriptedProvider(() => says('{"tool": "fly", "parameters": {}}'));
    const events = await collect(new TextToolCallProvider(inner, { retries: 1 }), turnRequest({ tools: [weather, echo] }));
    expect(inner.requests).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'error', code: 'invalid_tool_call', message: 'The model\'s tool call could not be read (2 attempts): there is no tool named "fly"; the tools are: get_weather, echo.' });
    expect(textOf(events)).toBe('');
    expect(events.some((event) => event.type === 'finish')).toBe(false);
  });

  it('a retry\'s prose is set apart from what the first attempt already showed', async () => {
    const inner = new ScriptedProvider((turn) => (turn === 1 ? says('Let me see.\n{"tool": "echo"}') : says('I can answer directly: hi.')));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [echo] }));
    expect(textOf(events)).toBe('Let me see.\n\nI can answer directly: hi.');
    expect(events.at(-1)).toEqual({ type: 'finish', finish: { reason: 'stop', raw: 'stop' } });
  });

  it('tool_choice: required (or a named function) retries a reply without a call; a named function is the only tool described', async () => {
    const inner = new ScriptedProvider((turn) => (turn === 1 ? says('Paris is nice.') : says('{"tool": "get_weather", "parameters": {"city": "Paris"}}')));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather, echo], toolChoice: { type: 'function', name: 'get_weather' } }));
    expect(inner.requests[0]!.instructions).toContain('You must call the tool "get_weather" in this reply.');
    expect(inner.requests[0]!.instructions).not.toContain('## echo');
    expect(inner.requests[1]!.items.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('it does not call the tool "get_weather", and this reply must.') });
    expect(callsOf(events)).toEqual([{ name: 'get_weather', terminal: false, arguments: '{"city":"Paris"}' }]);

    const required = new ScriptedProvider(() => says('No.'));
    const failed = await collect(new TextToolCallProvider(required, { retries: 0 }), turnRequest({ tools: [weather], toolChoice: 'required' }));
    expect(required.requests[0]!.instructions).toContain('You must call a tool in this reply.');
    expect(failed.at(-1)).toMatchObject({ type: 'error', code: 'invalid_tool_call', message: expect.stringContaining('it calls no tool, and this reply must.') });
  });

  it('tool_choice: none describes no tool and says not to call; a call written anyway is sent back, never shown as the answer', async () => {
    const inner = new ScriptedProvider((turn) => (turn === 1 ? says('Let me check.\n{"tool": "echo", "parameters": {}}') : says('It is sunny.')));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [echo], toolChoice: 'none' }));
    expect(inner.requests[0]!.instructions).toBe('Do not call any tool in this reply: answer in plain text, without tool call JSON.');
    expect(inner.requests[1]!.items.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/^Your last reply could not be used: it calls a tool, and no tool may be called in this reply\. Answer in plain text/) });
    expect(textOf(events)).toBe('Let me check.\n\nIt is sunny.');
    expect(callsOf(events)).toEqual([]);
    expect(events.at(-1)).toEqual({ type: 'finish', finish: { reason: 'stop', raw: 'stop' } });
    // Still calling after every retry: the response fails saying so, with no call JSON shown; prose with JSON of its own passes.
    const stubborn = await collect(new TextToolCallProvider(new ScriptedProvider(() => says('{"tool": "echo", "parameters": {}}')), { retries: 1 }), turnRequest({ tools: [echo], toolChoice: 'none' }));
    expect(stubborn.at(-1)).toMatchObject({ type: 'error', code: 'invalid_tool_call', message: expect.stringContaining('no tool may be called in this reply') });
    expect(textOf(stubborn)).toBe('');
    const prose = await collect(new TextToolCallProvider(new ScriptedProvider(() => says('Use {"city": "Oslo"} as the body.')), { retries: 1 }), turnRequest({ tools: [echo], toolChoice: 'none' }));
    expect(textOf(prose)).toBe('Use {"city": "Oslo"} as the body.');
  });

  it('allowed_tools describes only the allowed tools; parallel_tool_calls: false asks for one call per reply', async () => {
    const inner = new ScriptedProvider(() => says('ok'));
    await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [weather, echo], toolChoice: { type: 'allowed_tools', tools: [{ type: 'function', name: 'echo' }] }, parallelToolCalls: false }));
    expect(inner.requests[0]!.instructions).toContain('## echo');
    expect(inner.requests[0]!.instructions).not.toContain('## get_weather');
    expect(inner.requests[0]!.instructions).toContain('Call at most one tool per reply.');
  });

  it('a reply cut short (length) is not retried: what was held is shown, and the finish stays', async () => {
    const inner = new ScriptedProvider(() => ({ events: [{ type: 'text.delta', delta: 'Sure.\n{"tool": "echo", "parameters": {"te' }, { type: 'finish', finish: { reason: 'length', raw: 'length' } }] }));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest({ tools: [echo] }));
    expect(inner.requests).toHaveLength(1);
    expect(textOf(events)).toBe('Sure.\n{"tool": "echo", "parameters": {"te');
    expect(events.at(-1)).toEqual({ type: 'finish', finish: { reason: 'length', raw: 'length' } });
  });

  it('without tools the upstream\'s events pass through unchanged', async () => {
    const inner = new ScriptedProvider(() => says('  {"tool": "x", "parameters": {}}'));
    const events = await collect(new TextToolCallProvider(inner, { retries: 2 }), turnRequest());
    expect(textOf(events)).toBe('  {"tool": "x", "parameters": {}}');
    expect(inner.requests[0]!.instructions).toBeNull();
  });

  it('counts input tokens on the request as it would be sent', async () => {
    const counted: TurnRequest[] = [];
    const inner: Provider = { name: 'counting', startTurn: async () => [], listModels: async () => [], close: async () => {}, countInputTokens: async (request) => (counted.push(request), 42) };
    const provider = new TextToolCallProvider(inner, { retries: 2 });
    expect(await provider.countInputTokens!(turnRequest({ tools: [echo] }), new AbortController().signal)).toBe(42);
    expect(counted[0]).toMatchObject({ tools: [], instructions: expect.stringContaining('## echo') });
    expect(new TextToolCallProvider(new ScriptedProvider(() => says('')), { retries: 2 }).countInputTokens).toBeUndefined();
  });
});

describe('ModelRouter: toolCalls per model and per provider', () => {
  // Both models keep writing a call to a tool nobody offers.
  const broken = () => says('{"tool": "nope", "parameters": {}}');
  const providers = new Map([
    ['local', new ScriptedProvider(broken)],
    ['openai', new ScriptedProvider(broken)],
  ]);
  const router = new ModelRouter(
    providers,
    { gemma: { provider: 'openai', toolCalls: 'text', textToolCallRetries: 0 }, smart: { provider: 'local', toolCalls: 'native' }, other: { provider: 'local' } },
    'openai',
    null,
    { local: { toolCalls: 'text', textToolCallRetries: 3 }, openai: { toolCalls: 'native' } },
  );

  it('a model set to "text" is served through the text protocol; "native" and unset follow the model, then the provider', () => {
    expect(router.resolve('gemma').provider).toBeInstanceOf(TextToolCallProvider);
    expect(router.resolve('gemma').provider.name).toBe(providers.get('openai')!.name);
    expect(router.resolve('gpt-4.1').provider).toBe(providers.get('openai'));
    expect(router.resolve('smart').provider).toBe(providers.get('local'));
    expect(router.resolve('other').provider).toBeInstanceOf(TextToolCallProvider);
    expect(router.resolve('other').provider).toBe(router.resolve('other').provider);
  });

  it('textToolCallRetries: the model\'s own, else its provider\'s', async () => {
    await collect(router.resolve('gemma').provider, turnRequest({ tools: [echo] }));
    expect(providers.get('openai')!.requests).toHaveLength(1);
    await collect(router.resolve('other').provider, turnRequest({ tools: [echo] }));
    expect(providers.get('local')!.requests).toHaveLength(4);
  });

  it('configuration: providers default to native with 2 retries; models may set either; other values are refused', () => {
    const parse = (raw: Record<string, unknown>) => GatewayConfig.safeParse({ providers: { openai: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1', ...raw } }, models: { gemma: { provider: 'openai', toolCalls: 'text', textToolCallRetries: 0 } } });
    const parsed = parse({});
    expect(parsed.success && parsed.data.providers.openai).toMatchObject({ toolCalls: 'native', textToolCallRetries: 2 });
    expect(parsed.success && parsed.data.models.gemma).toMatchObject({ toolCalls: 'text', textToolCallRetries: 0 });
    expect(parse({ toolCalls: 'txt' }).success).toBe(false);
    expect(parse({ textToolCallRetries: 11 }).success).toBe(false);
  });
});
