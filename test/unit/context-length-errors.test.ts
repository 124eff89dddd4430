import { describe, expect, it } from 'vitest';
import { errorFromAnthropicType } from '../../src/providers/anthropic/anthropic-errors.ts';
import { contextLengthError } from '../../src/providers/context-length-errors.ts';
import { errorFromUpstreamFrame, errorFromUpstreamStatus } from '../../src/providers/upstream-errors.ts';

/** Upstreams' wordings for an input too long for the model, and the sizes each names. */
describe('contextLengthError', () => {
  const cases: [string, string, (string | null)[], { window: number | null; inputTokens: number | null; outputTokens: number | null; inputOnly?: boolean }][] = [
    [
      'OpenAI',
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens (129000 in the messages, 1000 in the functions). Please reduce the length of the messages or functions.",
      ['context_length_exceeded'],
      { window: 128000, inputTokens: 130000, outputTokens: null },
    ],
    [
      'vLLM, completion counted',
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      ['400', 'BadRequestError'],
      { window: 4096, inputTokens: 4000, outputTokens: 1000 },
    ],
    [
      'OpenAI, a model whose input has a limit of its own',
      'Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 289650 tokens. Please reduce the length of the messages.',
      ['context_length_exceeded'],
      { window: 272000, inputTokens: 289650, outputTokens: null, inputOnly: true },
    ],
    ['vLLM, newer', "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.", [null], { window: 32768, inputTokens: 40000, outputTokens: null }],
    ['Anthropic', 'prompt is too long: 210000 tokens > 200000 maximum', ['invalid_request_error'], { window: 200000, inputTokens: 210000, outputTokens: null }],
    [
      'Anthropic, max_tokens counted',
      'input length and `max_tokens` exceed context limit: 195000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
      ['invalid_request_error'],
      { window: 200000, inputTokens: 195000, outputTokens: 8192 },
    ],
    ['llama.cpp', 'request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it', ['400', 'exceed_context_size_error'], { window: 4096, inputTokens: 5000, outputTokens: null }],
    ['llama.cpp, without sizes', 'the request exceeds the available context size, try increasing it', ['400', 'exceed_context_size_error'], { window: null, inputTokens: null, outputTokens: null }],
    ['OpenAI Responses', 'Your input exceeds the context window of this model. Please adjust your input and try again.', ['context_length_exceeded'], { window: null, inputTokens: null, outputTokens: null }],
  ];

  it.each(cases)('reads %s', (_name, message, codes, sizes) => {
    const error = contextLengthError(message, codes);
    expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded', type: 'invalid_request_error', message, sizes });
  });

  it('leaves other refusals alone, rate limits on tokens per minute and request size in bytes included', () => {
    expect(contextLengthError('Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000.', ['rate_limit_exceeded'])).toBeNull();
    expect(contextLengthError('Request exceeds the maximum allowed number of bytes.', ['request_too_large'])).toBeNull();
    expect(contextLengthError("Invalid value for 'temperature'.", ['invalid_value'])).toBeNull();
  });

  it('is what both providers raise for it: a 400 context_length_exceeded, however the upstream sent it', () => {
    const openai = JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
    expect(errorFromUpstreamStatus('openai', 400, openai, {})).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'input', sizes: { window: 8192, inputTokens: 9000 } });
    const vllm = JSON.stringify({ object: 'error', message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", type: 'BadRequestError', param: null, code: 400 });
    expect(errorFromUpstreamStatus('vllm', 400, vllm, {})).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(errorFromUpstreamFrame('vllm', 'upstream_error', "This model's maximum context length is 4096 tokens.")).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(errorFromAnthropicType('anthropic', 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum', 400)).toMatchObject({ status: 400, code: 'context_length_exceeded', sizes: { window: 200000 } });
    // An `error` event before any content (no HTTP status of its own).
    expect(errorFromAnthropicType('anthropic', 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum', null)).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(errorFromAnthropicType('anthropic', 'invalid_request_error', 'messages.0.content: Field required', 400)).toMatchObject({ status: 400, code: 'invalid_request_error' });
  });
});
