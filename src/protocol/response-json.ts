import type { ResponseResource } from './response-resource.ts';

/**
 * A finished response's JSON, made once and shared: the store writes it and
 * the JSON reply sends the same string, where each used to serialize the
 * response again (a kilobyte and more per response, on every request).
 *
 * The string stands for the object as it was when serialized. Whoever
 * changes a response after that says so with `forgetResponseJson`, so the
 * next reader serializes it afresh.
 */
const made = new WeakMap<ResponseResource, string>();

/** Serializes the response now (it may have changed since an earlier call) and keeps the result for `responseJson`. */
export function serializeResponse(response: ResponseResource): string {
  const json = JSON.stringify(response);
  made.set(response, json);
  return json;
}

/** The response's JSON: the one made last for this object, or a new one. */
export function responseJson(response: ResponseResource): string {
  return made.get(response) ?? JSON.stringify(response);
}

/** The response changed after it was serialized: its kept JSON is stale. */
export function forgetResponseJson(response: ResponseResource): void {
  made.delete(response);
}
