import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ApiError } from '../lib/api-error';
import { secretDigest } from '../lib/bearer-token';
import { renderError } from '../lib/render-error';

/** Long enough that guessing it is hopeless: the gateway draws 32 random bytes for its embedded stores. */
export const MIN_GATEWAY_TOKEN_LENGTH = 32;

/**
 * A store behind the gateway must not be a way around it: any process that reaches the store's
 * port could skip the gateway's keys, limits and validation. The store answers only requests that
 * carry its gateway's token as their bearer credential, and refuses the rest with 401. An
 * embedded store gets a token drawn at start; a standalone one, PETSTORE_GATEWAY_TOKEN.
 */
export function requireGatewayToken(token: string): RequestHandler {
  if (token.length < MIN_GATEWAY_TOKEN_LENGTH) throw new RangeError(`the gateway token must have at least ${MIN_GATEWAY_TOKEN_LENGTH} characters`);
  // Digests of both sides: equal lengths for the constant-time comparison, whatever was sent.
  const expected = secretDigest(`Bearer ${token}`);
  return function requireGatewayTokenStep(req, res, next) {
    const given = req.headers.authorization;
    if (given !== undefined && timingSafeEqual(secretDigest(given), expected)) return next();
    renderError(res, new ApiError('unauthorized', 'This pet store answers only its gateway.'));
  };
}
