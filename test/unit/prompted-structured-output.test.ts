import { describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import type { FunctionToolParam, TextFormatParam } from '../../src/protocol/create-response-request.ts';
import { ModelRouter } from '../../src/providers/model-router.ts';
import { PromptedStructuredOutputProvider } from '../../src/providers/prompted-structured-output.ts';
import type { Provider, TurnEvent, TurnRequest } from '../../src/providers/provider.ts';
import { TextToolCallProvider } from '../../src/providers/text-tool-calls/text-tool-call-provider.ts';
import { ScriptedProvider, text } from '../support/scripted-provider.ts';
import { turnRequest } from '../support/turn-request.ts';

const schema = { type: 'object', properties: { city: { type: 'string' }, temp: { type: 'number' } }, required: ['city', 'temp'], additionalProperties: false };
const weatherFormat: TextFormatParam = { type: 'json_schema', name: 'weather', description: 'The weather in one city.', schema, strict: true };
const weatherTool: FunctionToolParam = { type: 'function', name: 'get_weather', description: 'Current weather in a city.', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

async function collect(provider: Provider, request: TurnRequest): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const event of await provider.startTurn(request, new AbortController().signal)) events.push(event);
  return events;
}

const textOf = (events: TurnEvent[]) => events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : [])).join('');

