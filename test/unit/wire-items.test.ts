import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { InputItem } from '../../src/protocol/input-items.ts';
import { forEachWireItem, instructionsText, separateInstructions } from '../../src/providers/wire-items.ts';

const items = (input: unknown[]): InputItem[] => CreateResponseRequest.parse({ input }).input as InputItem[];
const walked = (list: InputItem[], historyLength: number) => {
  const seen: { type: string; param: string }[] = [];
  forEachWireItem(list, historyLength, (item, param) => seen.push({ type: item.type, param }));
  return seen;
};

describe('forEachWireItem', () => {
  it('moves an output after its call, and its errors still name the place the client gave it', () => {
    const list = items([
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { role: 'user', content: 'meanwhile' },
      { type: 'function_call_output', call_id: 'c1', output: 'done' },
    ]);
    expect(walked(list, 0)).toEqual([
      { type: 'function_call', param: 'input[0]' },
      { type: 'function_call_output', param: 'input[2]' },
      { type: 'message', param: 'input[1]' },
    ]);
  });

  it('names inherited items by the chain they came from, and counts the input from its own start', () => {
    const list = items([{ role: 'user', content: 'earlier' }, { role: 'assistant', content: 'reply' }, { role: 'user', content: 'now' }]);
    expect(walked(list, 2).map((step) => step.param)).toEqual(['previous_response_id', 'previous_response_id', 'input[0]']);
  });

  it('passes over what only the engine or a hosted tool’s own upstream reads', () => {
    const list = items([
      { role: 'user', content: 'search' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
      { type: 'mcp_list_tools', id: 'mcpl_1', server_label: 'docs', tools: [] },
      { role: 'assistant', content: 'found' },
    ]);
    expect(walked(list, 0)).toEqual([
      { type: 'message', param: 'input[0]' },
      { type: 'message', param: 'input[3]' },
    ]);
  });

  it('refuses an unresolved reference, naming it, rather than dropping it', () => {
    const list = items([{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_gone' }]);
    const error = (() => {
      try {
        walked(list, 0);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ param: 'input[1].id', code: 'item_not_found' });
  });
});

describe('separateInstructions', () => {
  it('gathers the request’s instructions, then system and developer messages in order, and hands on the rest', () => {
    const list = items([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi' },
      { role: 'developer', content: [{ type: 'input_text', text: 'dev a' }, { type: 'input_text', text: 'dev b', prompt_cache_breakpoint: { mode: 'explicit' } }] },
      { role: 'assistant', content: 'hello' },
    ]);
    const rest: string[] = [];
    const pieces = separateInstructions('Be brief.', list, 0, (item, param) => rest.push(`${item.type === 'message' ? item.role : item.type} ${param}`));
    expect(pieces).toEqual([
      { text: 'Be brief.', cacheBreakpoint: false },
      { text: 'sys', cacheBreakpoint: false },
      { text: 'dev a\ndev b', cacheBreakpoint: true },
    ]);
    expect(instructionsText(pieces)).toBe('Be brief.\n\nsys\n\ndev a\ndev b');
    expect(rest).toEqual(['user input[1]', 'assistant input[3]']);
  });

  it('is empty without instructions or instruction messages', () => {
    expect(instructionsText(separateInstructions(null, items([{ role: 'user', content: 'hi' }]), 0, () => {}))).toBe('');
  });
});
