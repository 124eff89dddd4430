import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { errorFromAnthropic, errorFromAnthropicType } from '../../src/providers/anthropic/anthropic-errors.ts';
import { errorFromUpstreamStatus, retryHeadersOf } from '../../src/providers/upstream-errors.ts';

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

  it("xAI's safety refusal (a 403 whose `error` is a string) is the client's 400 content_filter", () => {
    const body = { code: 'The caller does not have permission to execute the specified operation', error: 'Content violates usage guidelines. Team: x, API key ID: y, Model: grok-4, Failed check: SAFETY_CHECK_TYPE_BIO' };
    expect(errorFromUpstreamStatus('xai', 403, JSON.stringify(body), {})).toMatchObject({ status: 400, code: 'content_filter', message: expect.stringContaining('Content violates usage guidelines') });
  });
});

/** What gateways and proxies in front of the model server answer with (LiteLLM, Cloudflare, nginx). */
describe("proxies' error bodies", () => {
  it("LiteLLM's `\"None\"` for a type or param it has not is no type or param", () => {
    const error = errorFromUpstreamStatus('litellm', 400, JSON.stringify({ error: { message: 'Violated guardrail policy', type: 'None', param: 'None', code: '400' } }), {});
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param: null, code: null, message: 'Violated guardrail policy' });
  });

  it("Cloudflare's envelope keeps its message, the list at `errors` or under `error`", () => {
    for (const body of [{ success: false, errors: [{ code: 2003, message: 'Rate limited' }], messages: [], result: null }, { error: [{ code: 2003, message: 'Rate limited' }] }]) {
      expect(errorFromUpstreamStatus('cf', 429, JSON.stringify(body), { 'retry-after': '7' })).toMatchObject({ status: 429, type: 'rate_limit_error', message: 'Rate limited', headers: { 'retry-after': '7' } });
    }
  });

  it("an nginx error page is said by its title; a proxy's 504 is the gateway's upstream_timeout", () => {
    const page = (title: string) => `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>`;
    const bad = errorFromUpstreamStatus('vllm', 502, page('502 Bad Gateway'), {});
    expect(bad).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(bad.message).toBe("The upstream 'vllm' failed with status 502: 502 Bad Gateway (an HTML error page)");
    expect(errorFromUpstreamStatus('vllm', 413, page('413 Request Entity Too Large'), {})).toMatchObject({ status: 413, message: '413 Request Entity Too Large (an HTML error page)' });
    expect(errorFromUpstreamStatus('vllm', 504, page('504 Gateway Time-out'), { 'retry-after': '7' })).toMatchObject({ status: 504, code: 'upstream_timeout', message: expect.stringContaining('504 Gateway Time-out'), headers: { 'retry-after': '7' }, upstreamRetry: { 'retry-after': '7' } });
    expect(errorFromUpstreamStatus('p', 403, '<!-- proxy --><html><head><title></title></head><body><h1>Error &#8212; blocked &amp; logged</h1></body></html>', {}).message).toBe("The upstream 'p' refused the gateway's credentials (status 403); the gateway's configuration for this provider needs fixing.");
    expect(errorFromUpstreamStatus('p', 400, '<!-- proxy --><html><head><title></title></head><body><h1>Error &#8212; blocked &amp; logged</h1></body></html>', {}).message).toBe('Error — blocked & logged (an HTML error page)');
  });

  it("an upstream's `x-should-retry: false` is passed on, so the SDKs do not retry in vain", () => {
    const headers = retryHeadersOf((name) => ({ 'retry-after': '120', 'x-should-retry': 'false' })[name]);
    expect(errorFromUpstreamStatus('openai', 503, JSON.stringify({ error: { message: 'Down for maintenance.' } }), headers).headers).toMatchObject({ 'retry-after': '120', 'x-should-retry': 'false' });
  });

  it("a pydantic refusal (FastAPI's `detail` list, Mistral's nested in `message`) says each field and why", () => {
    const mistral = { object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'prompt_cache_key'], msg: 'Extra inputs are not permitted', input: 'k' }] }, type: 'invalid_request_error', param: null, code: null };
    expect(errorFromUpstreamStatus('mistral', 422, JSON.stringify(mistral), {})).toMatchObject({ status: 422, type: 'invalid_request_error', message: 'prompt_cache_key: Extra inputs are not permitted' });
    const fastapi = { detail: [{ loc: ['body', 'messages', 0, 'role'], msg: "Input should be 'user'", type: 'literal_error' }, { loc: ['body', 'model'], msg: 'Field required', type: 'missing' }] };
    expect(errorFromUpstreamStatus('vllm', 422, JSON.stringify(fastapi), {}).message).toBe("messages.0.role: Input should be 'user'; model: Field required");
  });

  it("a server's class name for its error (vLLM's BadRequestError) is no type: the status says the kind", () => {
    expect(errorFromUpstreamStatus('vllm', 400, JSON.stringify({ error: { message: 'The provided JSON schema contains features not supported by xgrammar.', type: 'BadRequestError', param: null, code: 400 } }), {})).toMatchObject({ status: 400, type: 'invalid_request_error', code: null });
  });
});
