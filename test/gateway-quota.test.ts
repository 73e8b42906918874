import { rmSync } from 'node:fs';
import { openDatabase } from '../db/open-database';
import { expectMatchesPortalContract } from './support/contract';
import { tempDir } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { prepareStore, putPlan, storedUsage } from './support/plans';

const QUOTA = 5;
const NOVEMBER_SECONDS = 30 * 86_400;
/** A minute before the end of November (UTC). */
const NEAR_MONTH_END = '2026-11-30T23:59:00.000Z';

/**
 * One gateway on PGlite, without Redis, whose default plan has a monthly quota of 5 (set in the
 * database before it starts, as an admin would): the quota spans both environments, is refused
 * with quota_exceeded until the month ends, is written to account_usage_months, and stays spent
 * across a restart on the same DATA_DIR.
 */
describe('monthly quota (one gateway, PGlite, restarted)', () => {
  const dataDir = tempDir('asg-quota-');
  let gw: TestGateway | undefined;
  let dev: Developer;

  // On the fake clock from the start: a start purges sessions ended a day before, and in real time a 12-h one made at the fake time has.
  const start = async () => {
    gw = await startTestGateway({ env: { DATA_DIR: dataDir }, startAt: NEAR_MONTH_END });
  };
  const get = (path: string, key: string) => fetch(gw!.url + path, { headers: { authorization: `Bearer ${key}` } });
  const planOnPortal = async (): Promise<{ requestsThisMonth: number }> => {
    const res = await fetch(`${gw!.url}/portal/api/plan`, { headers: { cookie: dev.cookie } });
    expect(res.status).toBe(200);
    const body: { requestsThisMonth: number } = await jsonOf(res);
    expectMatchesPortalContract('getPlanUsage', 200, body);
    return body;
  };

  beforeAll(async () => {
    await prepareStore({ dataDir }, (db) => putPlan(db, 'default', 1000, QUOTA));
    await start();
    dev = await signUpDeveloper(gw!.url);
  });
  afterAll(async () => {
    await gw?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('when the quota is spent across both environments, then 429 quota_exceeded until the month ends, with both policies named and RateLimit naming the month', async () => {
    const admitted: Array<{ status: number; policy: string | null; rateLimit: string | null }> = [];
    for (const [path, key] of [
      ['/v1/pets', dev.productionKey],
      ['/staging/v1/pets', dev.stagingKey],
      ['/v1/pets', dev.productionKey],
      ['/v1/pets?limit=abc', dev.productionKey], // a 400 passed the limits: it counts
      ['/staging/v1/pets', dev.stagingKey],
    ] as const) {
      const res = await get(path, key);
      admitted.push({ status: res.status, policy: res.headers.get('ratelimit-policy'), rateLimit: res.headers.get('ratelimit') });
    }
    const policy = `"minute";q=1000;w=60, "month";q=${QUOTA};w=${NOVEMBER_SECONDS}`;
    expect(admitted).toEqual([
      { status: 200, policy, rateLimit: '"month";r=4;t=60' },
      { status: 200, policy, rateLimit: '"month";r=3;t=60' },
      { status: 200, policy, rateLimit: '"month";r=2;t=60' },
      { status: 400, policy, rateLimit: '"month";r=1;t=60' },
      { status: 200, policy, rateLimit: '"month";r=0;t=60' },
    ]);

    for (const [path, key] of [
      ['/v1/pets', dev.productionKey],
      ['/staging/v1/pets', dev.stagingKey],
    ] as const) {
      const refused = await get(path, key);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('60');
      expect(refused.headers.get('ratelimit-policy')).toBe(policy);
      expect(refused.headers.get('ratelimit')).toBe('"month";r=0;t=60');
      expect(await jsonOf(refused)).toEqual({ code: 'quota_exceeded', message: `Monthly quota of ${QUOTA} requests exceeded; it renews at 2026-12-01T00:00:00Z, in 60 s.`, status: 429 });
    }
    // The portal shows the count at once, before the gateway has written it.
    expect(await planOnPortal()).toEqual({ plan: 'default', requestsPerMinute: 1000, requestsPerMonth: QUOTA, month: '2026-11', requestsThisMonth: QUOTA, monthEndsAt: '2026-12-01T00:00:00.000Z' });
    // A key issued now belongs to the same account, and its quota.
    const fresh = await dev.issueKey({ name: 'fresh' });
    gw!.clock.set('2026-11-30T23:59:59.250Z');
    const late = await get('/v1/pets', fresh.key);
    expect(late.status).toBe(429);
    expect(late.headers.get('retry-after')).toBe('1'); // seconds until 2026-12-01T00:00:00Z, rounded up
    expect((await jsonOf(late)).code).toBe('quota_exceeded');
  });

  test('when the gateway stops and starts again on its DATA_DIR, then the month’s count is in account_usage_months and the spent quota stays spent until the month ends', async () => {
    await gw!.stop();
    gw = undefined;
    const db = await openDatabase({ dataDir });
    try {
      expect(await storedUsage(db, dev.accountId, '2026-11-01')).toBe(QUOTA);
    } finally {
      await db.close();
    }

    await start();
    const refused = await get('/v1/pets', dev.productionKey);
    expect(refused.status).toBe(429);
    expect(await jsonOf(refused)).toEqual({ code: 'quota_exceeded', message: `Monthly quota of ${QUOTA} requests exceeded; it renews at 2026-12-01T00:00:00Z, in 60 s.`, status: 429 });
    expect(refused.headers.get('retry-after')).toBe('60');

    expect((await planOnPortal()).requestsThisMonth).toBe(QUOTA);
    gw!.clock.set('2026-12-01T00:00:00.000Z');
    const december = await get('/staging/v1/pets', dev.stagingKey);
    expect(december.status).toBe(200);
    expect(december.headers.get('ratelimit-policy')).toBe(`"minute";q=1000;w=60, "month";q=${QUOTA};w=${31 * 86_400}`);
    expect(december.headers.get('ratelimit')).toBe(`"month";r=4;t=${31 * 86_400}`);
  });
});
