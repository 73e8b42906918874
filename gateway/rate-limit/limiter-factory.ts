import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { CreateLimiter } from '../../identity/limit-refusal';

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

/** Counters for the portal's sign-in and sign-up limits, built as the API limiter's are, under the deployment's prefix. */
export function createLimiterFactory({ redis, keyPrefix }: { redis?: Redis; keyPrefix: string }): CreateLimiter {
  return function createLimiter(options) {
    return createCounter({ ...options, keyPrefix: `${keyPrefix}${options.keyPrefix}` }, redis);
  };
}
