import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ident, type Database } from '../db/database';
import { ApiError } from '../lib/api-error';
import { accountSuspended, wrongCredentials } from './account-service';
import { KEYS_SCHEMA } from './migrations';

/** Not `__Host-`: that prefix requires `Path=/`, and the session belongs to /portal only. */
export const SESSION_COOKIE_NAME = 'asg_session';
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
export const SESSION_COOKIE_PATH = '/portal';

const ALGORITHM = 'HS256';
const ISSUER = 'animal-store-portal';
const AUDIENCE = 'animal-store-portal';
const MIN_SECRET_LENGTH = 32;

export interface Session {
  sessionId: string;
  accountId: number;
  expiresAt: Date;
}

export interface StartedSession extends Session {
  /** The signed JWT to put in the cookie. */
  token: string;
}

export interface SessionService {
  /**
   * A new session of an active account. A sign-in that raced a suspension or an erasure answers
   * as one after it: 403 `forbidden` for a suspended account, 401 `unauthorized` for one that is gone.
   */
  start(accountId: number): Promise<StartedSession>;
  /** The live session a token stands for, or null (bad signature, expired, logged out, unknown). */
  resolve(token: string): Promise<Session | null>;
  /** Ends the session behind a token; a no-op for tokens that are not valid. */
  end(token: string): Promise<void>;
  /** Deletes sessions that expired more than a day ago; returns how many. */
  purgeExpired(): Promise<number>;
}

export interface SessionServiceDeps {
  db: Database;
  /** HMAC secret for HS256, at least 32 characters. */
  secret: string;
  now?: () => Date;
  lifetimeMs?: number;
}

export interface SessionCookieOptions {
  httpOnly: true;
  sameSite: 'lax';
  path: string;
  secure: boolean;
}

/** Attributes of the session cookie. `Secure` exactly when the portal is served over https. */
export function sessionCookieOptions(publicUrl: string | URL): SessionCookieOptions {
  const url = typeof publicUrl === 'string' ? new URL(publicUrl) : publicUrl;
  return { httpOnly: true, sameSite: 'lax', path: SESSION_COOKIE_PATH, secure: url.protocol === 'https:' };
}

/** What a portal request without a live session answers. */
export const sessionEnded = () => new ApiError('unauthorized', 'You are not signed in, or your session has ended.');

interface Claims {
  sid: string;
  sub: string;
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const { db, secret } = deps;
  const now = deps.now ?? (() => new Date());
  const lifetimeMs = deps.lifetimeMs ?? SESSION_LIFETIME_MS;
  if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) {
    throw new Error(`The session secret must be at least ${MIN_SECRET_LENGTH} characters long`);
  }
  if (!Number.isInteger(lifetimeMs) || lifetimeMs < 1000) throw new Error('lifetimeMs must be an integer of at least 1000');
  const table = `${ident(KEYS_SCHEMA)}.sessions`;
  const accounts = `${ident(KEYS_SCHEMA)}.accounts`;

  const decode = (token: string): Claims | null => {
    if (typeof token !== 'string' || token.length === 0 || token.length > 4096) return null;
    try {
      const payload = jwt.verify(token, secret, {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        audience: AUDIENCE,
        clockTimestamp: Math.floor(now().getTime() / 1000),
      });
      if (typeof payload !== 'object' || typeof payload.sid !== 'string' || typeof payload.sub !== 'string') return null;
      return { sid: payload.sid, sub: payload.sub };
    } catch {
      return null; // bad signature, expired, malformed: all simply "no session"
    }
  };

  return {
    async start(accountId) {
      const sessionId = randomBytes(24).toString('base64url');
      const createdAt = now();
      const expiresAt = new Date(createdAt.getTime() + lifetimeMs);
      // The account row is locked and read here, not trusted from the password check: a suspension
      // that commits first is seen, and one that commits after ends this session with the others.
      const [account] = await db.query<{ status: string }>(
        `WITH account AS (SELECT id, status FROM ${accounts} WHERE id = $2 FOR KEY SHARE),
         started AS (INSERT INTO ${table} (id, account_id, created_at, expires_at) SELECT $1, id, $3, $4 FROM account WHERE status = 'active')
         SELECT status FROM account`,
        [sessionId, accountId, createdAt, expiresAt],
      );
      if (!account) throw wrongCredentials();
      if (account.status !== 'active') throw accountSuspended();
      const token = jwt.sign(
        {
          sid: sessionId,
          sub: String(accountId),
          iss: ISSUER,
          aud: AUDIENCE,
          iat: Math.floor(createdAt.getTime() / 1000),
          exp: Math.floor(expiresAt.getTime() / 1000),
        },
        secret,
        { algorithm: ALGORITHM },
      );
      return { token, sessionId, accountId, expiresAt };
    },

    async resolve(token) {
      const claims = decode(token);
      if (!claims) return null;
      // The row decides: logout (revoked_at) ends a session even though its JWT is still signed and unexpired.
      const [row] = await db.query<{ account_id: number; expires_at: Date }>(
        `SELECT account_id, expires_at FROM ${table} WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2`,
        [claims.sid, now()],
      );
      if (!row || String(row.account_id) !== claims.sub) return null;
      return { sessionId: claims.sid, accountId: Number(row.account_id), expiresAt: new Date(row.expires_at) };
    },

    async end(token) {
      const claims = decode(token);
      if (!claims) return;
      await db.query(`UPDATE ${table} SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [claims.sid, now()]);
    },

    async purgeExpired() {
      const cutoff = new Date(now().getTime() - 24 * 60 * 60 * 1000);
      const rows = await db.query(`DELETE FROM ${table} WHERE expires_at < $1 OR revoked_at < $1 RETURNING id`, [cutoff]);
      return rows.length;
    },
  };
}
