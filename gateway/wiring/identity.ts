import { createAccountService } from '../../identity/account-service';
import { createApiKeyService } from '../../identity/api-key-service';
import { createKeyVerifier } from '../../identity/key-verifier';
import { createLoginLimiter } from '../../identity/login-limiter';
import { createPasswordHasher } from '../../identity/password';
import { createRedisRevocationBus } from '../../identity/redis-revocation-bus';
import { createLocalRevocationBus, type RevocationBus } from '../../identity/revocation-bus';
import { createSessionService } from '../../identity/session-service';
import { schedulePurgeOfSessions } from '../../identity/session-purge';
import { createSignupLimiter } from '../../identity/signup-limiter';
import { createLimiterFactory } from '../rate-limit/limiter-factory';
import { createRateLimiter } from '../rate-limit/rate-limiter';
import type { Wiring } from './context';
import type { Stores } from './stores';

export interface IdentityOptions {
  /** The clock tests inject, if any: the verifier times its cache by it only then. */
  injectedClock?: () => Date;
  /** How often expired sessions are deleted (default hourly; tests shorten it). */
  sessionPurgeIntervalMs?: number;
}

/** Who is calling: accounts and sessions for the portal, API keys and their verifier for the API, and the limiters that count them. */
export async function createIdentity(w: Wiring, { db, redis, secrets }: Stores, options: IdentityOptions) {
  const { config, logger, now, defer } = w;
  const sessions = createSessionService({ db, secret: secrets.sessionSecret, now });
  defer(
    schedulePurgeOfSessions(sessions, {
      intervalMs: options.sessionPurgeIntervalMs,
      onError: (err) => logger.warn({ err }, 'could not delete expired sessions; will retry'),
      onPurged: (count) => {
        if (count > 0) logger.info({ count }, 'deleted expired sessions');
      },
    }),
  );
  const accounts = createAccountService({ db, passwords: createPasswordHasher({ maxQueued: config.passwordHashQueue }) });
  const revocations = await createRevocationBus(w, redis);
  const apiKeys = createApiKeyService({
    db,
    hashSecret: secrets.keyHashSecret,
    revocations,
    maxActiveKeysPerAccount: config.maxKeysPerAccount,
    now,
    onFlushError: (err) => logger.warn({ err }, 'could not record key usage; will retry'),
  });
  defer(() => apiKeys.close());
  const verifier = createKeyVerifier({ keys: apiKeys, revocations, ttlMs: 60_000, max: 100_000, now: options.injectedClock });
  defer(() => verifier.close());
  return { sessions, accounts, apiKeys, verifier, limiters: createLimiters(w, redis?.publisher) };
}

export type Identity = Awaited<ReturnType<typeof createIdentity>>;

/** With Redis, a revocation reaches every gateway process; without it, only this one. */
async function createRevocationBus({ config, defer }: Wiring, redis: Stores['redis']): Promise<RevocationBus> {
  if (!redis) return createLocalRevocationBus();
  const shared = await createRedisRevocationBus({ ...redis, channel: `${config.redisKeyPrefix}revocations` });
  defer(() => shared.close());
  return shared;
}

/** Counted in Redis when there is one, so every gateway process spends the same budget. */
function createLimiters({ config }: Wiring, redis: NonNullable<Stores['redis']>['publisher'] | undefined) {
  const portalLimits = {
    createLimiter: createLimiterFactory({ redis, keyPrefix: config.redisKeyPrefix }),
    maxInFlightPerIp: config.passwordAttemptsInFlightPerIp,
  };
  return {
    perKey: createRateLimiter({ name: 'default', quota: config.rateLimitPerMinute, windowSeconds: 60, keyPrefix: `${config.redisKeyPrefix}rl:key`, redis }),
    anonymous: createRateLimiter({ name: 'anonymous', quota: config.anonymousRateLimitPerMinute, windowSeconds: 60, keyPrefix: `${config.redisKeyPrefix}rl:ip`, redis }),
    login: createLoginLimiter(portalLimits),
    signup: createSignupLimiter(portalLimits),
  };
}
