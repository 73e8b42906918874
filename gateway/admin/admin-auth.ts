import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { consumeOrRefuse, type Limiter } from '../../identity/limit-refusal';
import { ApiError } from '../../lib/api-error';
import { bearerToken, secretDigest } from '../../lib/bearer-token';
import type { AdminToken } from '../config';
import { adminState } from './admin-state';

const ADMIN_CHALLENGE = 'Bearer realm="animal-store-admin"';
/** Wrong tokens one client may send per window before it is refused without a look at its token. */
export const MAX_ADMIN_TOKEN_FAILURES = 10;
export const ADMIN_FAILURE_WINDOW_SECONDS = 15 * 60;

export interface AdminAuthOptions {
  tokens: readonly AdminToken[];
  /** Counts wrong tokens per client (`MAX_ADMIN_TOKEN_FAILURES` points per `ADMIN_FAILURE_WINDOW_SECONDS`); in Redis when processes share it. */
  failures: Pick<Limiter, 'consume' | 'reward'>;
  /** What a client is counted by (client-ip.ts `clientKey`). */
  clientKey: (req: IncomingMessage) => string;
}

const unauthorized = (message: string) => new ApiError('unauthorized', message, { headers: { 'WWW-Authenticate': ADMIN_CHALLENGE } });

/**
 * `Authorization: Bearer <one of ADMIN_TOKEN's tokens>` or 401. Each presented token takes one
 * of its client's failure points before it is compared (so parallel guesses cannot slip past the
 * count) and gives it back when it was right; a client without points left gets 429 at once.
 * Who was let in (`admin:<label>`) is left for the audit trail.
 */
export function requireAdminToken({ tokens, failures, clientKey }: AdminAuthOptions): RequestHandler {
  if (tokens.length === 0) throw new Error('requireAdminToken: at least one token is needed');
  const known = tokens.map(({ label, token }) => ({ label, digest: secretDigest(token) }));

  /** The label of the presented token; every token is compared, so the time does not say which one matched. */
  function labelOf(presented: string): string | undefined {
    const presentedDigest = secretDigest(presented);
    let label: string | undefined;
    for (const entry of known) if (timingSafeEqual(presentedDigest, entry.digest)) label ??= entry.label;
    return label;
  }

  return async function requireAdminToken(req, res, next) {
    const presented = bearerToken(req.headers.authorization);
    // Without a token nothing is guessed, so nothing is counted.
    if (presented === undefined) throw unauthorized('The admin API requires "Authorization: Bearer <ADMIN_TOKEN>".');
    const client = clientKey(req);
    await consumeOrRefuse(failures, client, (wait) => `Too many wrong admin tokens from your address. Try again in ${wait}.`);
    const label = labelOf(presented);
    if (label === undefined) throw unauthorized('This admin token is not valid.');
    await failures.reward(client);
    adminState(res).actor = `admin:${label}`;
    next();
  };
}
