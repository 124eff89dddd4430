import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));
const official = read('openapi/openresponses.json');
const extensions = read('openapi/loopgate-extensions.json');
const OPERATIONS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every `$ref` inside `value`, with where it was found. */
function refsIn(value: unknown, at = '#'): { ref: string; at: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsIn(item, `${at}/${index}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => (key === '$ref' && typeof inner === 'string' ? [{ ref: inner, at }] : refsIn(inner, `${at}/${key}`)));
}

function resolve(document: unknown, pointer: string): unknown {
  return pointer
    .slice(2)
    .split('/')
    .reduce<unknown>((node, segment) => (node as Record<string, unknown> | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

/** `GET /version` and `GET /openapi.json`: what the gateway is, and its whole surface. */
describe('discovery', () => {
  const upstream = new ScriptedChatUpstream(textReply('Hello'));
  let gateway: RunningGateway;
  let document: any;

  beforeAll(async () => {
    // Read once per process, on the first /version: set before it.
    process.env.LOOPGATE_BUILD = 'build-test-4f2a';
    gateway = await startGateway(await upstream.start(), { auth: { apiKeys: [{ key: 'sk-discovery-0123', tenant: 'a' }] } });
    const response = await fetch(`${gateway.origin}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = await response.json();
  });
  afterAll(async () => {
    delete process.env.LOOPGATE_BUILD;
    await gateway.close();
    await upstream.close();
  });

  it('GET /version: the package version, the build, and Node — without an API key', async () => {
    const response = await fetch(`${gateway.origin}/version`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ version: read('package.json').version, build: 'build-test-4f2a', node: process.version });
  });

  it('GET /openapi.json: an OpenAPI 3.1 document holding every official path and schema unchanged, unmarked', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ title: 'loopgate', version: read('package.json').version, 'x-openresponses-version': official.info.version });
    for (const [path, item] of Object.entries<any>(official.paths)) {
      for (const [key, value] of Object.entries(item)) expect(document.paths[path][key], `${path} ${key}`).toEqual(value);
      expect(document.paths[path]['x-loopgate-extension']).toBeUndefined();
    }
    for (const [name, schema] of Object.entries<any>(official.components.schemas)) {
      if (name === 'ResponseResource' || name === 'CreateResponseBody') continue;
      expect(document.components.schemas[name], name).toEqual(schema);
    }
  });

  it('everything loopgate adds is there and marked x-loopgate-extension: paths, operations, schemas, and the loopgate: fields of official schemas', () => {
    const added = Object.keys(extensions.paths);
    expect(added).toEqual(expect.arrayContaining(['/responses/input_tokens', '/responses/{response_id}', '/conversations', '/models', '/models/{model}', '/healthz', '/readyz', '/version', '/openapi.json', '/metrics']));
    for (const path of added) {
      const item = document.paths[path];
      expect(item['x-loopgate-extension'], path).toBe(true);
      for (const operation of OPERATIONS.filter((name) => name in item)) expect(item[operation]['x-loopgate-extension'], `${path} ${operation}`).toBe(true);
    }
    // Operational endpoints live at the root, the API under /v1.
    expect(document.servers).toEqual([{ url: '/v1' }]);
    for (const path of ['/healthz', '/readyz', '/version', '/openapi.json', '/metrics']) expect(document.paths[path].servers).toEqual([{ url: '/' }]);
    for (const name of Object.keys(extensions.components.schemas)) expect(document.components.schemas[name]['x-loopgate-extension'], name).toBe(true);
    for (const field of ['loopgate:omitted_tools', 'loopgate:truncation', 'loopgate:loop']) {
      expect(document.components.schemas.ResponseResource.properties[field]).toMatchObject({ 'x-loopgate-extension': true });
    }
    expect(document.components.schemas.CreateResponseBody.properties['loopgate:loop']).toMatchObject({ 'x-loopgate-extension': true, $ref: '#/components/schemas/LoopControls' });
    // Every loopgate: field of an official schema is marked (loopgate's own schemas are marked whole).
    const officialSchemas = Object.entries<any>(document.components.schemas).filter(([, schema]) => schema['x-loopgate-extension'] !== true);
    const loopgateNames = officialSchemas.flatMap(([name, schema]) => Object.keys(schema.properties ?? {}).filter((field) => field.startsWith('loopgate:')).map((field) => ({ name, field })));
    expect(loopgateNames.length).toBeGreaterThan(0);
    for (const { name, field } of loopgateNames) expect(document.components.schemas[name].properties[field]['x-loopgate-extension'], `${name}.${field}`).toBe(true);
  });

  it('every $ref resolves, and the merged schemas validate what the gateway really answers, loopgate: fields included', async () => {
    for (const { ref, at } of refsIn(document)) {
      expect(ref.startsWith('#/'), at).toBe(true);
      expect(resolve(document, ref), `${ref} (at ${at})`).toBeDefined();
    }
    const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: false });
    (addFormatsModule as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema({ $id: 'gateway', components: document.components });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'sk-discovery-0123', maxRetries: 0 });
    // A hosted tool no upstream runs: the response says so in loopgate:omitted_tools.
    const response = await client.responses.create({ model: 'm', input: 'hi', tools: [{ type: 'web_search' }] });
    expect(response).toHaveProperty(['loopgate:omitted_tools'], ['web_search']);
    const validResponse = ajv.compile({ $ref: 'gateway#/components/schemas/ResponseResource' });
    expect(validResponse(response), ajv.errorsText(validResponse.errors)).toBe(true);
    expect(validResponse({ ...response, 'loopgate:omitted_tools': 'web_search' })).toBe(false);
    const version = ajv.compile({ $ref: 'gateway#/components/schemas/VersionInfo' });
    expect(version(await (await fetch(`${gateway.origin}/version`)).json())).toBe(true);
    const readiness = ajv.compile({ $ref: 'gateway#/components/schemas/Readiness' });
    expect(readiness(await (await fetch(`${gateway.origin}/readyz`)).json())).toBe(true);
    const models = ajv.compile({ $ref: 'gateway#/components/schemas/ModelList' });
    expect(models(await client.models.list().then((page) => ({ object: 'list', data: page.data })))).toBe(true);
    const model = ajv.compile({ $ref: 'gateway#/components/schemas/Model' });
    expect(model(await client.models.retrieve('upstream-model'))).toBe(true);
    const deleted = ajv.compile({ $ref: 'gateway#/components/schemas/DeletedObject' });
    expect(deleted(await (await fetch(`${gateway.baseURL}/responses/${response.id}`, { method: 'DELETE', headers: { authorization: 'Bearer sk-discovery-0123' } })).json())).toBe(true);
    const envelope = ajv.compile({ $ref: 'gateway#/components/schemas/ErrorEnvelope' });
    expect(envelope(await (await fetch(`${gateway.baseURL}/responses/${response.id}`, { headers: { authorization: 'Bearer sk-discovery-0123' } })).json())).toBe(true);
  });

  it('with metrics on a port of their own, the main port\'s document has no /metrics (it answers 404 there)', async () => {
    const separate = await startGateway(gateway.baseURL, { metrics: { enabled: true, port: 0 } });
    try {
      const own = (await (await fetch(`${separate.origin}/openapi.json`)).json()) as any;
      expect(own.paths['/metrics']).toBeUndefined();
      expect((await fetch(`${separate.origin}/metrics`)).status).toBe(404);
    } finally {
      await separate.close();
    }
  });
});
