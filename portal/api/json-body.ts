import type { RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';
import { quotedInMessage } from '../../lib/plain-text';
import { readJsonBody } from '../../lib/read-json-body';

/**
 * Strict JSON bodies with the same rules and messages as the public API (lib/read-json-body):
 * `Content-Type: application/json` or 400 `invalid_content_type`, malformed JSON → 400
 * `invalid_json`, more than `limitBytes` → 413 `payload_too_large`. Leaves the parsed value in `req.body`.
 */
export function jsonBody(options: { limitBytes: number }): RequestHandler {
  const { limitBytes } = options;
  if (!Number.isInteger(limitBytes) || limitBytes < 1) throw new Error('jsonBody: limitBytes must be a positive integer');
  return function jsonBody(req, _res, next) {
    readJsonBody(req, limitBytes).then(({ value }) => {
      req.body = value;
      next();
    }, next);
  };
}

/** The body as an object with only `allowed` fields, or 400 `invalid_request` naming the first stray field. */
export function readFields<F extends string>(body: unknown, allowed: readonly F[]): Partial<Record<F, unknown>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_request', 'Request body must be a JSON object.');
  }
  for (const field of Object.keys(body)) {
    if (!(allowed as readonly string[]).includes(field)) {
      throw new ApiError('invalid_request', `Unknown field "${quotedInMessage(field)}"; allowed fields: ${allowed.join(', ')}.`);
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
