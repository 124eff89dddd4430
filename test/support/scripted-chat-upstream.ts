import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Chat Completions server on loopback that answers from a script, in the
 * real wire format, and records what the gateway sent it.
 */
export type UpstreamReply =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string>; delayMs?: number }
  /** Raw SSE text, written in the given pieces with an optional pause between them. */
  /** `endAfter: false` leaves the stream open after the pieces; `destroyAfter` resets the connection instead of ending it. */
  | { kind: 'sse'; pieces: string[]; pauseMs?: number; status?: number; endAfter?: boolean; destroyAfter?: boolean }
  | { kind: 'hang' }
  | { kind: 'destroy' };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export class ScriptedChatUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Models API lookups (`GET …/models/{id}`), kept apart from the model calls in `requests`. */
  readonly modelLookups: string[] = [];
  /** What `GET …/models/{id}` answers, by model; any other model is a 404. */
  readonly modelInfos = new Map<string, unknown>();
  /** Requests whose connection the gateway closed before the reply finished. */
  abortedRequests = 0;
  #server: Server | null = null;
  #script: (request: RecordedRequest) => UpstreamReply;
  #open = new Set<ServerResponse>();

  constructor(script: (request: RecordedRequest) => UpstreamReply = () => textCompletion('Hello')) {
    this.#script = script;
  }

  setScript(script: (request: RecordedRequest) => UpstreamReply): void {
    this.#script = script;
  }

  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (piece: string) => (raw += piece));
      req.on('end', () => {
        const lookup = req.method === 'GET' ? /\/models\/([^/?]+)/.exec(req.url ?? '') : null;
        if (lookup) {
          const model = decodeURIComponent(lookup[1]!);
          this.modelLookups.push(model);
          const info = this.modelInfos.get(model);
          res.writeHead(info ? 200 : 404, { 'content-type': 'application/json' });
          res.end(JSON.stringify(info ?? { type: 'error', error: { type: 'not_found_error', message: `model: ${model}` } }));
          return;
        }
        const recorded: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: raw ? JSON.parse(raw) : null };
        this.requests.push(recorded);
        this.#open.add(res);
        res.on('close', () => {
          if (!res.writableFinished) this.abortedRequests++;
          this.#open.delete(res);
        });
        void this.#reply(res, recorded);
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    for (const res of this.#open) res.destroy();
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  async #reply(res: ServerResponse, request: RecordedRequest): Promise<void> {
    if (request.path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'upstream-model', object: 'model', created: 0, owned_by: 'scripted' }] }));
      return;
    }
    const reply = this.#script(request);
    switch (reply.kind) {
      case 'json':
        if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
        return;
      case 'sse':
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream' });
        for (const piece of reply.pieces) {
          if (res.destroyed) return;
          // Like a real server, wait for the socket to take more (backpressure).
          if (!res.write(piece)) await drainOrClose(res);
          if (reply.pauseMs) await new Promise((resolve) => setTimeout(resolve, reply.pauseMs));
        }
        if (reply.destroyAfter) res.socket?.destroy();
        else if (reply.endAfter !== false) res.end();
        return;
      case 'hang':
        return;
      case 'destroy':
        res.socket?.destroy();
        return;
    }
  }
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

let chunkCounter = 0;
/** One `chat.completion.chunk` as OpenAI shapes it. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `chatcmpl-scripted${chunkCounter++}`,
    object: 'chat.completion.chunk',
    created: 1_760_000_000,
    model: 'upstream-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...extra,
  };
}

export function usageChunk(prompt: number, completion: number): Record<string, unknown> {
  return { id: 'chatcmpl-scripted-usage', object: 'chat.completion.chunk', created: 1_760_000_000, model: 'upstream-model', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
}

export function sse(chunks: unknown[], done = true): string[] {
  const pieces = chunks.map((value) => `data: ${JSON.stringify(value)}\n\n`);
  if (done) pieces.push('data: [DONE]\n\n');
  return pieces;
}

export function textCompletion(text: string): UpstreamReply {
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-scripted',
      object: 'chat.completion',
      created: 1_760_000_000,
      model: 'upstream-model',
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    },
  };
}

/** Answers streaming requests with `streamed` and the others with a completion. */
/** The model answers `text` a character at a time, `pauseMs` apart: streamed as SSE, or as one JSON answer after as long. */
export function slowText(text: string, pauseMs: number): (request: RecordedRequest) => UpstreamReply {
  return (request) =>
    !request.body?.stream
      ? { ...(textCompletion(text) as Extract<UpstreamReply, { kind: 'json' }>), delayMs: pauseMs * text.length }
      : { kind: 'sse', pauseMs, pieces: sse([chunk({ role: 'assistant', content: '' }), ...[...text].map((char) => chunk({ content: char })), chunk({}, 'stop'), usageChunk(5, text.length)]) };
}

export function textReply(text: string): (request: RecordedRequest) => UpstreamReply {
  return (request) =>
    request.body?.stream
      ? { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...[...text].map((char) => chunk({ content: char })), chunk({}, 'stop'), usageChunk(5, text.length)]) }
      : textCompletion(text);
}

export function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/chat-completions/${name}`, import.meta.url), 'utf8');
}
