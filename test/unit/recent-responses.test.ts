import { describe, expect, it } from 'vitest';
import type { LoopObserver } from '../../src/engine/loop-observer.ts';
import { RecentResponses } from '../../src/http/inspector/recent-responses.ts';
import { MAX_TIMELINE_ENTRIES } from '../../src/http/inspector/response-record.ts';

const admin = { tenant: 'ops', admin: true };

/** Starts a response on `recent` the way the engine does: the factory, then responseStarted. */
function start(recent: RecentResponses, id: string, tenant = 'team-a', background = false): Required<LoopObserver> {
  const observer = recent.observe({ id, tenant, background, createdAt: Math.floor(Date.now() / 1000), routed: false, callsModel: true, cleanToolError: (error) => error.replace(/secret/g, '[redacted]') }) as Required<LoopObserver>;
  observer.responseStarted({ responseId: id, tenant, model: 'm', provider: 'p', upstreamModel: 'm', stream: false, background, conversationId: null, previousResponseId: null, startedAt: performance.now() });
  return observer;
}

describe('RecentResponses', () => {
  it('keeps the newest responses up to its capacity, and lists them newest first', () => {
    const recent = new RecentResponses(2);
    for (const id of ['r1', 'r2', 'r3']) start(recent, id);
    expect(recent.list(admin, 10).map((entry) => entry.id)).toEqual(['r3', 'r2']);
    expect(recent.timeline(admin, 'r1')).toBeNull();
    expect(recent.list(admin, 1).map((entry) => entry.id)).toEqual(['r3']);
  });

  it('lists a response only once it starts running', () => {
    const recent = new RecentResponses(5);
    recent.observe({ id: 'never', tenant: 'team-a', background: true, createdAt: Math.floor(Date.now() / 1000), routed: false, callsModel: true, cleanToolError: (error) => error });
    expect(recent.list(admin, 10)).toEqual([]);
  });

  it('shows tenant keys their own responses only, the admin every tenant\'s', () => {
    const recent = new RecentResponses(5);
    start(recent, 'a1', 'team-a');
    start(recent, 'b1', 'team-b');
    expect(recent.list({ tenant: 'team-a', admin: false }, 10).map((entry) => entry.id)).toEqual(['a1']);
    expect(recent.timeline({ tenant: 'team-a', admin: false }, 'b1')).toBeNull();
    expect(recent.tenantOf({ tenant: 'team-a', admin: false }, 'b1')).toBeNull();
    expect(recent.tenantOf(admin, 'b1')).toBe('team-b');
  });

  it('builds the timeline from the hooks: turns, tool calls with cleaned errors, approvals, the end with its usage', () => {
    const recent = new RecentResponses(5);
    const observer = start(recent, 'r1');
    expect(recent.list(admin, 1)[0]).toMatchObject({ status: 'in_progress', turns: 0, tokens: null });
    observer.turnStarted({ turn: 1 });
    observer.turnEnded({ turn: 1, toolCalls: 2, finish: 'tool_calls', durationMs: 12.4 });
    observer.toolCallStarted({ turn: 1, callId: 'c1', itemId: 'c1', name: 'ok', executor: 'mcp', arguments: '{}', trace: {} });
    observer.toolCallStarted({ turn: 1, callId: 'c2', itemId: 'c2', name: 'bad', executor: 'mcp', arguments: '{}', trace: {} });
    expect(recent.timeline(admin, 'r1')!.tool_calls.map((call) => call.status)).toEqual(['running', 'running']);
    observer.toolCallEnded({ turn: 1, callId: 'c2', name: 'bad', executor: 'mcp', server: null, durationMs: 3, error: `the secret is ${'x'.repeat(2_000)}`, output: `the secret is ${'x'.repeat(2_000)}` });
    observer.toolCallEnded({ turn: 1, callId: 'c1', name: 'ok', executor: 'mcp', server: null, durationMs: 5, error: null, output: '5' });
    observer.approvalRequested({ turn: 1, callId: 'c3', name: 'gated' });
    const usage = { input_tokens: 30, output_tokens: 7, total_tokens: 37, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
    observer.responseEnded({ responseId: 'r1', tenant: 'team-a', model: 'm', provider: 'p', upstreamModel: 'm', stream: false, background: false, conversationId: null, previousResponseId: null, startedAt: 0, status: 'requires_action', usage, toolCalls: 1, errorCode: null, error: null, incompleteReason: null, durationMs: 40 });

    const timeline = recent.timeline(admin, 'r1')!;
    expect(timeline.turns).toEqual([{ turn: 1, started_ms: expect.any(Number), duration_ms: 12, finish: 'tool_calls', tool_calls: 2 }]);
    expect(timeline.tool_calls.map((call) => [call.call_id, call.status, call.duration_ms])).toEqual([['c1', 'completed', 5], ['c2', 'failed', 3]]);
    expect(timeline.tool_calls[1]!.error).toMatch(/^the \[redacted\] is x+… \[truncated\]$/);
    expect(timeline.tool_calls[1]!.error!.length).toBeLessThan(600);
    expect(timeline.approvals).toEqual([{ turn: 1, call_id: 'c3', name: 'gated', at_ms: expect.any(Number) }]);
    expect(timeline.response).toMatchObject({ status: 'requires_action', turns: 1, tool_calls: 2, failed_tool_calls: 1, tokens: { input: 30, output: 7, total: 37 }, provider: 'p', model: 'm' });
  });

  it('a response refused at once (its first model call) is listed as failed with the error the client got, not as running', () => {
    const recent = new RecentResponses(5);
    const observer = start(recent, 'r1');
    const started = { responseId: 'r1', tenant: 'team-a', model: 'm', provider: 'p', upstreamModel: 'm', stream: false, background: false, conversationId: null, previousResponseId: null, startedAt: 0 };
    observer.responseRefused({ ...started, error: { code: 'upstream_error', message: 'The upstream failed.' }, errorCode: 'upstream_error', httpStatus: 502, usage: null, durationMs: 3 });
    expect(recent.list(admin, 1)[0]).toMatchObject({ id: 'r1', status: 'failed', error: { code: 'upstream_error', message: 'The upstream failed.' }, tokens: null, turns: 0 });
  });

  it('bounds what it keeps per response, and says how much it left out', () => {
    const recent = new RecentResponses(1);
    const observer = start(recent, 'r1');
    for (let turn = 1; turn <= MAX_TIMELINE_ENTRIES + 10; turn++) observer.turnStarted({ turn });
    const timeline = recent.timeline(admin, 'r1')!;
    expect(timeline.turns).toHaveLength(MAX_TIMELINE_ENTRIES);
    expect(timeline.left_out).toBe(10);
  });

  it('counts every turn and tool call in the summary, those the timeline left out too', () => {
    const recent = new RecentResponses(1);
    const observer = start(recent, 'r1');
    observer.turnStarted({ turn: 1 });
    for (let call = 0; call < 300; call++) {
      observer.toolCallStarted({ turn: 1, callId: `c${call}`, itemId: `c${call}`, name: 'tools__add', executor: 'mcp', arguments: '{}', trace: {} });
      observer.toolCallEnded({ turn: 1, callId: `c${call}`, name: 'tools__add', executor: 'mcp', server: 'tools', durationMs: 1, error: call < 280 ? null : 'failed', output: '' });
    }
    observer.toolCallRefused({ turn: 1, callId: 'ghost', name: 'ghost', error: 'There is no tool named ghost.' });
    observer.turnStarted({ turn: 2 });
    const timeline = recent.timeline(admin, 'r1')!;
    expect(timeline.tool_calls.length + timeline.turns.length).toBe(MAX_TIMELINE_ENTRIES);
    expect(timeline.response).toMatchObject({ turns: 2, tool_calls: 301, failed_tool_calls: 21 });
  });
});
