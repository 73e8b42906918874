import type { Database } from '../db/database';
import { createAccountAdmin, type AccountAdmin } from '../identity/account-admin';
import { createAuditLog } from '../identity/audit-log';
import { monthOf } from '../identity/month';
import { createPlanService, type PlanService } from '../identity/plans';
import { createRedisRevocationBus } from '../identity/redis-revocation-bus';
import { createRedis } from '../gateway/wiring/redis';
import { redisTestUrl } from './support/databases';
import { signUpDeveloper, startGatewayPair, type GatewayPair, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { prepareStore, putPlan, storedUsage } from './support/plans';
import { pollFor, until } from './support/until';

const DEFAULT_PER_MINUTE = 40;
const monthSeconds = () => {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) / 1000;
};

/**
 * Two gateways sharing one PostgreSQL and one Redis, with plans set in the database before they
 * start. Plan changes are made at run time as the admin API makes them: through a PlanService
 * and an AccountAdmin of the test's own on the same database and Redis bus.
 */
describe('plans across two gateways sharing PostgreSQL and Redis', () => {
  let pair: GatewayPair | undefined;
  let db: Database;
  let a: TestGateway;
  let b: TestGateway;
  let prefix: string;
  let plans: PlanService;
  let accounts: AccountAdmin;
  let closeBus: () => void;
  const redisConnections = [createRedis(redisTestUrl(), { connectionName: 'plans-test-pub' }), createRedis(redisTestUrl(), { connectionName: 'plans-test-sub' })];

  const get = (gw: TestGateway, path: string, key: string) => fetch(gw.url + path, { headers: { authorization: `Bearer ${key}` } });
  /** Signs up through gateway A and moves the account to `plan` before any of its keys is used (so no verdict is cached). */
  const developerOn = async (plan: string) => {
    const dev = await signUpDeveloper(a.url);
    await db.query('UPDATE accounts.accounts SET plan = $2 WHERE id = $1', [dev.accountId, plan]);
    return dev;
  };
  /** Polls `gw` until the key's RateLimit-Policy is `policy`; resolves with the milliseconds it took. */
  const untilPolicy = async (gw: TestGateway, key: string, policy: string, since: number) => {
    const read = async () => (await get(gw, '/staging/v1/pets', key)).headers.get('ratelimit-policy');
    const { value: seen, ms } = await pollFor(read, (answered) => answered === policy, { withinMs: 3000, since });
    if (seen !== policy) throw new Error(`${gw.url} still answers with RateLimit-Policy ${seen}, not ${policy}`);
    return ms;
  };

  beforeAll(async () => {
    pair = await startGatewayPair({
      env: { RATE_LIMIT_PER_MINUTE: String(DEFAULT_PER_MINUTE) },
      prepare: (testDb) =>
        prepareStore(testDb.settings, async (prepared) => {
          await putPlan(prepared, 'metered', 1000, 30);
          await putPlan(prepared, 'changing', 1000, null);
          await putPlan(prepared, 'busy', 10_000_000, 1_000_000_000);
        }),
    });
    ({ a, b, prefix } = pair);
    db = await pair.db.open();
    const [publisher, subscriber] = redisConnections as [ReturnType<typeof createRedis>, ReturnType<typeof createRedis>];
    await Promise.all([publisher.connect(), subscriber.connect()]);
    const bus = await createRedisRevocationBus({ publisher, subscriber, channel: `${prefix}revocations` });
    closeBus = () => bus.close();
    const now = () => new Date();
    const audit = createAuditLog({ db, now });
    plans = await createPlanService({ db, bus, audit, defaultRequestsPerMinute: DEFAULT_PER_MINUTE, now });
    accounts = createAccountAdmin({ db, audit, plans, bus, now });
  }, 60_000);
  afterAll(async () => {
    plans?.close();
    closeBus?.();
    for (const redis of redisConnections) redis.disconnect();
    await db?.close();
    await pair?.stop();
  });

  test('when requests of one account are split between the gateways, then together they admit no more than its monthly quota, and both refuse it after', async () => {
    const dev = await developerOn('metered');
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const [gw, path, key] = i % 2 ? [b, '/staging/v1/pets', dev.stagingKey] : [a, '/v1/pets', dev.productionKey];
      statuses.push((await get(gw, path, key)).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual(Array(10).fill(429));
    for (const gw of [a, b]) {
      const refused = await get(gw, '/v1/pets', dev.productionKey);
      expect(await jsonOf(refused)).toMatchObject({ code: 'quota_exceeded', status: 429 });
      expect(refused.headers.get('ratelimit-policy')).toBe(`"minute";q=1000;w=60, "month";q=30;w=${monthSeconds()}`);
    }
    // Each gateway adds what it admitted within its flush interval (5 s): together, the quota.
    const month = monthOf(new Date());
    await until('both gateways to write their counts', async () => (await storedUsage(db, dev.accountId, month)) >= 30, 10_000);
    expect(await storedUsage(db, dev.accountId, month)).toBe(30);
  });

  test('when a plan changes, then both gateways limit and describe its accounts by the new plan within a second', async () => {
    const dev = await developerOn('changing');
    for (const gw of [a, b]) expect((await get(gw, '/staging/v1/pets', dev.stagingKey)).headers.get('ratelimit-policy')).toBe('"minute";q=1000;w=60');
    const changedAt = Date.now();
    await plans.put('changing', { requestsPerMinute: 3, requestsPerMonth: 50_000 }, { actor: 'admin:test' });
    const policy = `"minute";q=3;w=60, "month";q=50000;w=${monthSeconds()}`;
    const took = await Promise.all([untilPolicy(a, dev.stagingKey, policy, changedAt), untilPolicy(b, dev.stagingKey, policy, changedAt)]);
    expect(Math.max(...took)).toBeLessThan(1000);
    // Three a minute are nearer exhaustion than 50,000 a month: RateLimit names the minute.
    expect((await get(a, '/staging/v1/pets', dev.stagingKey)).headers.get('ratelimit')).toMatch(/^"minute";r=\d;t=\d+$/);
    // The new per-minute limit applies to the next requests (the polls above spent some of it).
    let status = 200;
    for (let i = 0; i < 4 && status === 200; i++) status = (await get(a, '/staging/v1/pets', dev.stagingKey)).status;
    expect(status).toBe(429);
  });

  test('when an account moves to another plan, then both gateways apply that plan to its keys within a second', async () => {
    const dev = await developerOn('changing');
    await plans.put('changing', { requestsPerMinute: 1000, requestsPerMonth: null }, { actor: 'admin:test' });
    for (const gw of [a, b]) await untilPolicy(gw, dev.stagingKey, '"minute";q=1000;w=60', Date.now());
    const movedAt = Date.now();
    await accounts.setPlan(dev.accountId, 'metered', { actor: 'admin:test' });
    const policy = `"minute";q=1000;w=60, "month";q=30;w=${monthSeconds()}`;
    const took = await Promise.all([untilPolicy(a, dev.stagingKey, policy, movedAt), untilPolicy(b, dev.stagingKey, policy, movedAt)]);
    expect(Math.max(...took)).toBeLessThan(1000);
  });

  test('when a busy account sends through both gateways, then its monthly quota costs Redis a command per lease, not per request', async () => {
    const dev = await developerOn('busy');
    const monitor = await redisConnections[0]!.duplicate().monitor();
    const quotaCommands: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      // The script's own commands are shown too, from source "lua": count what the gateways sent.
      if (!source.includes('lua') && args.some((arg) => arg.startsWith(`${prefix}quota:${dev.accountId}:`))) quotaCommands.push(args);
    });
    try {
      let admitted = 0;
      for (let batch = 0; batch < 20; batch++) {
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => get(i % 2 ? a : b, i % 4 < 2 ? '/v1/pets' : '/staging/v1/pets', i % 4 < 2 ? dev.productionKey : dev.stagingKey)));
        admitted += answers.filter((res) => res.status === 200).length;
      }
      expect(admitted).toBe(400);
      // Each take is one EVAL; leases grow while they are spent fast, so far fewer than the 400 requests.
      expect(quotaCommands.length).toBeGreaterThan(0);
      expect(quotaCommands.every((args) => args[0]?.toLowerCase() === 'eval')).toBe(true);
      expect(quotaCommands.length).toBeLessThan(80);
      process.stdout.write(`gateway-plans-scale-out: ${quotaCommands.length} quota EVALs in Redis for 400 requests of one account through two gateways\n`);
    } finally {
      monitor.disconnect();
    }
  });
});
