import { describe, expect, it } from 'vitest';
import { InlineThinking, type ContentPiece } from '../../src/providers/openai-chat/inline-thinking.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { responseEventsOf } from '../support/turn-helpers.ts';

/** The content in the given chunks, its pieces joined by kind in order. */
function split(chunks: string[]): ContentPiece[] {
  const thinking = new InlineThinking();
  const pieces = [...chunks.flatMap((chunk) => thinking.accept(chunk)), ...thinking.end()];
  const joined: ContentPiece[] = [];
  for (const piece of pieces) {
    const last = joined.at(-1);
    if (last?.kind === piece.kind) last.text += piece.text;
    else joined.push({ ...piece });
  }
  return joined;
}

/** Every way of cutting `content` in two chunks, and one character a chunk: each must read as it does whole. */
function everyWay(content: string): ContentPiece[] {
  const whole = split([content]);
  for (let cut = 1; cut < content.length; cut++) expect(split([content.slice(0, cut), content.slice(cut)]), `cut at ${cut}`).toEqual(whole);
  expect(split([...content])).toEqual(whole);
  return whole;
}

describe('thinking written inline as <think>…</think> (models served without a reasoning parser)', () => {
  it('is reasoning, and the text after it the answer, without the blank lines between; tags cut across chunks are held until whole', () => {
    expect(everyWay('<think>The user wants Paris.</think>\n\nParis.')).toEqual([
      { kind: 'reasoning', text: 'The user wants Paris.' },
      { kind: 'text', text: 'Paris.' },
    ]);
    expect(everyWay('\n<think>\nhm\n</think>Yes')).toEqual([
      { kind: 'reasoning', text: '\nhm\n' },
      { kind: 'text', text: 'Yes' },
    ]);
  });

  it('content that does not open with <think> is text, whatever it holds later; a tag that never closes stays the thinking it was', () => {
    expect(everyWay('Use <think> tags like <think>this</think>.')).toEqual([{ kind: 'text', text: 'Use <think> tags like <think>this</think>.' }]);
    expect(everyWay('<thin')).toEqual([{ kind: 'text', text: '<thin' }]);
    expect(everyWay('<think>cut off mid-thought </thi')).toEqual([{ kind: 'reasoning', text: 'cut off mid-thought </thi' }]);
  });

  it('blank content before a tool call keeps its place before the call (a history with the call first is one OpenAI refuses)', async () => {
    const frame = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const stream = [frame({ role: 'assistant', content: '\n\n' }), frame({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }), frame({}, 'tool_calls'), 'data: [DONE]\n\n'].join('');
    const response = assertEventStreamInvariants(await responseEventsOf(stream, { model: 'm', tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }] } as any));
    expect(response.output.map((item: any) => item.type).at(-1)).toBe('function_call');
  });

  it('through a Chat Completions stream: a reasoning item, then the message; a call drafted while thinking is no call', async () => {
    const frame = (content: string, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
    const stream = [frame('<thi'), frame('nk>I could send {"tool": "send_email"} but no.</th'), frame('ink>\n\nNo email'), frame(' needed.', 'stop'), 'data: [DONE]\n\n'].join('');
    const response = assertEventStreamInvariants(await responseEventsOf(stream, { model: 'm', reasoning: { summary: 'auto' } }));
    expect(response.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[1].content[0].text).toBe('No email needed.');
    expect(JSON.stringify(response.output[0])).toContain('I could send');
  });
});
