import { createTestDatabase, type TestDatabase } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { freePort } from '../bench/support/processes';
import { startPrivateRedis } from './support/redis-server';

/**
 * A key revoked while Redis is down: the revocation is in the database, so the portal confirms it
 * at once; once Redis is back the other gateway refuses the key within seconds, not when its key
 * cache would have expired (60 s).
 */
describe('a revocation during a Redis outage', () => {
  let db: TestDatabase;
  let redis: Awaited<ReturnType<typeof startPrivateRedis>>;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    const port = await freePort();
    redis = await startPrivateRedis(port);
    db = await createTestDatabase('postgres');
    const env = { DATABASE_URL: db.settings.databaseUrl!, REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'asgtest:revoke:' };
    a = await startTestGateway({ env });
    b = await startTestGateway({ env });
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await redis?.stop();
    await db?.destroy();
  });

  test('when a key is revoked through one gateway while Redis is down, then the other refuses it soon after Redis is back', async () => {
    const dev = await signUpDeveloper(a.url);
    const { id, key } = await dev.issueKey({ name: 'revoked in an outage' });
    const list = (gw: TestGateway) => fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });
    expect((await list(b)).status).toBe(200); // B now holds the key in its cache

    await redis.stop();
    await dev.revoke(id); // throws unless 204: the database has it, Redis is not needed to confirm it
    const onA = await list(a);
    expect(onA.status).toBe(401); // the revoking process dropped it at once
    expect(await jsonOf(onA)).toEqual({ code: 'unauthorized', message: 'This API key has been revoked.', status: 401 });

    redis = await startPrivateRedis(Number(new URL(redis.url).port));
    const backAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - backAt < 10_000) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await list(b)).status;
    }
    expect(status).toBe(401);
    expect(Date.now() - backAt).toBeLessThan(10_000); // far below the 60 s key-cache lifetime
  }, 60_000);
});
