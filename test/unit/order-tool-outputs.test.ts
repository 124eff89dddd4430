import { describe, expect, it } from 'vitest';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { orderToolOutputs } from '../../src/providers/order-tool-outputs.ts';

const user = (text: string): InputItem => ({ type: 'message', role: 'user', content: text });
const said = (text: string): InputItem => ({ type: 'message', role: 'assistant', content: text });
const thought = (id: string): InputItem => ({ type: 'reasoning', id, summary: [] });
const call = (id: string): InputItem => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const output = (id: string): InputItem => ({ type: 'function_call_output', call_id: id, output: id });
const names = (items: InputItem[]) =>
  items.map((item) => (item.type === 'function_call' ? `call ${item.call_id}` : item.type === 'function_call_output' ? `out ${item.call_id}` : item.type === 'reasoning' ? 'thought' : (item as { role: string }).role));

describe('orderToolOutputs', () => {
  it('leaves a conversation already in order alone', () => {
    const items = [user('q'), thought('rs_1'), call('a'), call('b'), output('a'), output('b'), said('done')];
    expect(orderToolOutputs(items)).toEqual(items);
  });

  it('moves an output past a user message to follow its call', () => {
    expect(names(orderToolOutputs([user('q'), call('a'), user('more'), output('a')]))).toEqual(['user', 'call a', 'out a', 'user']);
  });

  it("keeps one turn's calls together when the model wrote text between them (Claude does)", () => {
    const items = [user('q'), thought('rs_1'), said('first'), call('a'), said('then'), call('b'), output('a'), output('b')];
    expect(names(orderToolOutputs(items))).toEqual(['user', 'thought', 'assistant', 'call a', 'assistant', 'call b', 'out a', 'out b']);
  });

  it('puts the outputs before assistant text no call follows (a message added to a conversation by hand, after a call the gateway then closed): Chat Completions refuses text between calls and their outputs', () => {
    expect(names(orderToolOutputs([user('q'), call('a'), said('The tool is unavailable.'), output('a'), user('go on')]))).toEqual(['user', 'call a', 'out a', 'assistant', 'user']);
    expect(names(orderToolOutputs([user('q'), said('first'), call('a'), said('then'), call('b'), said('after'), user('more'), output('a'), output('b')]))).toEqual(['user', 'assistant', 'call a', 'assistant', 'call b', 'out a', 'out b', 'assistant', 'user']);
  });

  it('leaves an output right after its call: the next call may be a later turn, and the cached prefix stays the same', () => {
    const calls = [user('q'), call('a'), output('a'), call('b'), call('c'), output('b'), output('c')];
    expect(orderToolOutputs(calls)).toEqual(calls);
    const withReasoning = [user('q'), thought('rs_1'), call('a'), output('a'), thought('rs_2'), call('b'), output('b'), said('done')];
    expect(orderToolOutputs(withReasoning)).toEqual(withReasoning);
    const withText = [user('q'), call('a'), output('a'), said('now b'), call('b'), output('b')];
    expect(orderToolOutputs(withText)).toEqual(withText);
  });
});
