import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { CreateLimiter } from '../../identity/limit-refusal';
import type { CounterCount, LeaseCounter } from './budget-leases';

/** What a counter counts: how many points per window, under which key prefix. */
export interface CounterOptions {
  keyPrefix: string;
  points: number;
  duration: number;
}

/**
 * One count for every process when Redis is given (it survives their restarts), with an
 * in-memory insurance limiter that keeps counting while Redis is away; memory alone without it.
 */
export function createCounter(options: CounterOptions, redis: Redis | undefined): RateLimiterAbstract {
  return redis ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options) }) : new RateLimiterMemory(options);
}

/**
 * A rate-limiter-flexible counter as budget leases take from it. Its refusal (a count past its
 * points) is a count like any other: the leases apply the limit, which may change at any time.
 */
export function leaseCounter(limiter: Pick<RateLimiterAbstract, 'consume'>): LeaseCounter {
  const countOf = (res: RateLimiterRes): CounterCount => ({ consumed: res.consumedPoints, resetAt: Date.now() + Math.max(1, res.msBeforeNext) });
  const refusedCount = (rejection: unknown): CounterCount => {
    if (rejection instanceof RateLimiterRes) return countOf(rejection);
    throw rejection;
  };
  return {
    take: (key, tokens) => limiter.consume(key, tokens).then(countOf, refusedCount),
  };
}

/** Counters for the portal's and operator's limits (sign-in, sign-up, new keys, admin tokens), built as the API limiter's are, under the deployment's prefix. */
export function createLimiterFactory({ redis, keyPrefix }: { redis?: Redis; keyPrefix: string }): CreateLimiter {
  return function createLimiter(options) {
    return createCounter({ ...options, keyPrefix: `${keyPrefix}${options.keyPrefix}` }, redis);
  };
}
