import Redis from 'ioredis';
import { deleteRedisKeys, redisTestPrefix, redisTestUrl } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';
import { startCountedPetStore } from './support/pet-store-upstream';

/** The list cache, counted at a real upstream, in process memory and in Redis. */
describe.each(['memory', 'redis'] as const)('the GET /pets cache (%s)', (backend) => {
  let upstream: Awaited<ReturnType<typeof startCountedPetStore>>;
  let gw: TestGateway;
  let dev: Developer;
  let redis: Redis | undefined;
  const prefix = redisTestPrefix();

  beforeAll(async () => {
    upstream = await startCountedPetStore();
    const env: Record<string, string> = { PRODUCTION_UPSTREAM: upstream.url, CACHE_TTL_SECONDS: '30' };
    if (backend === 'redis') {
      Object.assign(env, { REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix });
      redis = new Redis(redisTestUrl());
    }
    gw = await startTestGateway({ env });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
    if (redis) {
      await deleteRedisKeys(prefix, redis);
      redis.disconnect();
    }
  });

  const list = (query = '', key = dev.productionKey) => fetch(`${gw.url}/v1/pets${query}`, { headers: { authorization: `Bearer ${key}` } });
  const create = (name: string) =>
    fetch(`${gw.url}/v1/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${dev.productionKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, categoryId: 1 }),
    });
  const upstreamLists = () => upstream.count('GET', '/pets');

  test('when the same list is asked twice, then the second is a HIT served without the upstream, byte for byte', async () => {
    expect((await create('Cached')).status).toBe(201);
    const before = upstreamLists();
    const first = await list('?status=available');
    expect(first.headers.get('x-cache')).toBe('MISS');
    const firstBody = await first.text();
    const second = await list('?status=available');
    expect(second.status).toBe(200);
    expect(second.headers.get('x-cache')).toBe('HIT');
    expect(second.headers.get('age')).toMatch(/^\d+$/);
    expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(second.headers.get('ratelimit')).toMatch(/^"minute";r=\d+;t=\d+$/);
    expect(await second.text()).toBe(firstBody);
    expect(upstreamLists()).toBe(before + 1);
  });

  test('when the query differs only by the default limit or parameter order, then it shares one entry', async () => {
    await list('?limit=20&status=pending');
    const before = upstreamLists();
    expect((await list('?status=pending')).headers.get('x-cache')).toBe('HIT');
    expect((await list('?status=pending&limit=20')).headers.get('x-cache')).toBe('HIT');
    expect((await list('?status=pending&limit=19')).headers.get('x-cache')).toBe('MISS');
    expect(upstreamLists()).toBe(before + 1);
  });

  test('when a cached page has a next link, then the Link header is cached with it', async () => {
    for (let i = 0; i < 3; i++) await create(`Page ${i}`);
    const miss = await list('?limit=1');
    const hit = await list('?limit=1');
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(hit.headers.get('link')).toBe(miss.headers.get('link'));
    expect(hit.headers.get('link')).toMatch(/rel="next"$/);
  });

  test('when a pet is created, then the very next list includes it (read-your-writes)', async () => {
    await list('?limit=100');
    expect((await list('?limit=100')).headers.get('x-cache')).toBe('HIT');
    const pet = await jsonOf(await create('Fresh'));
    const after = await list('?limit=100');
    expect(after.headers.get('x-cache')).toBe('MISS');
    expect(await jsonOf(after)).toContainEqual(pet);
  });

  test('when a request has no valid key, then the cached body is not served', async () => {
    await list('?limit=3');
    expect((await list('?limit=3')).headers.get('x-cache')).toBe('HIT');
    const anonymous = await fetch(`${gw.url}/v1/pets?limit=3`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-cache')).toBeNull();
    const { id, key } = await dev.issueKey({ name: 'to revoke' });
    expect((await list('?limit=3', key)).headers.get('x-cache')).toBe('HIT');
    await dev.revoke(id);
    expect((await list('?limit=3', key)).status).toBe(401);
  });

  test('when many identical requests miss together, then the upstream sees exactly one', async () => {
    await create('Invalidate first');
    const before = upstreamLists();
    const responses = await Promise.all(Array.from({ length: 25 }, () => list('?limit=7')));
    expect(responses.map((r) => r.status)).toEqual(Array(25).fill(200));
    const verdicts = responses.map((r) => r.headers.get('x-cache'));
    expect(verdicts.filter((v) => v === 'MISS')).toHaveLength(1);
    expect(verdicts.filter((v) => v === 'HIT')).toHaveLength(24);
    const bodies = new Set(await Promise.all(responses.map((r) => r.text())));
    expect(bodies.size).toBe(1);
    expect(upstreamLists()).toBe(before + 1);
  });

  test('when staging is listed, then it never gets production entries', async () => {
    const prod = await list('?limit=2');
    expect(prod.status).toBe(200);
    const staging = await fetch(`${gw.url}/staging/v1/pets?limit=2`, { headers: { authorization: `Bearer ${dev.stagingKey}` } });
    expect(staging.headers.get('x-cache')).toBe('MISS');
    expect(await jsonOf(staging)).toEqual([]);
  });

  if (backend === 'redis') {
    test('when Redis loses the generation counter, then the next create still invalidates the copy this process holds', async () => {
      const genKey = `${prefix}cache:production:gen`;
      await redis!.set(genKey, '1');
      await list('?limit=13');
      expect((await list('?limit=13')).headers.get('x-cache')).toBe('HIT'); // from the process's copy, tagged generation 1
      await redis!.del(genKey); // a restart, flush or eviction
      const pet = await jsonOf(await create('After the loss'));
      // Counting again from 0 would reach 1, the copy's generation: the counter restarts at a random value instead.
      expect(Number(await redis!.get(genKey))).toBeGreaterThan(1);
      const after = await list('?limit=13');
      expect(after.headers.get('x-cache')).toBe('MISS');
      expect(await jsonOf(after)).toContainEqual(pet);
    });

    test('when entries are stored, then Redis holds them under the prefix with a TTL, and a create bumps the generation', async () => {
      await list('?limit=11');
      const keys = await redis!.keys(`${prefix}cache:production:*`);
      expect(keys).toEqual(expect.arrayContaining([`${prefix}cache:production:gen`, `${prefix}cache:production:q:limit=11`]));
      const ttl = await redis!.pttl(`${prefix}cache:production:q:limit=11`);
      expect(ttl).toBeGreaterThan(25_000);
      expect(ttl).toBeLessThanOrEqual(30_000);
      const gen = Number(await redis!.get(`${prefix}cache:production:gen`));
      await create('Bump');
      expect(Number(await redis!.get(`${prefix}cache:production:gen`))).toBe(gen + 1);
    });
  }
});

describe('the cache lifetime', () => {
  test('when CACHE_TTL_SECONDS has passed, then the next list goes upstream again', async () => {
    const upstream = await startCountedPetStore();
    const gw = await startTestGateway({ env: { PRODUCTION_UPSTREAM: upstream.url, CACHE_TTL_SECONDS: '1' } });
    try {
      const dev = await signUpDeveloper(gw.url);
      const list = () => fetch(`${gw.url}/v1/pets`, { headers: { authorization: `Bearer ${dev.productionKey}` } });
      expect((await list()).headers.get('x-cache')).toBe('MISS');
      expect((await list()).headers.get('x-cache')).toBe('HIT');
      await new Promise((r) => setTimeout(r, 1100));
      expect((await list()).headers.get('x-cache')).toBe('MISS');
      expect(upstream.count('GET', '/pets')).toBe(2);
    } finally {
      await gw.stop();
      await upstream.close();
    }
  });
});
