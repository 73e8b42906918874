import { consumeOrRefuse, memoryLimiter, type CreateLimiter } from './limit-refusal';

/**
 * Key churn per account: at most `maxPerDay` new keys, creations and rolls together, per 24-hour
 * window (it opens with the first of them). A revoked key frees its place under the cap on active
 * keys at once, but its request log stays for a day after its last request; this bounds how many
 * such logs one account can leave behind.
 */
export interface KeyChurnLimiter {
  /**
   * Counts one new key of the account; throws 429 `rate_limited` (with Retry-After) when its
   * allowance is spent. Returns what gives the point back, for a change that then fails.
   */
  take(accountId: number): Promise<() => Promise<void>>;
}

/** 50 a day is far above what a developer needs (every key of a full account rolled twice), and keeps the request logs one account can hold alive within MAX_KEYS_PER_ACCOUNT plus two windows' 50. */
export const DEFAULT_MAX_NEW_KEYS_PER_DAY = 50;
const DAY_SECONDS = 24 * 60 * 60;

export interface KeyChurnLimiterOptions {
  maxPerDay?: number;
  /** Builds the counter; memory by default, a store-backed limiter (Redis) when processes share limits. */
  createLimiter?: CreateLimiter;
}

export function createKeyChurnLimiter(options: KeyChurnLimiterOptions = {}): KeyChurnLimiter {
  const maxPerDay = options.maxPerDay ?? DEFAULT_MAX_NEW_KEYS_PER_DAY;
  if (!Number.isInteger(maxPerDay) || maxPerDay < 1) throw new Error('createKeyChurnLimiter: maxPerDay must be a positive integer');
  const byAccount = (options.createLimiter ?? memoryLimiter)({ keyPrefix: 'new_keys_acct', points: maxPerDay, duration: DAY_SECONDS });
  const keys = maxPerDay === 1 ? 'key' : 'keys';
  return {
    async take(accountId) {
      const key = String(accountId);
      const taken = await consumeOrRefuse(byAccount, key, (wait) => `This account has created or rolled ${maxPerDay} ${keys} in 24 hours, the most it may; try again in ${wait}.`);
      const windowEnds = Date.now() + taken.msBeforeNext;
      return async () => {
        // Given back in a later window, the point would raise that window's allowance instead.
        if (Date.now() < windowEnds) await byAccount.reward(key);
      };
    },
  };
}
