import { describe, expect, it } from 'vitest';
import { ContextWindows } from '../../src/engine/context-windows.ts';
import { fitContextWindow, truncateTurn } from '../../src/engine/truncate-turn.ts';
import { TruncatingProvider } from '../../src/engine/truncating-provider.ts';
import type { Provider, TurnEvent, TurnRequest } from '../../src/providers/provider.ts';
import type { TurnMeasure } from '../../src/engine/token-estimate.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { turnRequest } from '../support/turn-request.ts';

const user = (text: string): InputItem => ({ type: 'message', role: 'user', content: text });
const assistant = (text: string): InputItem => ({ type: 'message', role: 'assistant', content: text });
const developer = (text: string): InputItem => ({ type: 'message', role: 'developer', content: text });
const call = (id: string): InputItem => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const output = (id: string): InputItem => ({ type: 'function_call_output', call_id: id, output: 'x' });

/** Every item costs 10, nothing else costs anything. */
const tens = (items: InputItem[]): TurnMeasure => ({ fixed: 0, items: items.map(() => 10), total: items.length * 10 });
const label = (item: InputItem) => (item.type === 'message' ? `${item.role}:${item.content as string}` : item.type === 'reasoning' ? `reasoning:${item.id}` : `${item.type}:${(item as { call_id: string }).call_id}`);
const kept = (items: InputItem[], budget: number, historyLength = 0) => truncateTurn(turnRequest({ items, historyLength }), tens(items), budget).request.items.map(label);

describe('truncateTurn', () => {
  it('drops the oldest turns first, never developer messages nor the newest turn, and nothing while it fits', () => {
    const items = [developer('rules'), user('1'), assistant('a1'), user('2'), assistant('a2'), user('3')];
    expect(kept(items, 60)).toEqual(items.map(label));
    expect(kept(items, 40)).toEqual(['developer:rules', 'user:2', 'assistant:a2', 'user:3']);
    expect(kept(items, 10)).toEqual(['developer:rules', 'user:3']);
    const cut = truncateTurn(turnRequest({ items, historyLength: 5 }), tens(items), 10);
    expect(cut).toMatchObject({ dropped: 4, tokens: 20, request: { historyLength: 1 } });
  });

  it('keeps the calls and outputs of the newest turn, and each call with its output when turns are joined by one', () => {
    // call c1 of turn 1 is answered after user 2's message: turns 1 and 2 go together.
    const items = [user('1'), call('c1'), user('2'), output('c1'), assistant('a2'), user('3'), call('c3'), output('c3')];
    expect(kept(items, 70)).toEqual(['user:3', 'function_call:c3', 'function_call_output:c3']);
    expect(kept(items, 30)).toEqual(['user:3', 'function_call:c3', 'function_call_output:c3']);
    // A call answered in the newest turn keeps its own turn and every later one.
    const pending = [user('1'), assistant('a1'), user('2'), call('c2'), user('3'), output('c2')];
    expect(kept(pending, 10)).toEqual(['user:2', 'function_call:c2', 'user:3', 'function_call_output:c2']);
  });

  it("an agent's session — one user message and the loop's steps after it — drops its oldest steps once every earlier turn is gone, keeping the task, the developer's rules and the last step", () => {
    const session = [developer('rules'), user('old'), assistant('old answer'), user('task'), call('c1'), output('c1'), assistant('thinking'), call('c2'), call('c3'), output('c2'), output('c3'), call('c4')];
    const items = [...session, output('c4')];
    // Earlier turns go first, then steps oldest first; parallel calls and their outputs go together.
    expect(kept(items, 110, session.length)).toEqual(['developer:rules', 'user:task', 'function_call:c1', 'function_call_output:c1', 'assistant:thinking', 'function_call:c2', 'function_call:c3', 'function_call_output:c2', 'function_call_output:c3', 'function_call:c4', 'function_call_output:c4']);
    expect(kept(items, 90, session.length)).toEqual(['developer:rules', 'user:task', 'assistant:thinking', 'function_call:c2', 'function_call:c3', 'function_call_output:c2', 'function_call_output:c3', 'function_call:c4', 'function_call_output:c4']);
    expect(kept(items, 40, session.length)).toEqual(['developer:rules', 'user:task', 'function_call:c4', 'function_call_output:c4']);
    // Stateless clients (Codex, the Agents SDK without a stored chain) send it all as their own input: the same.
    expect(kept(items, 40)).toEqual(['developer:rules', 'user:task', 'function_call:c4', 'function_call_output:c4']);
    // Not below the last step.
    const cut = truncateTurn(turnRequest({ items, historyLength: session.length }), tens(items), 30);
    expect(cut.tokens).toBe(40);
  });

  it('a follow-up after a long session keeps the session\'s task and its end: the earlier turn\'s oldest steps go before the rest of it', () => {
    const items = [user('task'), call('c1'), output('c1'), call('c2'), output('c2'), call('c3'), output('c3'), assistant('done'), user('follow-up')];
    expect(kept(items, 50, 8)).toEqual(['user:task', 'function_call:c3', 'function_call_output:c3', 'assistant:done', 'user:follow-up']);
    expect(kept(items, 10, 8)).toEqual(['user:follow-up']);
  });

  it('parallel calls whose outputs have words between them stay one step; a step begins once every call is answered', () => {
    const items = [user('task'), call('a'), call('b'), output('a'), assistant('mid'), output('b'), call('c'), call('d'), output('c'), assistant('mid2'), output('d'), call('e'), output('e')];
    expect(kept(items, 80, 12)).toEqual(['user:task', 'function_call:c', 'function_call:d', 'function_call_output:c', 'assistant:mid2', 'function_call_output:d', 'function_call:e', 'function_call_output:e']);
    expect(kept(items, 30, 12)).toEqual(['user:task', 'function_call:e', 'function_call_output:e']);
  });

  it('a session that starts with no user message (a reasoning item first) drops that item with its step', () => {
    const reasoning = (id: string): InputItem => ({ type: 'reasoning', id, summary: [] }) as InputItem;
    const items = [reasoning('rs_0'), call('c0'), output('c0'), reasoning('rs_1'), call('c1'), output('c1'), reasoning('rs_2'), call('c2'), output('c2'), user('next')];
    expect(kept(items, 40, 9)).toEqual(['reasoning:rs_2', 'function_call:c2', 'function_call_output:c2', 'user:next']);
  });

  it("a step whose call is answered in another step, or before the turn, stays", () => {
    const items = [user('1'), call('c0'), user('task'), output('c0'), call('c1'), output('c1'), call('c2'), user('aside'), call('c3'), output('c2'), output('c3')];
    // Newest turn is 'aside' here: its only step is the last. The turn before joins c0's call and output with its task.
    const stuck = [user('task'), call('c1'), output('c1'), call('c2'), assistant('note'), call('c3'), output('c3'), call('c4'), output('c2'), output('c4')];
    expect(kept(stuck, 20)).toEqual(['user:task', 'function_call:c2', 'assistant:note', 'function_call:c3', 'function_call_output:c3', 'function_call:c4', 'function_call_output:c2', 'function_call_output:c4']);
    expect(kept(items, 10)).toContain('function_call_output:c0');
  });

  it('without any user message, keeps the request\'s own input', () => {
    const items = [assistant('old'), call('c1'), output('c1'), assistant('new'), call('c2'), output('c2')];
    expect(kept(items, 10, 3)).toEqual(['assistant:new', 'function_call:c2', 'function_call_output:c2']);
  });
});

