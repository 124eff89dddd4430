import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { errorFromAnthropic, errorFromAnthropicType } from '../../src/providers/anthropic/anthropic-errors.ts';
import { errorFromUpstreamStatus } from '../../src/providers/upstream-errors.ts';

const anthropicError = (status: number, body: unknown) => errorFromAnthropic('compat', Anthropic.APIError.generate(status, body as Record<string, unknown>, undefined, new Headers()));

/**
 * Errors of servers that speak another's API for their own models
 * (OpenRouter, z.ai, … behind Anthropic's or OpenAI's wire format): a
 * moderation refusal of the client's input is the client's, not the
 * gateway's credentials refused; an error that names no type keeps what its
 * status says; one in a stream is what it said, not a status it never had.
 */
describe("vendors' error bodies", () => {
  const flagged = { error: { code: 403, message: 'Your chosen model requires moderation and your input was flagged for "harassment".', metadata: { reasons: ['harassment'] } } };

  it('a 403 that says the input was flagged is a 400 content_filter with its words, on either wire; other 403s are still the credentials', () => {
    for (const error of [anthropicError(403, flagged), errorFromUpstreamStatus('compat', 403, JSON.stringify(flagged), {})]) {
      expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'content_filter', message: expect.stringContaining('flagged for "harassment"') });
    }
    expect(anthropicError(403, { type: 'error', error: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' } })).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
  });

  it('a refusal without a type keeps the kind its status says: a 429 is a rate limit', () => {
    expect(anthropicError(429, { error: { code: '1113', message: 'Insufficient balance or no resource package.' } })).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Insufficient balance or no resource package.' });
    expect(anthropicError(402, { error: { code: 402, message: 'Insufficient credits.' } })).toMatchObject({ status: 402, type: 'invalid_request_error', message: 'Insufficient credits.' });
  });

  it('an error event in the stream with no type: a content refusal is the 400 content_filter, anything else what it said, not "status 502"', () => {
    expect(errorFromAnthropicType('compat', null, 'Content security warning: the input may contain unsafe content.', null)).toMatchObject({ status: 400, code: 'content_filter' });
    const odd = errorFromAnthropicType('compat', null, 'Engine hiccup.', null);
    expect(odd).toMatchObject({ status: 502, type: 'upstream_error', code: 'upstream_error' });
    expect(odd.message).toBe("The upstream 'compat' reported: Engine hiccup.");
  });
});
