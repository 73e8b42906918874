import Redis from 'ioredis';
import { createRedisRequestLog } from '../gateway/request-log/redis-request-log';
import { newRecordColumns } from '../gateway/request-log/request-log';
import type { Database } from '../db/database';
import { redisTestUrl } from './support/databases';
import { signUpDeveloper, startGatewayPair, type GatewayPair, type TestGateway } from './support/gateway-harness';
import { adminClient, ADMIN_ENV, type AdminClient } from './support/admin-client';
import { jsonOf } from './support/http';
import { pollFor, until } from './support/until';

const SUSPENDED_KEY = { code: 'unauthorized', message: 'The account this API key belongs to is suspended; contact support.', status: 401 };

/**
 * Two gateways sharing one PostgreSQL and one Redis, as behind a load balancer: what an operator
 * does through one gateway's admin API holds on the other within a second.
 */
describe('the admin API across two gateways sharing PostgreSQL and Redis', () => {
  let pair: GatewayPair | undefined;
  let db: Database;
  let a: TestGateway;
  let b: TestGateway;
  let prefix: string;
  let adminA: AdminClient;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisTestUrl());
    pair = await startGatewayPair({ env: ADMIN_ENV });
    ({ a, b, prefix } = pair);
    db = await pair.db.open();
    adminA = adminClient(a.adminUrl!);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    redis?.disconnect();
    await pair?.stop();
  });

  const onB = (key: string) => fetch(`${b.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });

  /** Asks B until its answer is no longer `from` (at most 1 s), and returns that answer and how long it took from `since`. */
  async function untilChanged(key: string, from: number, since: number): Promise<{ res: Response; ms: number }> {
    const { value: res, ms } = await pollFor(() => onB(key), (answer) => answer.status !== from, { withinMs: 1000, since });
    return { res, ms };
  }

  test('when an account is suspended through A, then B refuses its key saying so within a second; reinstated, B admits it again within a second', async () => {
    const dev = await signUpDeveloper(a.url);
    expect((await onB(dev.productionKey)).status).toBe(200); // B has verified and cached the key
    let since = Date.now();
    expect((await adminA.post(`/admin/v1/accounts/${dev.accountId}/suspend`, { reason: 'Abuse report' })).status).toBe(200);
    const suspended = await untilChanged(dev.productionKey, 200, since);
    expect({ status: suspended.res.status, body: await jsonOf(suspended.res) }).toEqual({ status: 401, body: SUSPENDED_KEY });
    expect(suspended.ms).toBeLessThan(1000);

    since = Date.now();
    expect((await adminA.post(`/admin/v1/accounts/${dev.accountId}/reinstate`)).status).toBe(200);
    const reinstated = await untilChanged(dev.productionKey, 401, since);
    expect(reinstated.res.status).toBe(200);
    expect(reinstated.ms).toBeLessThan(1000);
  });

  test('when a leaked key is reported through A, then B refuses it within a second', async () => {
    const dev = await signUpDeveloper(a.url);
    expect((await onB(dev.productionKey)).status).toBe(200);
    const since = Date.now();
    expect((await adminA.post('/admin/v1/keys/revoke-by-secret', { key: dev.productionKey })).status).toBe(200);
    const revoked = await untilChanged(dev.productionKey, 200, since);
    expect({ status: revoked.res.status, body: await jsonOf(revoked.res) }).toEqual({ status: 401, body: { code: 'unauthorized', message: 'This API key has been revoked.', status: 401 } });
    expect(revoked.ms).toBeLessThan(1000);
  });

  test('when an account is erased through A, then B refuses its key within a second, no row of it is left in the accounts schema, and its audit entries keep only its id', async () => {
    const dev = await signUpDeveloper(a.url);
    expect((await onB(dev.productionKey)).status).toBe(200);
    const keyIds = (await db.query<{ id: string }>('SELECT id FROM accounts.api_keys WHERE account_id = $1 ORDER BY id', [dev.accountId])).map((k) => k.id);
    const streams = keyIds.map((id) => `${prefix}reqlog-v2:${id}`);
    // B writes its request log every 250 ms: wait for the request just made to be in it.
    await until('the request log streams in Redis', async () => (await redis.exists(...streams)) > 0, 2000);
    expect(await redis.exists(...streams)).toBe(1);
    await db.query('INSERT INTO accounts.account_usage_months (account_id, month, requests) VALUES ($1, $2, 3)', [dev.accountId, '2026-02-01']);
    const since = Date.now();
    expect((await adminA.delete(`/admin/v1/accounts/${dev.accountId}`, { reason: 'Holder asked' })).status).toBe(204);
    const erased = await untilChanged(dev.productionKey, 200, since);
    expect({ status: erased.res.status, body: await jsonOf(erased.res) }).toEqual({ status: 401, body: { code: 'unauthorized', message: 'Invalid API key.', status: 401 } });
    expect(erased.ms).toBeLessThan(1000);

    // Every table of the schema that holds an account_id (or is the accounts table) has nothing of it left.
    const tables = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = 'accounts' AND column_name = 'account_id' AND table_name <> 'audit_log' ORDER BY table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual(['account_usage_months', 'api_keys', 'key_usage_days', 'sessions']);
    for (const { table_name: table } of tables) {
      expect({ table, rows: await db.query(`SELECT * FROM accounts.${table} WHERE account_id = $1`, [dev.accountId]) }).toEqual({ table, rows: [] });
    }
    expect(await db.query('SELECT * FROM accounts.accounts WHERE id = $1', [dev.accountId])).toEqual([]);
    const audit = await db.query<{ action: string; actor: string; details: unknown }>('SELECT action, actor, details FROM accounts.audit_log WHERE account_id = $1 ORDER BY id', [dev.accountId]);
    expect(audit).toEqual([
      { action: 'key.created', actor: `account:${dev.accountId}`, details: null },
      { action: 'key.created', actor: `account:${dev.accountId}`, details: null },
      { action: 'account.deleted', actor: 'admin:admin', details: { keys: 2 } },
    ]);
    expect(JSON.stringify(await db.query('SELECT * FROM accounts.audit_log'))).not.toContain(dev.email);

    // Its request logs are gone, and a batch another process writes late (a request admitted just before the erasure reached it) is refused.
    expect(await redis.exists(...streams)).toBe(0);
    const late = { ...newRecordColumns(1), keyIds: [keyIds[0]], methods: ['GET'], prefixes: ['/v1'], apiPaths: ['/pets'], searches: [''], requestIds: ['late'], times: Float64Array.of(Date.now()), count: 1 };
    await createRedisRequestLog({ redis, prefix }).append(late, Date.now());
    expect(await redis.exists(...streams)).toBe(0);
  });

  test('when a plan is put through A, then B lists it within a second', async () => {
    const since = Date.now();
    expect((await adminA.put('/admin/v1/plans/scale', { requestsPerMinute: 77, requestsPerMonth: null })).status).toBe(201);
    const adminB = adminClient(b.adminUrl!);
    const { value: names } = await pollFor(
      async (): Promise<string[]> => (await adminB.get('/admin/v1/plans')).body.map((p: { name: string }) => p.name),
      (listed) => listed.includes('scale'),
      { withinMs: 1000, since },
    );
    expect(names).toEqual(['default', 'scale']);
    expect(Date.now() - since).toBeLessThan(1000);
  });
});