describe('fitContextWindow', () => {
  const window = { tokens: 1_000, source: 'configured' as const, scale: 1, outputReserve: 0, inputOnly: false };

  it('leaves a turn that clearly fits alone, without counting', async () => {
    const request = turnRequest({ items: [user('short'), assistant('answer'), user('next')] });
    expect(await fitContextWindow(request, window)).toEqual({ request, dropped: 0, estimatedTokens: null, estimate: null });
  });

  it('leaves room for max_output_tokens and for what the upstream reserved, scaled to its tokens', async () => {
    const long = 'word '.repeat(600);
    const request = turnRequest({ items: [user(long), assistant('a'), user(long), assistant('b'), user('next')] });
    expect((await fitContextWindow(request, window)).dropped).toBe(2);
    expect((await fitContextWindow({ ...request, maxOutputTokens: 700 }, window)).dropped).toBe(4);
    expect((await fitContextWindow(request, { ...window, outputReserve: 700 })).dropped).toBe(4);
    expect((await fitContextWindow(request, { ...window, scale: 2 })).dropped).toBe(4);
    // A window of the input alone (Gemini's, OpenAI's configured input limit) keeps no room for the output in it.
    expect((await fitContextWindow({ ...request, maxOutputTokens: 700 }, { ...window, inputOnly: true })).dropped).toBe(2);
  });

  it('is a 400 context_length_exceeded when the newest turn alone is too long', async () => {
    const request = turnRequest({ instructions: 'Be brief.', items: [user('old'), user('word '.repeat(2_000))] });
    await expect(fitContextWindow(request, window)).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'input', message: expect.stringContaining("model 'test-model' (1000 tokens)") });
  });
});

