import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The page's files, served as they are: no build step, no framework. */
const PAGE_FILES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'inspector.js': 'text/javascript; charset=utf-8',
  'sse-events.js': 'text/javascript; charset=utf-8',
  'inspector.css': 'text/css; charset=utf-8',
};

/** The page loads only its own files and talks only to this origin; nothing may frame it. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * `GET /inspector/`: the inspector page. It loads without a key (it holds no
 * data); everything it shows comes from the /v1/inspector endpoints, which
 * need one.
 */
export function registerInspectorPage(app: FastifyInstance): void {
  const files = new Map(Object.entries(PAGE_FILES).map(([name, type]) => [name, { type, body: readFileSync(new URL(`../inspector/page/${name}`, import.meta.url)) }]));
  const serve = (name: string, reply: FastifyReply) => {
    const file = files.get(name);
    if (!file) return reply.callNotFound();
    return reply.headers(PAGE_HEADERS).type(file.type).send(file.body);
  };

  // Relative links in the page resolve against the directory, so the bare path redirects to it.
  app.get('/inspector', QUIET, async (_request, reply) => reply.redirect('/inspector/'));
  app.get('/inspector/', QUIET, async (_request, reply) => serve('index.html', reply));
  app.get<{ Params: { file: string } }>('/inspector/:file', QUIET, async (request, reply) => serve(request.params.file, reply));
}

const QUIET = { logLevel: 'warn' as const };
