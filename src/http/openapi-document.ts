import { readFileSync } from 'node:fs';

/** The marker on everything the official OpenResponses schema does not define. */
export const EXTENSION_MARK = 'x-loopgate-extension';

type JsonObject = Record<string, unknown>;

export interface OpenApiDocument extends JsonObject {
  openapi: string;
  info: JsonObject;
  paths: Record<string, JsonObject>;
  components: Record<string, Record<string, JsonObject>>;
}

export interface GatewaySurface {
  version: string;
  /** Where `/metrics` is served on the main port (null: metrics are off). */
  metricsPath: string | null;
}

const OPERATIONS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * The gateway's whole surface as one OpenAPI document: the official
 * OpenResponses schema with loopgate's additions merged in — new paths and
 * operations, new components, and fields added to official schemas (those
 * an extension schema names in `x-loopgate-extends`) — each of them marked
 * `x-loopgate-extension: true`. A name both documents define is a bug in
 * `openapi/`, and throws.
 */
export function mergeOpenApi(official: OpenApiDocument, extensions: OpenApiDocument, surface: GatewaySurface): OpenApiDocument {
  const document = structuredClone(official);
  document.info = {
    title: 'loopgate',
    version: surface.version,
    description: `The OpenResponses API (version ${String(official.info.version)}) as loopgate serves it, with what loopgate adds marked \`${EXTENSION_MARK}: true\`.`,
    'x-openresponses-version': official.info.version,
  };
  // Relative to where this document is served: the API under /v1, operational endpoints at the root (their own `servers`).
  document.servers = [{ url: '/v1' }];

  for (const [path, item] of Object.entries(structuredClone(extensions.paths))) {
    const target = document.paths[path];
    if (!target) {
      document.paths[path] = markPathItem(item);
      continue;
    }
    for (const [key, value] of Object.entries(item)) {
      if (key in target) throw new Error(`openapi: ${path} ${key} is defined by both documents`);
      target[key] = OPERATIONS.has(key) ? mark(value as JsonObject) : value;
    }
  }

  for (const [section, entries] of Object.entries(structuredClone(extensions.components))) {
    const into = (document.components[section] ??= {});
    for (const [name, entry] of Object.entries(entries)) {
      if (name in into) throw new Error(`openapi: components.${section}.${name} is defined by both documents`);
      into[name] = mark(entry);
    }
  }

  for (const [name, schema] of Object.entries(extensions.components.schemas ?? {})) {
    const extended = schema['x-loopgate-extends'];
    if (typeof extended !== 'string') continue;
    const target = document.components.schemas?.[extended];
    if (!target || typeof target.properties !== 'object' || target.properties === null) throw new Error(`openapi: ${name} extends ${extended}, which has no properties to extend`);
    const properties = target.properties as Record<string, JsonObject>;
    for (const [field, definition] of Object.entries(structuredClone((schema.properties ?? {}) as Record<string, JsonObject>))) {
      if (field in properties) throw new Error(`openapi: ${extended}.${field} is defined by both documents`);
      properties[field] = mark(definition);
    }
  }

  placeMetrics(document, surface.metricsPath);
  return document;
}

/** `/metrics` where this gateway serves it, or nowhere when metrics are off. */
function placeMetrics(document: OpenApiDocument, metricsPath: string | null): void {
  const item = document.paths['/metrics'];
  if (!item) return;
  delete document.paths['/metrics'];
  if (metricsPath !== null) document.paths[metricsPath] = item;
}

function markPathItem(item: JsonObject): JsonObject {
  const marked = mark(item);
  for (const [key, value] of Object.entries(marked)) if (OPERATIONS.has(key)) marked[key] = mark(value as JsonObject);
  return marked;
}

function mark<T extends JsonObject>(value: T): T {
  return { ...value, [EXTENSION_MARK]: true };
}

/** The document this gateway serves, from the two files in `openapi/`. */
export function gatewayOpenApi(surface: GatewaySurface): OpenApiDocument {
  const read = (name: string) => JSON.parse(readFileSync(new URL(`../../openapi/${name}`, import.meta.url), 'utf8')) as OpenApiDocument;
  return mergeOpenApi(read('openresponses.json'), read('loopgate-extensions.json'), surface);
}
