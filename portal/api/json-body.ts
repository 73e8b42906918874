import express, { type RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';

/** body-parser reports problems as errors with a `type`; each becomes a coded ApiError. */
function toBodyError(err: unknown, limitBytes: number): ApiError {
  const type = (err as { type?: unknown }).type;
  switch (type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', `Request body must be at most ${limitBytes} bytes.`, { cause: err });
    case 'entity.parse.failed':
      return new ApiError('invalid_json', 'Request body is not valid JSON.', { cause: err });
    case 'charset.unsupported':
      return new ApiError('invalid_content_type', 'Request body must be encoded as UTF-8.', { cause: err });
    case 'encoding.unsupported':
      return new ApiError('invalid_request', 'Content-Encoding must be identity, gzip, deflate or br.', { cause: err });
    case 'request.aborted':
    case 'request.size.invalid':
      return new ApiError('invalid_request', 'Request body was incomplete.', { cause: err });
    default:
      return err instanceof ApiError ? err : new ApiError('internal_error', 'An unexpected error occurred.', { cause: err });
  }
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Strict JSON bodies: `Content-Type: application/json` or 400 `invalid_content_type`,
 * malformed JSON → 400 `invalid_json`, more than `limitBytes` → 413 `payload_too_large`.
 * Leaves the parsed value (any JSON value) in `req.body`.
 */
export function jsonBody(options: { limitBytes: number }): RequestHandler {
  const { limitBytes } = options;
  if (!Number.isInteger(limitBytes) || limitBytes < 1) throw new Error('jsonBody: limitBytes must be a positive integer');
  const parse = express.json({ limit: limitBytes, strict: false, type: () => true });
  return function jsonBody(req, res, next) {
    if (mediaType(req.headers['content-type']) !== 'application/json') {
      next(new ApiError('invalid_content_type', 'Content-Type must be application/json.'));
      return;
    }
    parse(req, res, (err?: unknown) => next(err ? toBodyError(err, limitBytes) : undefined));
  };
}

const MAX_FIELD_NAME_IN_MESSAGE = 40;

/** The body as an object with only `allowed` fields, or 400 `invalid_request` naming the first stray field. */
export function readFields<F extends string>(body: unknown, allowed: readonly F[]): Partial<Record<F, unknown>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_request', 'Request body must be a JSON object.');
  }
  for (const field of Object.keys(body)) {
    if (!(allowed as readonly string[]).includes(field)) {
      const shown = field.length > MAX_FIELD_NAME_IN_MESSAGE ? `${field.slice(0, MAX_FIELD_NAME_IN_MESSAGE)}…` : field;
      throw new ApiError('invalid_request', `Unknown field "${shown}"; allowed fields: ${allowed.join(', ')}.`);
    }
  }
  return body as Partial<Record<F, unknown>>;
}

export function requiredString(fields: Partial<Record<string, unknown>>, name: string): string {
  const value = fields[name];
  if (typeof value !== 'string') throw new ApiError('invalid_request', `${name} is required and must be a string.`);
  return value;
}

export function optionalString(fields: Partial<Record<string, unknown>>, name: string): string | undefined {
  const value = fields[name];
  if (value !== undefined && typeof value !== 'string') throw new ApiError('invalid_request', `${name} must be a string.`);
  return value;
}

export function optionalNumberOrNull(fields: Partial<Record<string, unknown>>, name: string): number | null | undefined {
  const value = fields[name];
  if (value !== undefined && value !== null && typeof value !== 'number') throw new ApiError('invalid_request', `${name} must be a number.`);
  return value;
}
