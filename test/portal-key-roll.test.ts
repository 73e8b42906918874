import { expectMatchesPortalContract } from './support/contract';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

const HOUR = 3_600_000;

/** Rolling a key through the portal API, with the real gateway answering both secrets and the clock moved past the overlap. */
describe('key roll with overlap', () => {
  let gw: TestGateway;
  let dev: Developer;

  const call = (key: string) => fetch(`${gw.url}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  const roll = (id: string, body: unknown) =>
    fetch(`${gw.url}/portal/api/keys/${id}/roll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.url, cookie: dev.cookie },
      body: JSON.stringify(body),
    });
  const listKeys = async () => {
    const body = await jsonOf(await fetch(`${gw.url}/portal/api/keys`, { headers: { cookie: dev.cookie } }));
    expectMatchesPortalContract('listApiKeys', 200, body);
    return body as Array<Record<string, unknown>>;
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    dev = await signUpDeveloper(gw.url);
  }, 30_000);
  afterEach(() => gw.clock.reset());
  afterAll(() => gw?.stop());

  test('when a key is rolled with a 1 h overlap, then both secrets work until the overlap ends and the old one then answers 401 as expired', async () => {
    const old = await dev.issueKey({ name: 'deploy bot', expiresInDays: 30 });
    expect((await call(old.key)).status).toBe(200);
    const res = await roll(old.id, { overlap: '1h' });
    expect(res.status).toBe(201);
    const fresh = await jsonOf(res);
    expect(fresh).toMatchObject({ name: 'deploy bot', environment: 'production', key: expect.stringMatching(/^asg_prod_/) });
    expect(fresh.key).not.toBe(old.key);
    expect((await call(old.key)).status).toBe(200);
    expect((await call(fresh.key)).status).toBe(200);

    const keys = await listKeys();
    const oldListed = keys.find((k) => k.id === old.id)!;
    const freshListed = keys.find((k) => k.id === fresh.id)!;
    expect(oldListed).toMatchObject({ status: 'active', rolledTo: fresh.id, rolledFrom: null, expiresSoon: true });
    expect(freshListed).toMatchObject({ status: 'active', rolledTo: null, rolledFrom: old.id, expiresSoon: false });
    const overlapEnds = new Date(oldListed.expiresAt as string).getTime();
    expect(overlapEnds - new Date(fresh.createdAt).getTime()).toBe(HOUR);
    // The successor lives as long as the old key was meant to: 30 days from its own creation.
    expect(new Date(fresh.expiresAt).getTime() - new Date(fresh.createdAt).getTime()).toBe(30 * 24 * HOUR);

    gw.clock.set(new Date(overlapEnds + 1000));
    const refused = await call(old.key);
    expect(refused.status).toBe(401);
    expect(await jsonOf(refused)).toEqual({ code: 'unauthorized', message: 'This API key has expired.', status: 401 });
    expect((await call(fresh.key)).status).toBe(200);
  });

  test('when a key without expiry is rolled with no overlap, then the old secret stops at once', async () => {
    const old = await dev.issueKey({ name: 'no overlap' });
    expect((await call(old.key)).status).toBe(200); // cached without an expiry: the roll must reach the cache
    const fresh = await jsonOf(await roll(old.id, { overlap: 'none' }));
    expect((await call(old.key)).status).toBe(401);
    expect((await call(fresh.key)).status).toBe(200);
    expect(fresh.expiresAt).toBeNull();
  });

  test('when either half of a roll is revoked, then both stop', async () => {
    const old = await dev.issueKey({ name: 'pair' });
    const fresh = await jsonOf(await roll(old.id, { overlap: '7d' }));
    await dev.revoke(fresh.id);
    expect((await call(old.key)).status).toBe(401);
    expect((await call(fresh.key)).status).toBe(401);
    const keys = await listKeys();
    expect(keys.filter((k) => k.id === old.id || k.id === fresh.id).map((k) => k.status)).toEqual(['revoked', 'revoked']);
  });

  test('when the newest or the oldest key of a key rolled twice is revoked, then all three stop', async () => {
    for (const revoked of ['newest', 'oldest'] as const) {
      const first = await dev.issueKey({ name: `chain ${revoked}` });
      const second = await jsonOf(await roll(first.id, { overlap: '7d' }));
      const third = await jsonOf(await roll(second.id, { overlap: '7d' }));
      const chain = [first, second, third];
      for (const key of chain) expect((await call(key.key)).status).toBe(200);

      await dev.revoke(revoked === 'newest' ? third.id : first.id);

      for (const key of chain) expect([revoked, (await call(key.key)).status]).toEqual([revoked, 401]);
      const listed = await listKeys();
      expect(chain.map((key) => listed.find((k) => k.id === key.id)!.status)).toEqual(['revoked', 'revoked', 'revoked']);
    }
  });

  test('when a revoked, expired or already rolled key is rolled, then the answer is a 409 Error', async () => {
    const revoked = await dev.issueKey({ name: 'gone' });
    await dev.revoke(revoked.id);
    expect(await jsonOf(await roll(revoked.id, { overlap: '1h' }))).toEqual({ code: 'conflict', message: 'This key is revoked; only an active key can be rolled.', status: 409 });

    // Rolled with no overlap, the old key expires at once (a session lasts 12 h, so the clock cannot move days here).
    const expired = await dev.issueKey({ name: 'short' });
    expect((await roll(expired.id, { overlap: 'none' })).status).toBe(201);
    expect(await jsonOf(await roll(expired.id, { overlap: '1h' }))).toEqual({ code: 'conflict', message: 'This key is expired; only an active key can be rolled.', status: 409 });

    const once = await dev.issueKey({ name: 'once' });
    expect((await roll(once.id, { overlap: '24h' })).status).toBe(201);
    expect(await jsonOf(await roll(once.id, { overlap: '24h' }))).toEqual({
      code: 'conflict',
      message: 'This key has already been rolled; roll its successor instead.',
      status: 409,
    });
  });

  test('when the overlap is not one of the offered ones, or the key is not the caller\'s, then the answer is a 400 or 404 Error', async () => {
    const key = await dev.issueKey({ name: 'bad input' });
    expect(await jsonOf(await roll(key.id, { overlap: '2h' }))).toEqual({ code: 'invalid_request', message: 'overlap must be "none", "1h", "24h", "7d".', status: 400 });
    expect((await roll(key.id, {})).status).toBe(400);
    expect((await roll(key.id, { overlap: '1h', extra: 1 })).status).toBe(400);
    const other = await signUpDeveloper(gw.url);
    const theirs = await other.issueKey({ name: 'theirs' });
    expect(await jsonOf(await roll(theirs.id, { overlap: '1h' }))).toEqual({ code: 'not_found', message: 'No API key with this id exists in your account.', status: 404 });
  });
});
