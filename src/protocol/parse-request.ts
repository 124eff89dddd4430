import type { z } from 'zod';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';
import { findTooDeep } from './json-depth.ts';
import { REQUEST_LIMITS } from './request-limits.ts';

type Issue = z.core.$ZodIssue;
type PathKey = PropertyKey;

/** Parses `body` with `schema`, or throws a 400 whose `param` names the offending field. */
export function parseRequest<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  if (body === undefined) throw invalidRequest('The request body is empty; send a JSON object.', null, 'invalid_json');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object.', null, 'invalid_type');
  }
  const tooDeep = findTooDeep(body, REQUEST_LIMITS.maxJsonDepth);
  if (tooDeep) {
    // The deepest field's path is itself over a hundred levels long: its start says where, an ellipsis that it goes on.
    const param = shorten(formatParam(tooDeep) ?? '');
    throw invalidRequest(`The request nests objects and arrays more than ${REQUEST_LIMITS.maxJsonDepth} levels deep, at '${param}'.`, param, 'nesting_too_deep');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw toGatewayError(result.error.issues, body);
}

function toGatewayError(issues: readonly Issue[], body: unknown): GatewayError {
  const { issue, path } = mostSpecific(issues, []);
  if (issue.code === 'unrecognized_keys') {
    const param = formatParam([...path, issue.keys[0]!]);
    return invalidRequest(`Unknown parameter: '${param}'.`, param, 'unknown_parameter');
  }
  const unsupportedKind = unsupportedDiscriminator(issue, path, body);
  if (unsupportedKind) return unsupportedKind;
  const param = formatParam(path);
  const value = valueAt(body, path);
  const overLimit = aboveMaxLength(issue, param, value);
  if (overLimit) return overLimit;
  if (issue.code === 'custom' && issue.params?.code === 'unsupported_parameter') return invalidRequest(`'${param}' is not supported by this gateway: ${issue.message}.`, param, 'unsupported_parameter');
  if (issue.code === 'custom' && typeof issue.params?.code === 'string') return invalidRequest(`Invalid '${param}': ${issue.message}.`, param, issue.params.code);
  const where = param ? `'${param}'` : 'the request body';
  const code = value === undefined ? 'missing_required_parameter' : 'invalid_value';
  const message = code === 'missing_required_parameter' ? `Missing required parameter: ${where}.` : `Invalid value for ${where}: ${describe(issue, value)}`;
  return invalidRequest(message, param, code);
}

/**
 * A union failure carries one list of issues per branch. The branch that got
 * furthest into the value (the deepest path) is the one the client meant, so
 * its issue names the parameter.
 */
function mostSpecific(issues: readonly Issue[], prefix: PathKey[]): { issue: Issue; path: PathKey[] } {
  let best: { issue: Issue; path: PathKey[] } | undefined;
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    let candidate = { issue, path };
    if (issue.code === 'invalid_union') {
      const branches = issue.errors.filter((branch) => branch.length > 0);
      if (branches.length > 0) {
        const inner = branches.map((branch) => mostSpecific(branch, path));
        candidate = inner.reduce((a, b) => (b.path.length > a.path.length ? b : a));
        if (candidate.path.length === path.length) {
          // No branch got inside the value: the one whose type it has (an array too long, not "expected string") speaks, if exactly one does.
          const ofItsType = inner.filter((branch) => branch.path.length === path.length && branch.issue.code !== 'invalid_type');
          candidate = ofItsType.length === 1 ? ofItsType[0]! : { issue, path };
        }
      }
    }
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  return best ?? { issue: issues[0]!, path: prefix };
}

function valueAt(root: unknown, path: readonly PathKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

export function formatParam(path: readonly PathKey[]): string | null {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || null;
}

/**
 * A tool or item whose `type` (or message `role`) the gateway does not
 * implement: a 400 that names the value and says it is unsupported, on the
 * discriminator itself (`tools[2].type`).
 */
function unsupportedDiscriminator(issue: Issue, path: readonly PathKey[], body: unknown): GatewayError | null {
  if (issue.code !== 'invalid_union' || !('discriminator' in issue) || !issue.discriminator) return null;
  const key = String(issue.discriminator);
  // zod puts the discriminator at the end of the path already.
  const at = path.at(-1) === key ? path : [...path, key];
  const value = valueAt(body, at);
  if (typeof value !== 'string') return null;
  const param = formatParam(at);
  return invalidRequest(`Unsupported ${key} '${value.length > 64 ? `${value.slice(0, 64)}…` : value}' at '${param}': this gateway does not implement it.`, param, 'unsupported_type');
}

/** A string or array over its bound (request-limits.ts), in OpenAI's words and codes. */
function aboveMaxLength(issue: Issue, param: string | null, value: unknown): GatewayError | null {
  if (issue.code !== 'too_big' || (issue.origin !== 'string' && issue.origin !== 'array')) return null;
  const length = typeof value === 'string' || Array.isArray(value) ? value.length : '?';
  const [what, article] = issue.origin === 'string' ? ['string', 'a'] : ['array', 'an'];
  return invalidRequest(
    `Invalid '${param ?? 'body'}': ${what} too long. Expected ${article} ${what} with maximum length ${String(issue.maximum)}, but got ${article} ${what} with length ${length} instead.`,
    param,
    `${what}_above_max_length`,
  );
}

function describe(issue: Issue, value: unknown): string {
  // A query parameter is text, read as a number: "received NaN" says less than the text itself.
  if (issue.code === 'invalid_type' && issue.expected === 'number' && typeof value === 'string') return `expected a number, got ${JSON.stringify(value)}.`;
  if (issue.code === 'invalid_union') {
    if ('discriminator' in issue && issue.discriminator) return `unsupported ${String(issue.discriminator)}.`;
    return 'does not match any accepted shape.';
  }
  // A number outside its range, said as OpenAI says it ("Expected a value <= 2, but got 9 instead").
  if ((issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'number') {
    const bound = issue.code === 'too_big' ? `${issue.inclusive === false ? '<' : '<='} ${String(issue.maximum)}` : `${issue.inclusive === false ? '>' : '>='} ${String(issue.minimum)}`;
    return `expected a value ${bound}, but got ${JSON.stringify(value)} instead.`;
  }
  if (issue.code === 'invalid_value') return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}.`;
  return `${issue.message}.`;
}

/** A parameter path of at most about 120 characters: whole segments from its start, then an ellipsis. */
function shorten(param: string): string {
  if (param.length <= 120) return param;
  const cut = Math.max(param.lastIndexOf('.', 118), param.lastIndexOf('[', 118));
  return `${param.slice(0, cut > 0 ? cut : 118)}…`;
}
