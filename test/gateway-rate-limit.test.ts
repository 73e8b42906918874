import Redis from 'ioredis';
import { redisTestPrefix, redisTestUrl } from './support/databases';
import { signUpDeveloper, startTestGateway, type Developer, type TestGateway } from './support/gateway-harness';
import { jsonOf } from './support/http';

describe.each(['memory', 'redis'] as const)('rate limits (%s)', (backend) => {
  let gw: TestGateway;
  let dev: Developer;
  const prefix = redisTestPrefix();

  beforeAll(async () => {
    const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '5', ANONYMOUS_RATE_LIMIT_PER_MINUTE: '3' };
    if (backend === 'redis') Object.assign(env, { REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix });
    gw = await startTestGateway({ env });
    dev = await signUpDeveloper(gw.url);
  });
  afterAll(() => gw?.stop());

  const get = (path: string, key?: string, headers: Record<string, string> = {}) =>
    fetch(gw.url + path, { headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } });

  test('when an account uses its budget, then every response says what is left and the next one is 429 with Retry-After', async () => {
    const { productionKey: key } = await signUpDeveloper(gw.url);
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(i % 2 ? '/v1/pets?limit=0' : '/v1/pets', key); // 400s count too
      expect(res.headers.get('ratelimit-policy')).toBe('"minute";q=5;w=60');
      seen.push(res.headers.get('ratelimit')!);
    }
    expect(seen.map((h) => /r=(\d+)/.exec(h)![1])).toEqual(['4', '3', '2', '1', '0']);
    for (const h of seen) expect(h).toMatch(/^"minute";r=\d;t=(60|[1-5]\d|[1-9])$/);
    const refused = await get('/v1/pets', key);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toBe(`"minute";r=0;t=${retryAfter}`);
    expect(await jsonOf(refused)).toEqual({
      code: 'rate_limited',
      message: `Rate limit of 5 requests per 60 seconds exceeded; retry in ${retryAfter} s.`,
      status: 429,
    });
  });

  test('when two keys of one account send in one environment, then they spend one budget; staging and other accounts have their own', async () => {
    const owner = await signUpDeveloper(gw.url);
    const a = owner.productionKey;
    const b = (await owner.issueKey({ name: 'second production key' })).key;
    const remaining = async (key: string, path = '/v1/pets') => {
      const res = await get(path, key);
      return res.status === 200 ? /;r=(\d+);/.exec(res.headers.get('ratelimit')!)![1] : String(res.status);
    };
    expect([await remaining(a), await remaining(b), await remaining(a), await remaining(b), await remaining(b)]).toEqual(['4', '3', '2', '1', '0']);
    expect(await remaining(a)).toBe('429');
    expect(await remaining(b)).toBe('429');
    expect(await remaining(owner.stagingKey, '/staging/v1/pets')).toBe('4');
    expect(await remaining(dev.productionKey)).toBe('4');
  });

  test('when an over-budget request is also invalid, then 429 comes before 400', async () => {
    const { productionKey: key } = await signUpDeveloper(gw.url);
    for (let i = 0; i < 5; i++) await get('/v1/pets', key);
    expect((await get('/v1/pets?limit=abc', key)).status).toBe(429);
  });

  test('when requests carry no valid key, then they are limited per client IP: 401s, then 429', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.9' }; // ignored: TRUST_PROXY is off
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get('/v1/pets', `asg_prod_${'x'.repeat(43)}`, ip)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const last = await get('/v1/pets', undefined, ip);
    expect(last.status).toBe(429);
    expect(last.headers.get('ratelimit-policy')).toBe('"anonymous";q=3;w=60');
    // A valid key is not held back by the IP's failures.
    expect((await get('/v1/pets', (await signUpDeveloper(gw.url)).productionKey)).status).toBe(200);
  });

  if (backend === 'redis') {
    test('when counting in Redis, then the counters live under the configured prefix', async () => {
      const redis = new Redis(redisTestUrl());
      try {
        const keys = await redis.keys(`${prefix}rl:*`);
        expect(keys.some((k) => k.startsWith(`${prefix}rl:acct:production:`))).toBe(true);
        expect(keys.some((k) => k.startsWith(`${prefix}rl:acct:staging:`))).toBe(true);
        expect(keys.some((k) => k.startsWith(`${prefix}rl:ip`))).toBe(true);
        if (keys.length) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    });
  }
});

describe('client IPs behind a load balancer', () => {
  test('when TRUST_PROXY=true, then each X-Forwarded-For client has its own anonymous budget', async () => {
    const gw = await startTestGateway({ env: { TRUST_PROXY: 'true', ANONYMOUS_RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const from = (ip: string) => fetch(`${gw.url}/v1/pets`, { headers: { 'x-forwarded-for': `198.51.100.1, ${ip}` } });
      expect([(await from('10.0.0.1')).status, (await from('10.0.0.1')).status, (await from('10.0.0.1')).status]).toEqual([401, 401, 429]);
      expect((await from('10.0.0.2')).status).toBe(401);
    } finally {
      await gw.stop();
    }
  });
});