describe('ContextWindows', () => {
  it('takes the configured window by model, then by provider, and the smaller of configured and learned', () => {
    const windows = new ContextWindows({ models: { small: 500 }, providers: { openai: 8_000 } });
    expect(windows.lookup('small', 'openai', 'gpt')).toMatchObject({ tokens: 500, source: 'configured', scale: 1 });
    expect(windows.lookup('other', 'openai', 'gpt')).toMatchObject({ tokens: 8_000, source: 'configured' });
    expect(windows.lookup('other', 'anthropic', 'claude')).toBeNull();
    windows.learn('other', 'openai', 'gpt', { window: 4_000, inputTokens: 6_000, outputTokens: null }, 5_000);
    expect(windows.lookup('other', 'openai', 'gpt')).toEqual({ tokens: 4_000, source: 'learned', scale: 1.2, outputReserve: 0, inputOnly: false });
    expect(windows.lookup('small', 'openai', 'gpt')).toMatchObject({ tokens: 500, source: 'configured', scale: 1.2 });
  });

  it('learns the window per provider and upstream model, and a reserve the upstream counts', () => {
    const windows = new ContextWindows();
    windows.learn('claude-x', 'anthropic', 'claude-x', { window: 200_000, inputTokens: 195_000, outputTokens: 8_192 }, 150_000);
    expect(windows.lookup('alias', 'anthropic', 'claude-x')).toEqual({ tokens: 200_000, source: 'learned', scale: 1.3, outputReserve: 8_192, inputOnly: false });
    expect(windows.lookup('claude-x', 'other', 'claude-x')).toBeNull();
    // A refusal that names no sizes says the estimate was short by more than the window allows.
    windows.learn('claude-x', 'anthropic', 'claude-x', { window: null, inputTokens: null, outputTokens: null }, 100_000);
    expect(windows.lookup('claude-x', 'anthropic', 'claude-x')).toMatchObject({ tokens: 200_000, scale: 2.2 });
  });

  it('learns a window of the input alone as such, and keeps it so when a later refusal names no window', () => {
    const windows = new ContextWindows();
    windows.learn('gemini-x', 'gemini', 'gemini-x', { window: 3_000, inputTokens: 3_300, outputTokens: null, inputOnly: true }, 3_000);
    expect(windows.lookup('gemini-x', 'gemini', 'gemini-x')).toMatchObject({ tokens: 3_000, inputOnly: true });
    windows.learn('gemini-x', 'gemini', 'gemini-x', { window: null, inputTokens: null, outputTokens: null }, 2_000);
    expect(windows.lookup('gemini-x', 'gemini', 'gemini-x')).toMatchObject({ tokens: 3_000, inputOnly: true });
    // A configured window is input and output together.
    expect(new ContextWindows({ models: { m: 5_000 } }).lookup('m', 'openai', 'gpt')).toMatchObject({ inputOnly: false });
  });
});

describe('TruncatingProvider calibration', () => {
  it("follows the upstream's own count of a call near the window down as well as up: one call it undercounted (images) no longer cuts every later call short", async () => {
    const windows = new ContextWindows();
    // A refusal that counted twice the estimate: the scale is 2.
    windows.learn('m', 'openai', 'm', { window: 4_000, inputTokens: 4_400, outputTokens: null }, 2_200);
    expect(windows.lookup('m', 'openai', 'm')).toMatchObject({ scale: 2 });
    const sent: TurnRequest[] = [];
    let reported = 0;
    const upstream: Provider = {
      name: 'openai',
      async startTurn(request) {
        sent.push(request);
        // Read as the stream is: the test sets what the upstream counted once it knows the estimate.
        return (function* () {
          yield { type: 'usage', usage: { inputTokens: reported, outputTokens: 1, cachedInputTokens: 0, reasoningTokens: 0 } } as TurnEvent;
          yield { type: 'finish', finish: { reason: 'stop', raw: 'stop' } } as TurnEvent;
        })();
      },
      async listModels() {
        return [];
      },
      async close() {},
    };
    const provider = new TruncatingProvider({ provider: upstream, upstreamModel: 'm' }, windows, 'm');
    const long = 'word '.repeat(800);
    const request = turnRequest({ model: 'm', items: [user(long), assistant('a'), user(long), assistant('b'), user(long), assistant('c'), user('next')] });
    const fitted = await provider.startTurn(request, new AbortController().signal);
    // What the upstream counts of what it was sent, about the estimate: the scale comes back towards 1.
    const estimate = provider.report?.estimated_input_tokens ?? 0;
    expect(estimate).toBeGreaterThan(0);
    reported = Math.ceil(estimate / 2);
    for await (const _event of fitted as AsyncIterable<TurnEvent>) {
      // read to the end
    }
    expect(windows.lookup('m', 'openai', 'm')!.scale).toBeLessThan(1.2);
    const again = await provider.startTurn(request, new AbortController().signal);
    for await (const _event of again as AsyncIterable<TurnEvent>) {
      // read to the end
    }
    expect(sent[1]!.items.length).toBeGreaterThan(sent[0]!.items.length);
  });
});
