import Fastify from 'fastify';
import { Pool } from 'undici';

/**
 * The smallest proxy this stack allows: one Fastify route forwarding a fixed
 * body to the upstream through an undici pool and returning its JSON. It
 * shows what HTTP in and out costs on this machine, so the gateway's ratio
 * can be read against what any Fastify + undici proxy would reach here.
 * Prints its port on stdout.
 */
const pool = new Pool(`http://127.0.0.1:${process.env.UPSTREAM_PORT}`, { connections: 256 });
const app = Fastify({ logger: false });
const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Hello' }], stream: false });
app.post('/v1/responses', async () => {
  const response = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
  return await response.body.json();
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
