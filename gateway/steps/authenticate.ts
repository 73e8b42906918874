import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../lib/api-error';
import { bearerToken } from '../../lib/bearer-token';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { Socket } from 'node:net';
import { whenReady, type Environment, type GatewayRequest, type Next, type Step } from '../pipeline/pipeline';
import type { EnvironmentPrefixes } from '../../openapi/environments';
import { applyRateLimit, policyHeader } from '../rate-limit/rate-limit-headers';
import type { RateLimiter } from '../rate-limit/rate-limiter';

export type KeyCheck =
  | { valid: true; keyId: string; accountId: string | number; plan: string }
  | { valid: false; code: 'MALFORMED' | 'NOT_FOUND' | 'REVOKED' | 'EXPIRED' | 'SUSPENDED' | 'WRONG_ENVIRONMENT' };

export interface KeyChecker {
  /** The keyed hash of a well-formed key; null for anything else. */
  hashOf(secret: string): string | null;
  /** Sync when the key is cached, a promise when the store must be asked. */
  check(keyHash: string, environment: Environment): KeyCheck | Promise<KeyCheck>;
}

/** Per-key usage counts (the API key service); called on the hot path, so it must not block. */
export interface UsageRecorder {
  recordUse(keyId: string, deprecated: boolean): void;
}

const CHALLENGE = 'Bearer realm="animal-store"';

/** Why a key was refused, as the client reads it; the prefixes are the document's servers. */
function refusalReasons(prefixes: EnvironmentPrefixes): Readonly<Record<Exclude<KeyCheck, { valid: true }>['code'], string>> {
  return Object.freeze({
    MALFORMED: 'Invalid API key.',
    NOT_FOUND: 'Invalid API key.',
    REVOKED: 'This API key has been revoked.',
    EXPIRED: 'This API key has expired.',
    SUSPENDED: 'The account this API key belongs to is suspended; contact support.',
    WRONG_ENVIRONMENT: `This API key belongs to another environment: production keys work under ${prefixes.production}, staging keys under ${prefixes.staging}.`,
  });
}

function unauthorized(message: string, tokenError = false): ApiError {
  const challenge = tokenError ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE;
  return new ApiError('unauthorized', message, { headers: { 'WWW-Authenticate': challenge } });
}

export interface AuthenticateOptions {
  keys: KeyChecker;
  /** Budget per client IP for requests without a valid key, so guessing keys is slow. */
  anonymousLimiter: RateLimiter;
  /** What the anonymous budget counts a client by (client-ip.ts `clientKey`). */
  clientKey: (req: IncomingMessage) => string;
  metrics: Pick<GatewayMetrics, 'rateLimited'>;
  usage: UsageRecorder;
  /** Each environment's prefix, named when a key is used in the other one. */
  prefixes: EnvironmentPrefixes;
}

/**
 * `Authorization: Bearer <key>` (scheme case-insensitive) or 401; the key's outcome comes back
 * as a result, not an exception. Refusals count against the caller's IP: past its budget, 429.
 */
export function authenticate({ keys, anonymousLimiter, clientKey, metrics, usage, prefixes }: AuthenticateOptions): Step {
  const reasons = refusalReasons(prefixes);
  const anonymousPolicy = policyHeader(anonymousLimiter);
  // A client sends the same key on every request of a keep-alive connection: the header's hash is
  // kept with the connection (and dies with it), so the keyed hash runs once per connection and key.
  const hashedOnConnection = new WeakMap<Socket, { header: string; keyHash: string | null }>();

  /** Records a valid key on the request, or refuses it. */
  const accept = (req: GatewayRequest, next: Next, result: KeyCheck): void | Promise<void> => {
    if (!result.valid) return refuse(req, next, unauthorized(reasons[result.code], true));
    req.ctx.keyId = result.keyId;
    req.ctx.accountId = String(result.accountId);
    req.ctx.plan = result.plan;
    // Here, not in the verifier: route matching ran first, so the operation (deprecated or not) is known.
    usage.recordUse(result.keyId, req.ctx.operation?.deprecated === true);
    next();
  };

  const refuse = (req: GatewayRequest, next: Next, error: ApiError) =>
    whenReady(anonymousLimiter.consume(clientKey(req)), req, next, (refused, done, decision) => {
      if (!decision.allowed) metrics.rateLimited('anonymous');
      applyRateLimit(refused.ctx.headers, anonymousLimiter, anonymousPolicy, decision);
      done(error);
    });

  return function authenticateStep(req, _res, next) {
    const header = req.headers.authorization;
    if (!header) return refuse(req, next, unauthorized('Missing API key: send "Authorization: Bearer <API_KEY>".'));
    let seen = hashedOnConnection.get(req.socket);
    if (seen?.header !== header) {
      const token = bearerToken(header);
      if (token === undefined) return refuse(req, next, unauthorized('The Authorization header must have the form "Bearer <API_KEY>".'));
      seen = { header, keyHash: keys.hashOf(token) };
      hashedOnConnection.set(req.socket, seen);
    }
    if (seen.keyHash === null) return refuse(req, next, unauthorized(reasons.MALFORMED, true));
    return whenReady(keys.check(seen.keyHash, req.ctx.environment), req, next, accept);
  };
}
