import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../lib/api-error';
import { EMAIL_MAX_LENGTH, normalizeEmail } from './account-service';

/**
 * Brute-force protection for the portal login:
 * - per IP: at most `maxFailuresPerIp` failed attempts per `ipWindowSeconds` (password spraying);
 * - per email + IP: after `maxConsecutiveFailures` failures in a row the pair is locked for
 *   `lockoutSeconds`; a successful login resets it. Keying by email + IP means an attacker
 *   cannot lock a victim out from the attacker's own address.
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

type Limiter = Pick<RateLimiterAbstract, 'consume' | 'reward' | 'block' | 'delete'>;

export interface LoginLimiterOptions {
  maxFailuresPerIp?: number;
  ipWindowSeconds?: number;
  maxConsecutiveFailures?: number;
  lockoutSeconds?: number;
  /** Builds each counter; memory by default, a store-backed limiter (Redis) when processes share limits. */
  createLimiter?: (options: { keyPrefix: string; points: number; duration: number }) => Limiter;
}

const CONSECUTIVE_WINDOW_SECONDS = 24 * 60 * 60;

function describeWait(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

function tooManyAttempts(res: RateLimiterRes, scope: string): ApiError {
  const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new ApiError('rate_limited', `Too many failed sign-in attempts ${scope}. Try again in ${describeWait(seconds)}.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/** rate-limiter-flexible rejects with a RateLimiterRes when over the limit, with an Error when its store fails. */
async function consumeOrRefuse(limiter: Limiter, key: string, scope: string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) throw tooManyAttempts(rejection, scope);
    throw rejection;
  }
}

export function createLoginLimiter(options: LoginLimiterOptions = {}): LoginLimiter {
  const maxFailuresPerIp = options.maxFailuresPerIp ?? 100;
  const ipWindowSeconds = options.ipWindowSeconds ?? 60 * 60;
  const maxConsecutiveFailures = options.maxConsecutiveFailures ?? 5;
  const lockoutSeconds = options.lockoutSeconds ?? 15 * 60;
  for (const [name, value] of Object.entries({ maxFailuresPerIp, ipWindowSeconds, maxConsecutiveFailures, lockoutSeconds })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`createLoginLimiter: ${name} must be a positive integer`);
  }
  const createLimiter = options.createLimiter ?? ((o) => new RateLimiterMemory(o));
  const byIp = createLimiter({ keyPrefix: 'login_fail_ip', points: maxFailuresPerIp, duration: ipWindowSeconds });
  const byEmailAndIp = createLimiter({
    keyPrefix: 'login_fail_email_ip',
    points: maxConsecutiveFailures,
    duration: CONSECUTIVE_WINDOW_SECONDS,
  });

  return {
    async begin(email, ip) {
      const pairKey = `${normalizeEmail(email).slice(0, EMAIL_MAX_LENGTH)}|${ip}`;
      await consumeOrRefuse(byIp, ip, 'from your network');
      let pair: RateLimiterRes;
      try {
        pair = await consumeOrRefuse(byEmailAndIp, pairKey, 'for this account');
      } catch (err) {
        await byIp.reward(ip);
        throw err;
      }
      return {
        async succeeded() {
          await Promise.all([byIp.reward(ip), byEmailAndIp.delete(pairKey)]);
        },
        async failed() {
          // This failure used the last allowed attempt: lock the pair for the full lockout from now.
          if (pair.remainingPoints === 0) await byEmailAndIp.block(pairKey, lockoutSeconds);
        },
        async cancel() {
          await Promise.all([byIp.reward(ip), byEmailAndIp.reward(pairKey)]);
        },
      };
    },
  };
}
