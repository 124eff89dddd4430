import { describe, expect, it } from 'vitest';
import { mergeOpenApi, type OpenApiDocument } from '../../src/http/openapi-document.ts';

const official = (): OpenApiDocument => ({
  openapi: '3.1.0',
  info: { title: 'Open Responses', version: '2026-04-24' },
  paths: { '/responses': { post: { operationId: 'createResponse' } } },
  components: { schemas: { ResponseResource: { type: 'object', properties: { id: { type: 'string' } } } } },
});

const extensions = (extra: Partial<OpenApiDocument> = {}): OpenApiDocument => ({
  openapi: '3.1.0',
  info: { title: 'ext', version: '1' },
  paths: { '/metrics': { servers: [{ url: '/' }], get: { operationId: 'metrics' } }, '/responses': { get: { operationId: 'listResponses' } } },
  components: { schemas: { Extra: { type: 'object', 'x-loopgate-extends': 'ResponseResource', properties: { 'loopgate:note': { type: 'string' } } } } },
  ...extra,
});

describe('mergeOpenApi', () => {
  it('adds paths, operations, components and extended fields, each marked, and leaves the official parts unmarked', () => {
    const merged = mergeOpenApi(official(), extensions(), { version: '9.9.9', metricsPath: '/metrics' });
    expect(merged.info).toMatchObject({ title: 'loopgate', version: '9.9.9', 'x-openresponses-version': '2026-04-24' });
    expect(merged.paths['/responses']).toEqual({ post: { operationId: 'createResponse' }, get: { operationId: 'listResponses', 'x-loopgate-extension': true } });
    expect(merged.paths['/metrics']).toEqual({ servers: [{ url: '/' }], get: { operationId: 'metrics', 'x-loopgate-extension': true }, 'x-loopgate-extension': true });
    expect(merged.components.schemas!.ResponseResource!.properties).toEqual({ id: { type: 'string' }, 'loopgate:note': { type: 'string', 'x-loopgate-extension': true } });
    expect(merged.components.schemas!.Extra).toMatchObject({ 'x-loopgate-extension': true });
  });

  it('puts /metrics at the configured path, or leaves it out when metrics are off', () => {
    expect(Object.keys(mergeOpenApi(official(), extensions(), { version: '1', metricsPath: '/internal/metrics' }).paths)).toEqual(['/responses', '/internal/metrics']);
    expect(Object.keys(mergeOpenApi(official(), extensions(), { version: '1', metricsPath: null }).paths)).toEqual(['/responses']);
  });

  it('refuses a name both documents define, and an extension of a schema that does not exist', () => {
    const surface = { version: '1', metricsPath: null };
    expect(() => mergeOpenApi(official(), extensions({ paths: { '/responses': { post: {} } } }), surface)).toThrow('/responses post is defined by both documents');
    expect(() => mergeOpenApi(official(), extensions({ components: { schemas: { ResponseResource: {} } } }), surface)).toThrow('components.schemas.ResponseResource');
    expect(() => mergeOpenApi(official(), extensions({ components: { schemas: { Extra: { 'x-loopgate-extends': 'Nope', properties: {} } } } }), surface)).toThrow('Extra extends Nope');
    expect(() => mergeOpenApi(official(), extensions({ components: { schemas: { Extra: { 'x-loopgate-extends': 'ResponseResource', properties: { id: {} } } } } }), surface)).toThrow('ResponseResource.id');
  });
});
