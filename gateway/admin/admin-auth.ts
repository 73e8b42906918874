import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { refusedFor, type Limiter } from '../../identity/limit-refusal';
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
  failures: Pick<Limiter, 'get' | 'penalty'>;
  /** What a client is counted by (client-ip.ts `clientKey`). */
  clientKey: (req: IncomingMessage) => string;
}

const unauthorized = (message: string) => new ApiError('unauthorized', message, { headers: { 'WWW-Authenticate': ADMIN_CHALLENGE } });

/**
 * `Authorization: Bearer <one of ADMIN_TOKEN's tokens>` or 401. A client's checks run one at a
 * time in this process, each reading the client's count before it compares: a client with no
 * points left gets 429 without a look at its token, a wrong token adds one, a right one nothing.
 * So parallel guesses cannot slip past the count, and right tokens never fill it.
 * Who was let in (`admin:<label>`) is left for the audit trail.
 */
export function requireAdminToken({ tokens, failures, clientKey }: AdminAuthOptions): RequestHandler {
  if (tokens.length === 0) throw new Error('requireAdminToken: at least one token is needed');
  const known = tokens.map(({ label, token }) => ({ label, digest: secretDigest(token) }));
  /** Per client, the end of its last check in this process; gone once it has none in flight. */
  const lastCheck = new Map<string, Promise<void>>();

  /** The label of the presented token; every token is compared, so the time does not say which one matched. */
  function labelOf(presented: string): string | undefined {
    const presentedDigest = secretDigest(presented);
    let label: string | undefined;
    for (const entry of known) if (timingSafeEqual(presentedDigest, entry.digest)) label ??= entry.label;
    return label;
  }

  async function check(client: string, presented: string): Promise<string> {
    const count = await failures.get(client);
    if (count !== null && count.remainingPoints === 0) throw refusedFor(count, (wait) => `Too many wrong admin tokens from your address. Try again in ${wait}.`);
    const label = labelOf(presented);
    if (label !== undefined) return label;
    await failures.penalty(client);
    throw unauthorized('This admin token is not valid.');
  }

  /** Runs the client's check once its previous one in this process has settled. */
  function inTurn(client: string, presented: string): Promise<string> {
    const result = (lastCheck.get(client) ?? Promise.resolve()).then(() => check(client, presented));
    const forget = () => {
      if (lastCheck.get(client) === settled) lastCheck.delete(client);
    };
    const settled: Promise<void> = result.then(forget, forget);
    lastCheck.set(client, settled);
    return result;
  }

  return async function requireAdminToken(req, res, next) {
    const presented = bearerToken(req.headers.authorization);
    // Without a token nothing is guessed, so nothing is counted.
    if (presented === undefined) throw unauthorized('The admin API requires "Authorization: Bearer <ADMIN_TOKEN>".');
    adminState(res).actor = `admin:${await inTurn(clientKey(req), presented)}`;
    next();
  };
}
