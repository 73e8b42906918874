import { signUpDeveloper, startGatewayPair, type GatewayPair, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { startCountedPetStore } from './support/pet-store-upstream';
import { pollFor } from './support/until';

/**
 * Two gateway processes' worth of gateways sharing one PostgreSQL and one Redis, as behind a
 * load balancer: a key revoked through one is refused by the other within a second.
 */
describe('two gateways sharing PostgreSQL and Redis', () => {
  let pair: GatewayPair | undefined;
  let a: TestGateway;
  let b: TestGateway;
  let upstream: Awaited<ReturnType<typeof startCountedPetStore>>;

  beforeAll(async () => {
    upstream = await startCountedPetStore(); // staging stays embedded (shared schemas); production is counted
    // B's embedded stores share A's schemas on the same server.
    pair = await startGatewayPair({ env: { PRODUCTION_UPSTREAM: upstream.url, RATE_LIMIT_PER_MINUTE: '40' } });
    ({ a, b } = pair);
  }, 60_000);
  afterAll(async () => {
    await pair?.stop();
    await upstream?.close();
  });

  test('when both are ready, then /readyz reports the database and Redis', async () => {
    const res = await fetch(`${b.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
  });

  test('when a pet is created through one gateway in staging, then the other lists it (shared PostgreSQL schemas)', async () => {
    const dev = await signUpDeveloper(b.url);
    const auth = { authorization: `Bearer ${dev.stagingKey}` };
    const created = await jsonOf(
      await fetch(`${a.url}/staging/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Shared","categoryId":1}' }),
    );
    const listed = await jsonOf(await fetch(`${b.url}/staging/v1/pets?limit=100`, { headers: auth }));
    expect(listed).toContainEqual(created);
  });

  test('when a pet is created through one gateway, then a list cached by the other includes it next time', async () => {
    const dev = await signUpDeveloper(a.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    await fetch(`${b.url}/v1/pets?limit=100`, { headers: auth });
    expect((await fetch(`${b.url}/v1/pets?limit=100`, { headers: auth })).headers.get('x-cache')).toBe('HIT');
    const pet = await jsonOf(
      await fetch(`${a.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Across","categoryId":2}' }),
    );
    const after = await fetch(`${b.url}/v1/pets?limit=100`, { headers: auth });
    expect(after.headers.get('x-cache')).toBe('MISS');
    expect(await jsonOf(after)).toContainEqual(pet);
  });

  test('when pets are created through one gateway again and again, then every list through the other right after a 201 includes the pet, though it answered the list from its copy just before', async () => {
    const dev = await signUpDeveloper(a.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    await fetch(`${b.url}/v1/pets?limit=100&status=pending`, { headers: auth });
    for (let i = 0; i < 10; i++) { // 31 requests: within this file's budget of 40 a minute
      // B has just confirmed its copy is current, so its generation lease is fresh.
      expect((await fetch(`${b.url}/v1/pets?limit=100&status=pending`, { headers: auth })).headers.get('x-cache')).toBe('HIT');
      const pet = await jsonOf(
        await fetch(`${a.url}/v1/pets`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Lease ${i}`, categoryId: 3, status: 'pending' }),
        }),
      );
      const listed = await fetch(`${b.url}/v1/pets?limit=100&status=pending`, { headers: auth });
      expect(listed.headers.get('x-cache')).toBe('MISS');
      expect(await jsonOf(listed)).toContainEqual(pet);
    }
  });

  test('when both processes miss the same list at once, then the upstream sees at most one request per process', async () => {
    const dev = await signUpDeveloper(a.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    await fetch(`${a.url}/v1/pets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Invalidate","categoryId":2}' });
    const before = upstream.count('GET', '/pets');
    const burst = [a, b, a, b, a, b, a, b, a, b, a, b].map((gw) => fetch(`${gw.url}/v1/pets?limit=9`, { headers: auth }));
    const responses = await Promise.all(burst);
    expect(responses.map((r) => r.status)).toEqual(Array(12).fill(200));
    const calls = upstream.count('GET', '/pets') - before;
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(2);
    expect(responses.filter((r) => r.headers.get('x-cache') === 'MISS')).toHaveLength(calls);
  });

  test('when a key spends its budget across both processes, then both refuse it once the shared budget is gone', async () => {
    const dev = await signUpDeveloper(a.url);
    const auth = { authorization: `Bearer ${dev.productionKey}` };
    for (let i = 0; i < 20; i++) {
      expect((await fetch(`${a.url}/v1/pets`, { headers: auth })).status).toBe(200);
      expect((await fetch(`${b.url}/v1/pets`, { headers: auth })).status).toBe(200);
    }
    const last = await fetch(`${b.url}/v1/pets`, { headers: auth });
    expect(last.status).toBe(429);
    expect((await fetch(`${a.url}/v1/pets`, { headers: auth })).status).toBe(429);
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
    const { value: status } = await pollFor(async () => (await fetch(`${b.url}/staging/v1/pets`, { headers: auth })).status, (s) => s !== 200, { withinMs: 1000, since: revokedAt });
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  });
});