describe('PromptedStructuredOutputProvider', () => {
  it('sends no text.format: the instructions are kept and the schema, its name and description follow them', async () => {
    const inner = new ScriptedProvider(() => text('{"city":"Oslo","temp":3}'));
    const request = turnRequest({ instructions: 'Be brief.', textFormat: weatherFormat, temperature: 0.2 });
    const events = await collect(new PromptedStructuredOutputProvider(inner), request);
    expect(textOf(events)).toBe('{"city":"Oslo","temp":3}');
    const sent = inner.requests[0]!;
    expect(sent).toEqual({ ...request, textFormat: null, instructions: sent.instructions });
    expect(sent.instructions).toBe(
      [
        'Be brief.',
        '',
        '# Answer format',
        '',
        'Answer with only a JSON value that matches the JSON schema below. Write nothing else: no text before or after it, no explanation, no Markdown, no ``` code fence.',
        'This is the format of your final answer only; a tool call, if you make one, keeps its own format.',
        '',
        'Schema name: weather',
        'Description: The weather in one city.',
        `JSON schema: ${JSON.stringify(schema)}`,
      ].join('\n'),
    );
    // The caller's request is not changed: the engine still validates against its format.
    expect(request.textFormat).toBe(weatherFormat);
    expect(request.instructions).toBe('Be brief.');
  });

  it('without instructions the format stands alone; json_object (or json_schema without a schema) asks for one JSON object', async () => {
    const inner = new ScriptedProvider(() => text('{}'));
    const provider = new PromptedStructuredOutputProvider(inner);
    await collect(provider, turnRequest({ textFormat: { type: 'json_object' } }));
    await collect(provider, turnRequest({ textFormat: { type: 'json_schema', name: 'loose' } }));
    for (const sent of inner.requests) {
      expect(sent.textFormat).toBeNull();
      expect(sent.instructions).toMatch(/^# Answer format\n\nAnswer with only one JSON object\. Write nothing else: .*no ``` code fence\.\nThis is the format of your final answer only;/);
      expect(sent.instructions).not.toContain('JSON schema:');
    }
  });

  it('passes a request without a format (or with text) through untouched', async () => {
    const inner = new ScriptedProvider(() => text('Hello.'));
    const provider = new PromptedStructuredOutputProvider(inner);
    const plain = turnRequest({ instructions: 'Be brief.' });
    const textFormat = turnRequest({ instructions: null, textFormat: { type: 'text' } });
    expect(textOf(await collect(provider, plain))).toBe('Hello.');
    await collect(provider, textFormat);
    expect(inner.requests).toEqual([plain, textFormat]);
  });

  it('counts input tokens on the request as it would be sent, and only when the inner provider can count', async () => {
    const counted: TurnRequest[] = [];
    const inner: Provider = { name: 'counting', startTurn: async () => [], listModels: async () => [], close: async () => {}, countInputTokens: async (request) => (counted.push(request), 42) };
    expect(await new PromptedStructuredOutputProvider(inner).countInputTokens!(turnRequest({ textFormat: weatherFormat }), new AbortController().signal)).toBe(42);
    expect(counted[0]).toMatchObject({ textFormat: null, instructions: expect.stringContaining('Schema name: weather') });
    expect(new PromptedStructuredOutputProvider(new ScriptedProvider(() => text(''))).countInputTokens).toBeUndefined();
  });
});

describe('ModelRouter: structuredOutput per model and per provider, with toolCalls', () => {
  const providers = new Map([
    ['local', new ScriptedProvider(() => text('{"city":"Oslo","temp":3}'))],
    ['openai', new ScriptedProvider(() => text('{"city":"Oslo","temp":3}'))],
  ]);
  const router = new ModelRouter(
    providers,
    {
      small: { provider: 'openai', structuredOutput: 'prompt' },
      both: { provider: 'openai', structuredOutput: 'prompt', toolCalls: 'text' },
      smart: { provider: 'local', structuredOutput: 'native' },
      other: { provider: 'local' },
    },
    'openai',
    null,
    { local: { structuredOutput: 'prompt' }, openai: { structuredOutput: 'native' } },
  );

  it('"prompt" puts the decorator in front; "native" and unset follow the model, then the provider', () => {
    expect(router.resolve('small').provider).toBeInstanceOf(PromptedStructuredOutputProvider);
    expect(router.resolve('small').provider.name).toBe('scripted');
    expect(router.resolve('gpt-4.1').provider).toBe(providers.get('openai'));
    expect(router.resolve('smart').provider).toBe(providers.get('local'));
    expect(router.resolve('other').provider).toBeInstanceOf(PromptedStructuredOutputProvider);
    expect(router.resolve('other').provider).toBe(router.resolve('other').provider);
  });

  it('with toolCalls: "text" too, the upstream gets neither tools nor format, the answer format last; a JSON answer is an answer, not a call', async () => {
    const front = router.resolve('both').provider;
    expect(front).toBeInstanceOf(TextToolCallProvider);
    const openai = providers.get('openai')!;
    openai.requests.length = 0;
    const events = await collect(front, turnRequest({ instructions: 'Be brief.', tools: [weatherTool], toolChoice: 'auto', textFormat: weatherFormat }));
    expect(textOf(events)).toBe('{"city":"Oslo","temp":3}');
    expect(events.some((event) => event.type === 'tool_call.start')).toBe(false);
    const sent = openai.requests[0]!;
    expect(sent).toMatchObject({ tools: [], toolChoice: null, textFormat: null });
    const sections = ['Be brief.', '# Tools', '## get_weather', '# Answer format', 'JSON schema: '].map((part) => sent.instructions!.indexOf(part));
    expect(sections.every((at) => at >= 0)).toBe(true);
    expect(sections).toEqual([...sections].sort((a, b) => a - b));
  });

  it('with toolCalls: "text", a call is still read from the text and the format is asked for on every attempt', async () => {
    let call = 0;
    const upstream = new ScriptedProvider(() => text(++call === 1 ? '{"tool": "get_weather", "parameters": []}' : '{"tool": "get_weather", "parameters": {"city": "Oslo"}}'));
    const both = new ModelRouter(new Map([['local', upstream]]), {}, 'local', null, { local: { toolCalls: 'text', structuredOutput: 'prompt' } }).resolve('m').provider;
    const events = await collect(both, turnRequest({ tools: [weatherTool], textFormat: weatherFormat }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool_call.start', name: 'get_weather' }));
    expect(upstream.requests).toHaveLength(2);
    for (const sent of upstream.requests) expect(sent).toMatchObject({ textFormat: null, instructions: expect.stringContaining('Schema name: weather') });
  });

  it('configuration: providers default to native; models may set "prompt"; other values are refused', () => {
    const parse = (raw: Record<string, unknown>, model: Record<string, unknown> = {}) =>
      GatewayConfig.safeParse({ providers: { openai: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1', ...raw } }, models: { small: { provider: 'openai', ...model } } });
    const parsed = parse({}, { structuredOutput: 'prompt' });
    expect(parsed.success && parsed.data.providers.openai).toMatchObject({ structuredOutput: 'native' });
    expect(parsed.success && parsed.data.models.small).toMatchObject({ structuredOutput: 'prompt' });
    expect(parse({ structuredOutput: 'prompted' }).success).toBe(false);
    expect(parse({}, { structuredOutput: 'json' }).success).toBe(false);
  });
});
