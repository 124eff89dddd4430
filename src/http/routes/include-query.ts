/**
 * `include` as clients put it in a query string: `include[]=a&include[]=b`
 * (openai-node), `include=a&include=b`, or once (a plain string). Gathered
 * into one array under `include` before validation, so a refusal names
 * `include[N]` and judges the value the client sent.
 */
export function gatherInclude(query: unknown): Record<string, unknown> {
  const { include, 'include[]': bracketed, ...rest } = (query ?? {}) as Record<string, unknown>;
  const values = [include, bracketed].flatMap((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]));
  return values.length === 0 ? rest : { ...rest, include: values };
}
