/**
 * The one error type of the product. Every Error body a client sees — from the gateway,
 * the pet store or the portal API — is rendered from an ApiError by `renderError`.
 */

/** Closed catalogue: code → HTTP status. Codes are stable and documented in the OpenAPI documents. */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_content_type: 400,
  weak_password: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  expectation_failed: 417,
  rate_limited: 429,
  quota_exceeded: 429,
  headers_too_large: 431,
  internal_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  gateway_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers that belong to this error (Allow, Retry-After, WWW-Authenticate). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/**
 * Anything thrown that is not an ApiError is a bug — the client learns nothing about it —
 * except the client errors that Node, Express and body-parser mark with a 4xx `status`
 * (a malformed %-escape, an oversized body): those are the client's, and say so.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const status = (err as { status?: unknown } | null)?.status;
  if (status === 413) return new ApiError('payload_too_large', 'The request body is too large.', { cause: err });
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError('invalid_request', 'The request could not be understood.', { cause: err });
  }
  return new ApiError('internal_error', 'An unexpected error occurred.', { cause: err });
}

/**
 * The code of `text` when it is an Error body for `status` (a known code of that status, a
 * message, and the status itself), else undefined.
 */
export function errorBodyCode(text: string, status: number): ErrorCode | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message, status: stated } = value as Record<string, unknown>;
  const known = typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code) && ERROR_STATUS[code as ErrorCode] === status && typeof message === 'string' && stated === status;
  return known ? (code as ErrorCode) : undefined;
}

/** The first code of a status (400: `invalid_request`), for an error known only by its status. */
export function errorCodeFor(status: number): ErrorCode | undefined {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).find((code) => ERROR_STATUS[code] === status);
}
