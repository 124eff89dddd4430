import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import Fastify from 'fastify';
import { Pool } from 'undici';

/**
 * The floor the gateway is measured against: the smallest server that does
 * the gateway's translation for one plain request — Fastify and undici, the
 * gateway's own versions, one route, `POST /v1/responses`: Responses input
 * (a string, or message items) → Chat messages, and the Chat answer → a
 * minimal Response object or, with `stream: true`, the standard Responses
 * event sequence. Nothing else: no validation, storage, tools or loop. It is
 * written to be fast, as anyone would write a bare forwarder, so the ratios
 * measured against it are fair. Prints its port on stdout.
 *
 *   UPSTREAM_PORT=… node bench/translating-forwarder.ts
 */

interface ContentPart {
  type: string;
  text?: string;
}

interface InputMessage {
  role: string;
  content: string | ContentPart[];
}

interface ResponsesRequest {
  model: string;
  input: string | InputMessage[];
  instructions?: string;
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
}

interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

const pool = new Pool(`http://127.0.0.1:${process.env.UPSTREAM_PORT}`, { keepAliveTimeout: 60_000 });
const app = Fastify({ logger: false, bodyLimit: 50 * 1024 * 1024 });
const jsonHeaders = { 'content-type': 'application/json' };

app.post<{ Body: ResponsesRequest }>('/v1/responses', async (request, reply) => {
  const body = request.body;
  const chat: Record<string, unknown> = { model: body.model, messages: chatMessages(body) };
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.max_output_tokens !== undefined) chat.max_completion_tokens = body.max_output_tokens;
  if (body.stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
    reply.hijack();
    await streamResponse(body.model, JSON.stringify(chat), reply.raw);
    return;
  }
  const upstream = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: jsonHeaders, body: JSON.stringify(chat) });
  if (upstream.statusCode !== 200) {
    const text = await upstream.body.text();
    return reply.code(upstream.statusCode).send({ error: { type: 'upstream_error', code: 'upstream_error', message: text, param: null } });
  }
  const completion = (await upstream.body.json()) as { choices: { message: { content: string | null } }[]; usage?: ChatUsage };
  return responseObject(newId('resp'), body.model, 'completed', [message(newId('msg'), completion.choices[0]?.message.content ?? '', 'completed')], completion.usage);
});

function chatMessages(body: ResponsesRequest): { role: string; content: string }[] {
  const messages: { role: string; content: string }[] = [];
  if (body.instructions) messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') {
    messages.push({ role: 'user', content: body.input });
    return messages;
  }
  for (const item of body.input) {
    const content = typeof item.content === 'string' ? item.content : item.content.map((part) => part.text ?? '').join('');
    messages.push({ role: item.role === 'developer' ? 'system' : item.role, content });
  }
  return messages;
}

/** Chat SSE in, Responses SSE out; every upstream chunk's events leave in one write. */
async function streamResponse(model: string, chatBody: string, res: ServerResponse): Promise<void> {
  const responseId = newId('resp');
  const messageId = newId('msg');
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const started = responseObject(responseId, model, 'in_progress', [], undefined);
  res.write(event('response.created', { response: started }) + event('response.in_progress', { response: started }));
  let text = '';
  let usage: ChatUsage | undefined;
  let opened = false;
  try {
    const upstream = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: jsonHeaders, body: chatBody, signal: abort.signal });
    if (upstream.statusCode !== 200) {
      const message = await upstream.body.text();
      res.end(event('error', { code: 'upstream_error', message, param: null }));
      return;
    }
    upstream.body.setEncoding('utf8');
    let buffered = '';
    for await (const piece of upstream.body as AsyncIterable<string>) {
      buffered += piece;
      let out = '';
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
        const chunk = JSON.parse(frame.slice(6)) as { choices: { delta: { content?: string | null } }[]; usage?: ChatUsage };
        if (chunk.usage) usage = chunk.usage;
        const delta = chunk.choices[0]?.delta.content;
        if (!delta) continue;
        if (!opened) {
          opened = true;
          out += event('response.output_item.added', { output_index: 0, item: message(messageId, '', 'in_progress', []) });
          out += event('response.content_part.added', { item_id: messageId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        }
        text += delta;
        out += event('response.output_text.delta', { item_id: messageId, output_index: 0, content_index: 0, delta, logprobs: [] });
      }
      if (out) res.write(out);
    }
  } catch (error) {
    if (abort.signal.aborted) return;
    res.end(event('error', { code: 'upstream_error', message: String(error), param: null }));
    return;
  }
  const done = message(messageId, text, 'completed');
  res.end(
    (opened ? '' : event('response.output_item.added', { output_index: 0, item: message(messageId, '', 'in_progress', []) }) + event('response.content_part.added', { item_id: messageId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } })) +
      event('response.output_text.done', { item_id: messageId, output_index: 0, content_index: 0, text, logprobs: [] }) +
      event('response.content_part.done', { item_id: messageId, output_index: 0, content_index: 0, part: done.content[0] }) +
      event('response.output_item.done', { output_index: 0, item: done }) +
      event('response.completed', { response: responseObject(responseId, model, 'completed', [done], usage) }),
  );
}

function message(id: string, text: string, status: 'in_progress' | 'completed', content = [{ type: 'output_text', text, annotations: [] as unknown[] }]) {
  return { type: 'message', id, status, role: 'assistant', content };
}

function responseObject(id: string, model: string, status: string, output: unknown[], usage: ChatUsage | undefined) {
  const now = Math.floor(Date.now() / 1000);
  return {
    id,
    object: 'response',
    created_at: now,
    completed_at: status === 'completed' ? now : null,
    status,
    model,
    output,
    usage: usage ? { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.total_tokens } : null,
  };
}

function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
// Exit rather than die on the signal, so `--cpu-prof` can write its profile (bench/gateway-profile.ts).
process.once('SIGTERM', () => process.exit(0));
