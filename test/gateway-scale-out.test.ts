import { randomBytes } from 'node:crypto';
import { createTestDatabase, redisTestUrl, type TestDatabase } from './support/databases';
import { signUpDeveloper, startTestGateway, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

/**
 * Two gateway processes' worth of gateways sharing one PostgreSQL and one Redis, as behind a
 * load balancer: a key revoked through one is refused by the other within a second.
 */
describe('two gateways sharing PostgreSQL and Redis', () => {
  let db: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const env = {
      DATABASE_URL: db.settings.databaseUrl!,
      REDIS_URL: redisTestUrl(),
      REDIS_KEY_PREFIX: `asgtest:${randomBytes(4).toString('hex')}:`,
    };
    a = await startTestGateway({ env });
    b = await startTestGateway({ env }); // its embedded stores share A's schemas on the same server
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await db?.destroy();
  });

  test('when both are ready, then /readyz reports the database and Redis', async () => {
    const res = await fetch(`${b.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
  });

  test('when a pet is created through one gateway, then the other lists it', async () => {
    const dev = await signUpDeveloper(b.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    const created = await jsonOf(
      await fetch(`${a.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Shared","categoryId":1}' }),
    );
    const listed = await jsonOf(await fetch(`${b.url}/v1/pets?limit=100`, { headers: auth }));
    expect(listed).toContainEqual(created);
  });

  test('when a key is revoked through one gateway, then the other refuses it within one second', async () => {
    const dev = await signUpDeveloper(a.url);
    const auth = { authorization: `Bearer ${dev.stagingKey}` };
    // Both gateways have verified (and cached) the key.
    expect((await fetch(`${a.url}/staging/v1/pets`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${b.url}/staging/v1/pets`, { headers: auth })).status).toBe(200);
    const keys = await jsonOf(await fetch(`${a.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    const staging = keys.find((k: { environment: string }) => k.environment === 'staging');
    const revokedAt = Date.now();
    await dev.revoke(staging.id);
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 1000) {
      status = (await fetch(`${b.url}/staging/v1/pets`, { headers: auth })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  });
});
