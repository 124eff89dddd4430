import type { ResponseResource } from './response-resource.ts';

/**
 * A finished response's JSON, made once and shared: the store writes it and
 * the JSON reply sends the same string, where each used to serialize the
 * response again (a kilobyte and more per response, on every request).
 *
 * The string rides on the response itself, under a symbol and not
 * enumerable: `JSON.stringify`, spreads, `structuredClone` and key walks
 * never see it, so a copy never carries its original's JSON. (Not a
 * `WeakMap` beside the responses: every young-generation collection would
 * have to walk its entries, one per response in flight.)
 *
 * It stands for the object as it was when serialized. Whoever changes a
 * response after that says so with `forgetResponseJson`, so the next reader
 * serializes it afresh.
 */
const JSON_MADE = Symbol('loopgate.responseJson');

type WithJson = ResponseResource & { [JSON_MADE]?: string | undefined };

/** Serializes the response now (it may have changed since an earlier call) and keeps the result for `responseJson`. */
export function serializeResponse(response: ResponseResource): string {
  const json = JSON.stringify(response);
  Object.defineProperty(response, JSON_MADE, { value: json, writable: true, configurable: true, enumerable: false });
  return json;
}

/** The response's JSON: the one made last for this object, or a new one. */
export function responseJson(response: ResponseResource): string {
  return (response as WithJson)[JSON_MADE] ?? JSON.stringify(response);
}

/** The response changed after it was serialized: its kept JSON is stale. */
export function forgetResponseJson(response: ResponseResource): void {
  if (JSON_MADE in response) (response as WithJson)[JSON_MADE] = undefined;
}
