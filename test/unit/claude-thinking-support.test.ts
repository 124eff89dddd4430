import { describe, expect, it } from 'vitest';
import { ClaudeModelCatalog } from '../../src/providers/anthropic/claude-model-catalog.ts';
import { claudeEffortFor, thinkingSupportByName, thinkingSupportOf } from '../../src/providers/anthropic/claude-thinking-support.ts';

const adaptiveOnly = {
  id: 'claude-opus-4-7',
  max_tokens: 128_000,
  capabilities: {
    thinking: { supported: true, types: { adaptive: { supported: true }, enabled: { supported: false }, disabled: { supported: true } } },
    effort: { supported: true, low: { supported: true }, medium: { supported: true }, high: { supported: true }, xhigh: { supported: true }, max: { supported: false } },
  },
};

describe('how a Claude model takes thinking', () => {
  it("the Models API's capabilities: adaptive thinking, the effort levels taken, the max_tokens ceiling", () => {
    expect(thinkingSupportOf(adaptiveOnly)).toEqual({ thinks: true, adaptive: true, efforts: ['low', 'medium', 'high', 'xhigh'], maxTokens: 128_000 });
    const budgetOnly = { capabilities: { thinking: { supported: true, types: { adaptive: { supported: false }, enabled: { supported: true } } }, effort: { supported: false } } };
    expect(thinkingSupportOf(budgetOnly)).toEqual({ thinks: true, adaptive: false, efforts: [], maxTokens: null });
    expect(thinkingSupportOf({ max_tokens: 8192, capabilities: { thinking: { supported: false, types: { adaptive: { supported: false } } }, effort: { supported: false } } })).toEqual({ thinks: false, adaptive: false, efforts: [], maxTokens: 8192 });
    // A proxy's reduced answer says nothing about thinking: not an answer.
    expect(thinkingSupportOf({ max_tokens: 8192 })).toBeNull();
  });

  it('by name where the API cannot say: 4.6 and later adaptive with low/medium/high, older models and names without a version a budget', () => {
    const adaptive = { thinks: true, adaptive: true, efforts: ['low', 'medium', 'high'], maxTokens: null };
    const budget = { thinks: true, adaptive: false, efforts: [], maxTokens: null };
    for (const name of ['claude-opus-4-7', 'claude-sonnet-4-6', 'claude-opus-5', 'claude-sonnet-5-5', 'us.anthropic.claude-opus-4-7-v1:0', 'anthropic/claude-fable-5-1']) expect(thinkingSupportByName(name), name).toEqual(adaptive);
    for (const name of ['claude-opus-4-5-20251101', 'claude-sonnet-4-20250514', 'claude-3-7-sonnet-20250219', 'claude-haiku-4-5', 'claude-test', 'claude-mythos-preview', 'gpt-5']) expect(thinkingSupportByName(name), name).toEqual(budget);
  });

  it("OpenResponses' effort as the nearest level the model takes: itself, else the next below, else the next above", () => {
    expect(claudeEffortFor('minimal', ['low', 'medium', 'high'])).toBe('low');
    expect(claudeEffortFor('xhigh', ['low', 'medium', 'high', 'xhigh'])).toBe('xhigh');
    expect(claudeEffortFor('xhigh', ['low', 'medium', 'high', 'max'])).toBe('high');
    expect(claudeEffortFor('max', ['low', 'medium', 'high', 'xhigh'])).toBe('xhigh');
    expect(claudeEffortFor('low', ['medium', 'high'])).toBe('medium');
    expect(claudeEffortFor('high', [])).toBeNull();
  });

  it('the catalog asks the Models API once per model, callers at the same moment share the answer, and a failed lookup falls back to the name until asked again', async () => {
    let now = 0;
    const asked: string[] = [];
    const catalog = new ClaudeModelCatalog({
      lookup: async (model) => {
        asked.push(model);
        if (model === 'claude-opus-4-7') return adaptiveOnly;
        throw new Error('404');
      },
      retryAfterMs: 1_000,
      now: () => now,
    });
    const [first, second] = await Promise.all([catalog.thinkingSupport('claude-opus-4-7'), catalog.thinkingSupport('claude-opus-4-7')]);
    expect(first).toEqual({ thinks: true, adaptive: true, efforts: ['low', 'medium', 'high', 'xhigh'], maxTokens: 128_000 });
    expect(second).toBe(first);
    // Known from then on, without asking (nor waiting).
    expect(catalog.thinkingSupport('claude-opus-4-7')).toBe(first);
    expect(await catalog.thinkingSupport('claude-sonnet-4-6')).toEqual({ thinks: true, adaptive: true, efforts: ['low', 'medium', 'high'], maxTokens: null });
    await catalog.thinkingSupport('claude-sonnet-4-6');
    expect(asked).toEqual(['claude-opus-4-7', 'claude-sonnet-4-6']);
    now = 1_001;
    await catalog.thinkingSupport('claude-sonnet-4-6');
    expect(asked).toEqual(['claude-opus-4-7', 'claude-sonnet-4-6', 'claude-sonnet-4-6']);
  });
});
