import { createServer } from 'node:http';

/**
 * A minimal Chat Completions server for benchmarks: answers at once, JSON or
 * SSE (a role chunk, `STREAM_CHUNKS` content chunks, finish, usage, [DONE]).
 * With `TOOL_TURNS=n`, a streamed request that carries fewer than n tool
 * results is answered with one call of the `step` tool instead (a tool loop).
 * A streamed request for the model `bench-hold` gets the role chunk and the
 * first content chunk, then nothing more until the client goes: an idle
 * stream, for measuring what open streams cost.
 * Prints its port on stdout.
 */
const chunks = Number(process.env.STREAM_CHUNKS ?? 20);
const toolTurns = Number(process.env.TOOL_TURNS ?? 0);
const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_760_000_000,
  model: 'bench-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
});
const frame = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_760_000_000, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const head = frame({ role: 'assistant', content: '' });
const first = frame({ content: 'Hello' });
const rest =
  Array.from({ length: chunks - 1 }, (_, index) => frame({ content: ` token${index}` })).join('') +
  frame({}, 'stop') +
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks } })}\n\n` +
  'data: [DONE]\n\n';

const toolCall = (id: string) =>
  frame({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name: 'step', arguments: '' } }] }) +
  frame({ tool_calls: [{ index: 0, function: { arguments: '{"n":1}' } }] }) +
  frame({}, 'tool_calls');

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (piece: string) => (body += piece));
  req.on('end', () => {
    if (toolTurns > 0 && body.includes('"stream":true')) {
      const results = body.split('"role":"tool"').length - 1;
      if (results < toolTurns) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(toolCall(`call_${results}`) + 'data: [DONE]\n\n');
        return;
      }
    }
    if (body.includes('"stream":true') && body.includes('"model":"bench-hold"')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(head + first);
      return;
    }
    if (body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(head + first);
      // The rest follows on the next tick, as a model keeps generating.
      setImmediate(() => res.end(rest));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
    res.end(completion);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
