import type { TurnUsage } from '../providers/provider.ts';

/**
 * The one error type the gateway raises on purpose. Every layer throws it (or
 * lets the HTTP layer wrap what it does not know), and exactly one place — the
 * Fastify error handler — turns it into the OpenResponses error envelope.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'server_error'
  | 'upstream_error';

export interface GatewayErrorOptions {
  status: number;
  type: ErrorType | string;
  code: string | null;
  message: string;
  param?: string | null;
  /** Extra response headers, e.g. `retry-after` copied from an upstream 429. */
  headers?: Record<string, string>;
  /**
   * The `retry-after` / `retry-after-ms` the upstream itself sent with a
   * refusal, which routing waits for (providers/routing/); `headers` may
   * also hold the gateway's own suggestion to the client, which it does not.
   */
  upstreamRetry?: Readonly<Record<string, string>>;
  /** What the upstream charged for the call that failed all the same (a summary cut short): counted against the caller's usage and limits. */
  billed?: TurnUsage | null;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;
  readonly upstreamRetry: Readonly<Record<string, string>> | null;
  readonly billed: TurnUsage | null;

  constructor(options: GatewayErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = options.status;
    this.type = options.type;
    this.code = options.code;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
    this.upstreamRetry = options.upstreamRetry ?? null;
    this.billed = options.billed ?? null;
  }

  /** Whether a client retrying the same request could succeed. */
  get retryable(): boolean {
    return this.status === 408 || this.status === 409 || this.status === 429 || this.status >= 500;
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function invalidRequest(message: string, param: string | null, code: string | null = 'invalid_value'): GatewayError {
  return new GatewayError({ status: 400, type: 'invalid_request_error', code, message, param });
}

export function notFound(message: string, code: string | null = 'not_found', param: string | null = null): GatewayError {
  return new GatewayError({ status: 404, type: 'invalid_request_error', code, message, param });
}
