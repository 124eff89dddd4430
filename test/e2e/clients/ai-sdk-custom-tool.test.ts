import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, type Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { flavors, scriptModel, type ModelTurn } from '../../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../../support/scripted-chat-upstream.ts';

const GRAMMAR = 'start: "note:" /[a-z ]+/';

/** The AI SDK's freeform tool (`openai.tools.customTool`) against the gateway, over each upstream: offered, called, answered. */
describe.each(flavors)('AI SDK custom tool over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let openai: ReturnType<typeof createOpenAI>;
  /** Bodies of the Responses requests the SDK sent the gateway. */
  const sent: any[] = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
    return fetch(input, init);
  };
  const script = (turn: (request: RecordedRequest, results: string[]) => ModelTurn) => scriptModel(upstream, flavor, turn);
  const received: string[] = [];
  /** `openai.tools.customTool` with an executor, typed as `ai`'s Tool (the two packages pin different provider-utils typings). */
  const noteTool = () =>
    openai.tools.customTool({
      name: 'write_note',
      description: 'Writes a note.',
      format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR },
      execute: async (input: string) => {
        received.push(input);
        return `saved ${input.length} characters`;
      },
    } as Parameters<typeof openai.tools.customTool>[0]) as unknown as Tool;

  beforeAll(async () => {
    const url = await upstream.start();
    gateway = await startGateway(url, flavor.config(url));
    openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'client-key', fetch: recordingFetch });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  const scriptNote = () => script((_request, results) => (results.length === 0 ? { calls: [{ id: 'call_note', name: 'write_note', args: { input: 'note: buy milk' } }] } : { text: `Done: ${results[0]}` }));

  it.each([
    { streamed: false, stored: true },
    { streamed: true, stored: true },
    { streamed: false, stored: false },
    { streamed: true, stored: false },
  ])('a freeform call round trip (streamed: $streamed, store: $stored): the SDK runs the tool with the text, the model sees the result', async ({ streamed, stored }) => {
    scriptNote();
    received.length = 0;
    const options = { model: openai.responses(flavor.model), prompt: 'Write a note.', tools: { write_note: noteTool() }, stopWhen: stepCountIs(3), providerOptions: { openai: { store: stored } } };
    let text: string;
    if (streamed) {
      const result = streamText(options);
      for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
      text = await result.text;
    } else {
      text = (await generateText(options)).text;
    }
    expect(received).toEqual(['note: buy milk']);
    expect(text).toBe('Done: saved 14 characters');
    // The SDK declared a custom tool; the model was offered a function with one string and the grammar described.
    expect(sent.at(-2).tools).toContainEqual(expect.objectContaining({ type: 'custom', name: 'write_note' }));
    const offered = flavor.offeredTools(upstream.requests.at(-1)!).find((tool) => tool.name === 'write_note');
    expect(JSON.stringify(offered)).toContain(JSON.stringify(GRAMMAR).slice(1, -1));
    // The SDK answered with custom_tool_call_output; the model saw its call and that output.
    // Stored, the SDK points at the call with an item_reference; not stored, it resends the custom_tool_call.
    expect(sent.at(-1).input.map((item: any) => item.type ?? item.role)).toEqual(['user', stored ? 'item_reference' : 'custom_tool_call', 'custom_tool_call_output']);
    const seen = flavor.seen(upstream.requests.at(-1)!);
    expect(seen).toContainEqual({ kind: 'call', id: 'call_note', name: 'write_note', args: { input: 'note: buy milk' } });
    expect(seen).toContainEqual({ kind: 'result', id: 'call_note', content: expect.stringContaining('saved 14 characters') });
  });

  it('toolChoice naming the custom tool: the SDK sends tool_choice {type: "custom"}, the upstream is told to call that function', async () => {
    scriptNote();
    received.length = 0;
    // One step: a forced choice holds for every step, and the scripted model answers with text once it has a result.
    const result = await generateText({ model: openai.responses(flavor.model), prompt: 'Write a note.', tools: { write_note: noteTool() }, toolChoice: { type: 'tool', toolName: 'write_note' } });
    expect(received).toEqual(['note: buy milk']);
    expect(result.toolResults.map((toolResult) => toolResult.output)).toEqual(['saved 14 characters']);
    expect(sent.at(-1).tool_choice).toEqual({ type: 'custom', name: 'write_note' });
    expect(flavor.toolChoice(upstream.requests.at(-1)!)).toEqual({ mode: 'required', names: ['write_note'] });
  });
});
