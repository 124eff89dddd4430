import Fastify from 'fastify';
import { Pool } from 'undici';
import { initialResponse } from '../src/engine/initial-response.ts';
import type { CreateResponseRequest } from '../src/protocol/create-response-request.ts';
import type { OutputItem } from '../src/protocol/output-items.ts';
import type { StoredInputItem } from '../src/store/response-store.ts';
import { responseJson } from '../src/protocol/response-json.ts';
import { MemoryResponseStore } from '../src/store/memory-response-store.ts';
import { newId } from '../src/util/ids.ts';

/**
 * The second rung between the floor and the gateway (bench/floor-ladder.ts):
 * the bare translating forwarder's one JSON route, plus the least any
 * storing OpenResponses server must do — answer the whole response object
 * the schema requires (every request setting echoed; the gateway's own
 * `initialResponse`) and keep it, with its input, in the gateway's memory
 * store at its default 10,000 entries, so a later `previous_response_id`
 * could continue it. No validation, loop, observers, deadline or metrics:
 * what the gateway costs beyond this rung is its engine.
 *
 *   UPSTREAM_PORT=… node bench/storing-forwarder.ts   (prints its port)
 */
const pool = new Pool(`http://127.0.0.1:${process.env.UPSTREAM_PORT}`, { keepAliveTimeout: 60_000 });
const store = new MemoryResponseStore({ maxEntries: 10_000, ttlSeconds: 600 });
const app = Fastify({ logger: false, bodyLimit: 50 * 1024 * 1024 });
const jsonHeaders = { 'content-type': 'application/json' };

interface ChatCompletion {
  choices: { message: { content: string | null } }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

app.post<{ Body: CreateResponseRequest & { input: string } }>('/v1/responses', async (request, reply) => {
  const body = request.body;
  const upstream = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: jsonHeaders, body: JSON.stringify({ model: body.model, messages: [{ role: 'user', content: body.input }] }) });
  const completion = (await upstream.body.json()) as ChatCompletion;
  const createdAt = Math.floor(Date.now() / 1000);
  const response = initialResponse(body, newId('resp'), body.model!, createdAt);
  const answer: OutputItem = { type: 'message', id: newId('msg'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: completion.choices[0]?.message.content ?? '', annotations: [] }] };
  response.status = 'completed';
  response.completed_at = createdAt;
  response.output.push(answer);
  const { usage } = completion;
  response.usage = { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, total_tokens: usage.total_tokens, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  const input: StoredInputItem = { type: 'message', id: newId('msg'), role: 'user', content: [{ type: 'input_text', text: body.input }] };
  // The store serializes the response once; the reply sends that same JSON, as the gateway does.
  await store.put({ tenant: 'default', response, inputItems: [input], previousResponseId: null });
  return reply.header('content-type', 'application/json; charset=utf-8').send(responseJson(response));
});

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
process.once('SIGTERM', () => process.exit(0));
