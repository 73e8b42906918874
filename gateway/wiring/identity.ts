import { createAccountAdmin } from '../../identity/account-admin';
import { createAccountService } from '../../identity/account-service';
import { createAccountUsageLedger } from '../../identity/account-usage-ledger';
import { createAuditLog } from '../../identity/audit-log';
import { scheduleKeyExpiryAudit } from '../../identity/key-expiry-audit';
import { createKeyAdmin } from '../../identity/key-admin';
import { createPlanService } from '../../identity/plans';
import { createApiKeyService } from '../../identity/api-key-service';
import { createKeyChurnLimiter } from '../../identity/key-churn-limiter';
import { createDailyUsageService, scheduleUsageDayPurge } from '../../identity/daily-usage-service';
import { createUtcDayClock } from '../../identity/utc-day-clock';
import { createKeyVerifier } from '../../identity/key-verifier';
import { createLoginLimiter } from '../../identity/login-limiter';
import { createPasswordHasher } from '../../identity/password';
import { createRedisRevocationBus } from '../../identity/redis-revocation-bus';
import { createLocalRevocationBus, type RevocationBus } from '../../identity/revocation-bus';
import { createSessionService } from '../../identity/session-service';
import { schedulePurgeOfSessions } from '../../identity/session-purge';
import { createSignupLimiter } from '../../identity/signup-limiter';
import { ENVIRONMENTS, type Environment } from '../../openapi/environments';
import { ADMIN_FAILURE_WINDOW_SECONDS, MAX_ADMIN_TOKEN_FAILURES } from '../admin/admin-auth';
import { createBudgetLeases, type BudgetLeases } from '../rate-limit/budget-leases';
import type { CreateLimiter } from '../../identity/limit-refusal';
import { createLimiterFactory, leaseCounter } from '../rate-limit/limiter-factory';
import { createMonthCounter } from '../rate-limit/month-counter';
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
  const audit = createAuditLog({ db, now });
  const plans = await createPlanService({
    db,
    bus: revocations,
    audit,
    defaultRequestsPerMinute: config.rateLimitPerMinute,
    now,
    onReloadError: (err) => logger.warn({ err }, 'could not reload plans; the previous limits stay in force'),
  });
  defer(() => plans.close());
  // Every limit is counted in Redis when there is one, so every gateway process spends the same budget.
  const createLimiter = createLimiterFactory({ redis: redis?.publisher, keyPrefix: config.redisKeyPrefix });
  const apiKeys = createApiKeyService({
    db,
    hashSecret: secrets.keyHashSecret,
    revocations,
    audit,
    maxActiveKeysPerAccount: config.maxKeysPerAccount,
    churn: createKeyChurnLimiter({ maxPerDay: config.maxNewKeysPerDay, createLimiter }),
    now,
    onFlushError: (err) => logger.warn({ err }, 'could not record key usage; will retry'),
  });
  defer(() => apiKeys.close());
  const injectedClock = options.injectedClock;
  // Read per request: with no injected clock, Date.now, which allocates nothing.
  const clockMs = injectedClock ? () => injectedClock().getTime() : Date.now;
  // Responses are counted on a day a midnight timer keeps, not a clock read each; a test's clock is read each time.
  const dayClock = injectedClock ? undefined : createUtcDayClock();
  if (dayClock) defer(() => dayClock.close());
  const dailyUsage = createDailyUsageService({
    db,
    nowMs: clockMs,
    today: dayClock?.today,
    onFlushError: (err) => logger.warn({ err }, 'could not record daily key usage; will retry'),
  });
  defer(() => dailyUsage.close());
  defer(scheduleUsageDayPurge(dailyUsage, { onError: (err) => logger.warn({ err }, 'could not delete old daily key usage; will retry') }));
  const accountUsage = createAccountUsageLedger({
    db,
    clock: clockMs,
    flushIntervalMs: 5000,
    onFlushError: (err) => logger.warn({ err }, 'could not record account usage; will retry'),
  });
  defer(() => accountUsage.close());
  const verifier = createKeyVerifier({ keys: apiKeys, revocations, ttlMs: 60_000, max: 100_000, now: options.injectedClock });
  defer(() => verifier.close());
  defer(scheduleKeyExpiryAudit({ db, now, onError: (err) => logger.warn({ err }, 'could not record key expiries in the audit log; will retry') }));
  const admin = {
    accounts: createAccountAdmin({ db, audit, plans, bus: revocations, now }),
    keys: createKeyAdmin({ db, audit, bus: revocations, hash: apiKeys.hash, now }),
    plans,
    audit,
  };
  const limiters = createLimiters(w, redis?.publisher, createLimiter, { seed: (accountId, month) => accountUsage.requestsInMonth(accountId, month), clockMs });
  return { sessions, accounts, apiKeys, dailyUsage, verifier, plans, admin, accountUsage, clockMs, limiters };
}

export type Identity = Awaited<ReturnType<typeof createIdentity>>;

/** With Redis, a revocation reaches every gateway process; without it, only this one. */
async function createRevocationBus({ config, defer }: Wiring, redis: Stores['redis']): Promise<RevocationBus> {
  if (!redis) return createLocalRevocationBus();
  const shared = await createRedisRevocationBus({ ...redis, channel: `${config.redisKeyPrefix}revocations` });
  defer(() => shared.close());
  return shared;
}

/** The shortest calendar month: the monthly leases carry tokens over only within one month. */
const SHORTEST_MONTH_MS = 28 * 24 * 60 * 60 * 1000;

/** The API's and the portal's limits, from the process's one limiter factory. */
function createLimiters(
  { config }: Wiring,
  redis: NonNullable<Stores['redis']>['publisher'] | undefined,
  createLimiter: CreateLimiter,
  quota: { seed: (accountId: string, month: string) => Promise<number>; clockMs: () => number },
) {
  const portalLimits = {
    createLimiter,
    maxInFlightPerIp: config.passwordAttemptsInFlightPerIp,
  };
  // The plan sets the limit, which the leases apply: the counter only counts (it never refuses).
  const minuteLeases = (environment: Environment) =>
    createBudgetLeases({
      counter: leaseCounter(createLimiter({ points: Number.MAX_SAFE_INTEGER, duration: 60, keyPrefix: `rl:acct:${environment}` })),
      windowMs: 60_000,
    });
  const minute = Object.fromEntries(ENVIRONMENTS.map((environment) => [environment, minuteLeases(environment)])) as Record<Environment, BudgetLeases>;
  return {
    /** Per account and environment, each plan's per-minute limit. */
    minute,
    /** Per account, both environments together, each plan's monthly quota. */
    month: createBudgetLeases({
      counter: createMonthCounter({ redis, keyPrefix: `${config.redisKeyPrefix}quota:`, seed: quota.seed, clock: quota.clockMs }),
      windowMs: SHORTEST_MONTH_MS,
      clock: quota.clockMs,
    }),
    anonymous: createRateLimiter({ name: 'anonymous', quota: config.anonymousRateLimitPerMinute, windowSeconds: 60, keyPrefix: `${config.redisKeyPrefix}rl:ip`, redis }),
    login: createLoginLimiter(portalLimits),
    signup: createSignupLimiter(portalLimits),
    /** Per client address, wrong admin tokens (admin-auth.ts). */
    adminAuthFailures: createLimiter({ keyPrefix: 'admin_auth_fail', points: MAX_ADMIN_TOKEN_FAILURES, duration: ADMIN_FAILURE_WINDOW_SECONDS }),
  };
}
