import { consumeOrRefuse, memoryLimiter, type CreateLimiter } from './limit-refusal';

/**
 * Mass sign-up protection for the portal: at most `maxPerIp` sign-up attempts per `windowSeconds`
 * from one address, successful or not. Every attempt is counted because every attempt costs a
 * scrypt hash (tens of ms of CPU): unlimited, a script could keep the portal busy hashing, or
 * fill the accounts table. The default, 20 an hour, leaves room for a team behind one NAT.
 */
export interface SignupLimiter {
  /** Counts one attempt; throws 429 `rate_limited` (with Retry-After) when over the limit. */
  admit(ip: string): Promise<void>;
}

export interface SignupLimiterOptions {
  maxPerIp?: number;
  windowSeconds?: number;
  /** Builds the counter; memory by default, a store-backed limiter (Redis) when processes share limits. */
  createLimiter?: CreateLimiter;
}

export function createSignupLimiter(options: SignupLimiterOptions = {}): SignupLimiter {
  const maxPerIp = options.maxPerIp ?? 20;
  const windowSeconds = options.windowSeconds ?? 60 * 60;
  for (const [name, value] of Object.entries({ maxPerIp, windowSeconds })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`createSignupLimiter: ${name} must be a positive integer`);
  }
  const byIp = (options.createLimiter ?? memoryLimiter)({ keyPrefix: 'signup_ip', points: maxPerIp, duration: windowSeconds });
  return {
    async admit(ip) {
      await consumeOrRefuse(byIp, ip, (wait) => `Too many sign-ups from your network. Try again in ${wait}.`);
    },
  };
}
