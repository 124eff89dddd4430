import { HumanMessage, ToolMessage, type AIMessage, type AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { flavors, scriptModel, type ModelTurn } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

const weather = { name: 'get_weather', description: 'Weather in a city', schema: z.object({ city: z.string() }) };

/** LangChain's ChatOpenAI with `useResponsesApi: true` against the gateway, over each upstream. */
describe.each(flavors)('LangChain over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  const chat = (options: { streaming?: boolean } = {}) =>
    new ChatOpenAI({ model: flavor.model, apiKey: 'client-key', useResponsesApi: true, maxRetries: 0, configuration: { baseURL: gateway.baseURL }, ...options });
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, flavor.config(url));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('invoke', async () => {
    script(() => ({ text: 'Hello from the gateway.' }));
    const answer = await chat().invoke('Say hello.');
    expect(answer.text).toBe('Hello from the gateway.');
    expect(flavor.seen(upstream.requests.at(-1)!)).toContainEqual({ kind: 'user', text: 'Say hello.' });
  });

  it('stream', async () => {
    script(() => ({ text: 'Streaming works.' }));
    let text = '';
    for await (const chunk of await chat().stream('Stream something.')) text += chunk.text;
    expect(text).toBe('Streaming works.');
    expect(upstream.requests.at(-1)!.body.stream).toBe(true);
  });

  it.each([false, true])('bindTools round trip (streamed: %s): strict: null is accepted, the tool result reaches the model', async (streamed) => {
    script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_lc', name: 'get_weather', args: { city: 'Oslo' } }] } : { text: `Oslo: ${results[0]}` }));
    const model = chat({ streaming: streamed }).bindTools([weather]);
    const question = new HumanMessage('Weather in Oslo?');
    let first: AIMessage | AIMessageChunk;
    if (streamed) {
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await model.stream([question])) merged = merged ? merged.concat(chunk) : chunk;
      first = merged!;
    } else {
      first = await model.invoke([question]);
    }
    expect(first.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'Oslo' }, id: 'call_lc' })]);
    const answer = await model.invoke([question, first, new ToolMessage({ tool_call_id: 'call_lc', content: '3°C and snow' })]);
    expect(answer.text).toBe('Oslo: 3°C and snow');
    expect(flavor.seen(upstream.requests.at(-1)!)).toContainEqual({ kind: 'result', id: 'call_lc', content: '3°C and snow' });
  });

  it('withStructuredOutput', async () => {
    script(() => ({ text: JSON.stringify({ city: 'Lima', celsius: 19 }) }));
    const structured = chat().withStructuredOutput(z.object({ city: z.string(), celsius: z.number() }), { name: 'weather' });
    expect(await structured.invoke('Weather in Lima as JSON.')).toEqual({ city: 'Lima', celsius: 19 });
  });
});
