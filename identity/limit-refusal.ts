import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../lib/api-error';

export type Limiter = Pick<RateLimiterAbstract, 'consume' | 'reward' | 'penalty' | 'get' | 'block' | 'delete'>;

/** Builds one counter: memory by default; the composition root passes a Redis-backed one when processes share limits. */
export type CreateLimiter = (options: { keyPrefix: string; points: number; duration: number }) => Limiter;

export const memoryLimiter: CreateLimiter = (options) => new RateLimiterMemory(options);

/** "42 seconds", "1 minute", "15 minutes", "60 minutes", "2 hours": how long a refused client waits, in its own words. */
export function describeWait(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  if (seconds > 60 * 60) return `${Math.ceil(seconds / 3600)} hours`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/**
 * Takes one point of `key`, or throws 429 `rate_limited` (`refusedFor`). rate-limiter-flexible
 * rejects with a RateLimiterRes when over the limit and with an Error when its store fails; the
 * Error is passed on as it is.
 */
export async function consumeOrRefuse(limiter: Pick<Limiter, 'consume'>, key: string, refusal: (wait: string) => string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw refusedFor(rejection, refusal);
  }
}

/** 429 `rate_limited` for a count over its limit, with `Retry-After` and the message `refusal` makes of the wait. */
export function refusedFor(count: RateLimiterRes, refusal: (wait: string) => string): ApiError {
  const seconds = Math.max(1, Math.ceil(count.msBeforeNext / 1000));
  return new ApiError('rate_limited', refusal(describeWait(seconds)), { headers: { 'Retry-After': String(seconds) } });
}

/**
 * At most `max` attempts in flight per key in this process, so a client's parallel attempts
 * cannot queue password hashes ahead of everyone else's; a key's entry is gone when it has none.
 */
export function createInFlightCap(max: number, refusal: string): { enter(key: string): () => void } {
  if (!Number.isInteger(max) || max < 1) throw new Error('createInFlightCap: max must be a positive integer');
  const inFlight = new Map<string, number>();
  return {
    /** Takes a slot and returns its release (idempotent), or throws 429 `rate_limited` with `Retry-After: 1`. */
    enter(key) {
      const count = inFlight.get(key) ?? 0;
      if (count >= max) throw new ApiError('rate_limited', refusal, { headers: { 'Retry-After': '1' } });
      inFlight.set(key, count + 1);
      let released = false;
      return function release() {
        if (released) return;
        released = true;
        const left = inFlight.get(key)! - 1;
        if (left === 0) inFlight.delete(key);
        else inFlight.set(key, left);
      };
    },
  };
}
