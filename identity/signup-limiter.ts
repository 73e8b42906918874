import { consumeOrRefuse, createInFlightCap, memoryLimiter, type CreateLimiter } from './limit-refusal';

/**
 * Mass sign-up protection for the portal: at most `maxPerIp` sign-up attempts per `windowSeconds`
 * from one address, successful or not, and at most `maxInFlightPerIp` being handled at once.
 * Every attempt is counted because every attempt costs a scrypt hash (tens of ms of CPU):
 * unlimited, a script could keep the portal busy hashing, or fill the accounts table. The
 * default, 20 an hour, leaves room for a team behind one NAT.
 */
export interface SignupLimiter {
  /** Counts one attempt; throws 429 `rate_limited` (with Retry-After) when over a limit. */
  admit(ip: string): Promise<SignupAttempt>;
}

export interface SignupAttempt {
  /** The attempt is over (whatever its outcome): its in-flight slot is free again. */
  finished(): void;
}

export interface SignupLimiterOptions {
  maxPerIp?: number;
  windowSeconds?: number;
  maxInFlightPerIp?: number;
  /** Builds the counter; memory by default, a store-backed limiter (Redis) when processes share limits. */
  createLimiter?: CreateLimiter;
}

export function createSignupLimiter(options: SignupLimiterOptions = {}): SignupLimiter {
  const maxPerIp = options.maxPerIp ?? 20;
  const windowSeconds = options.windowSeconds ?? 60 * 60;
  const maxInFlightPerIp = options.maxInFlightPerIp ?? 2;
  for (const [name, value] of Object.entries({ maxPerIp, windowSeconds, maxInFlightPerIp })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`createSignupLimiter: ${name} must be a positive integer`);
  }
  const byIp = (options.createLimiter ?? memoryLimiter)({ keyPrefix: 'signup_ip', points: maxPerIp, duration: windowSeconds });
  const inFlight = createInFlightCap(maxInFlightPerIp, 'Too many sign-ups at once from your network. Try again in 1 second.');
  return {
    async admit(ip) {
      const release = inFlight.enter(ip);
      try {
        await consumeOrRefuse(byIp, ip, (wait) => `Too many sign-ups from your network. Try again in ${wait}.`);
      } catch (err) {
        release();
        throw err;
      }
      return { finished: release };
    },
  };
}
