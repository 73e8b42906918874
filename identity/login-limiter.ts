import { createHash } from 'node:crypto';
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { consumeOrRefuse, createInFlightCap, memoryLimiter, type CreateLimiter } from './limit-refusal';
import { EMAIL_MAX_LENGTH, normalizeEmail } from './account-service';

/**
 * Brute-force protection for the portal login:
 * - per IP: at most `maxFailuresPerIp` failed attempts per `ipWindowSeconds` (password spraying);
 * - per email + IP: after `maxConsecutiveFailures` failures in a row the pair is locked for
 *   `lockoutSeconds`; a successful login resets it. Keying by email + IP means an attacker
 *   cannot lock a victim out from the attacker's own address.
 * - per IP: at most `maxInFlightPerIp` attempts being checked at once (in this process); more are
 *   refused at once, so one client's parallel guesses cannot fill the password-hashing queue.
 * An attempt is reserved before the password is checked, so parallel guesses cannot slip past.
 */
export interface LoginLimiter {
  /** Reserves one attempt; throws 429 `rate_limited` (with Retry-After) when over a limit. */
  begin(email: string, ip: string): Promise<LoginAttempt>;
}

export interface LoginAttempt {
  succeeded(): Promise<void>;
  failed(): Promise<void>;
  /** The attempt could not be judged (store outage): give the reservation back. */
  cancel(): Promise<void>;
}

export interface LoginLimiterOptions {
  maxFailuresPerIp?: number;
  ipWindowSeconds?: number;
  maxConsecutiveFailures?: number;
  lockoutSeconds?: number;
  maxInFlightPerIp?: number;
  /** Builds each counter; memory by default, a store-backed limiter (Redis) when processes share limits. */
  createLimiter?: CreateLimiter;
}

const CONSECUTIVE_WINDOW_SECONDS = 24 * 60 * 60;

export function createLoginLimiter(options: LoginLimiterOptions = {}): LoginLimiter {
  const maxFailuresPerIp = options.maxFailuresPerIp ?? 100;
  const ipWindowSeconds = options.ipWindowSeconds ?? 60 * 60;
  const maxConsecutiveFailures = options.maxConsecutiveFailures ?? 5;
  const lockoutSeconds = options.lockoutSeconds ?? 15 * 60;
  const maxInFlightPerIp = options.maxInFlightPerIp ?? 2;
  for (const [name, value] of Object.entries({ maxFailuresPerIp, ipWindowSeconds, maxConsecutiveFailures, lockoutSeconds, maxInFlightPerIp })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`createLoginLimiter: ${name} must be a positive integer`);
  }
  const createLimiter = options.createLimiter ?? memoryLimiter;
  const inFlight = createInFlightCap(maxInFlightPerIp, 'Too many sign-in attempts at once from your network. Try again in 1 second.');
  const byIp = createLimiter({ keyPrefix: 'login_fail_ip', points: maxFailuresPerIp, duration: ipWindowSeconds });
  const byEmailAndIp = createLimiter({
    keyPrefix: 'login_fail_email_ip',
    points: maxConsecutiveFailures,
    duration: CONSECUTIVE_WINDOW_SECONDS,
  });

  return {
    async begin(email, ip) {
      // Hashed: the counter lives in Redis for a day, and its key need not spell out who tried to sign in.
      const pairKey = createHash('sha256').update(`${normalizeEmail(email).slice(0, EMAIL_MAX_LENGTH)}|${ip}`).digest('base64url');
      const release = inFlight.enter(ip);
      let pair: RateLimiterRes;
      try {
        await consumeOrRefuse(byIp, ip, (wait) => `Too many failed sign-in attempts from your network. Try again in ${wait}.`);
        try {
          pair = await consumeOrRefuse(byEmailAndIp, pairKey, (wait) => `Too many failed sign-in attempts for this account. Try again in ${wait}.`);
        } catch (err) {
          await byIp.reward(ip);
          throw err;
        }
      } catch (err) {
        release();
        throw err;
      }
      return {
        async succeeded() {
          release();
          await Promise.all([byIp.reward(ip), byEmailAndIp.delete(pairKey)]);
        },
        async failed() {
          release();
          // This failure used the last allowed attempt: lock the pair for the full lockout from now.
          if (pair.remainingPoints === 0) await byEmailAndIp.block(pairKey, lockoutSeconds);
        },
        async cancel() {
          release();
          await Promise.all([byIp.reward(ip), byEmailAndIp.reward(pairKey)]);
        },
      };
    },
  };
}
