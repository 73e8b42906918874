import type Redis from 'ioredis';
import { createRedis } from '../../lib/redis';
import { createRedisListCache } from './redis-list-cache';
import type { CachedResponse, ListCache } from './list-cache';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const entry = (body: string): CachedResponse => ({ storedAt: Date.now(), contentType: 'application/json', body: Buffer.from(body) });
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('Redis list cache: the process copy checked once per turn', () => {
  let redis: Redis;
  let other: Redis;
  let cache: ListCache;
  let otherProcess: ListCache;
  const prefix = `asgtest:${process.pid}:${Date.now()}:`;

  beforeAll(async () => {
    redis = createRedis(REDIS_URL, { connectionName: 'list-cache-test' });
    other = createRedis(REDIS_URL, { connectionName: 'list-cache-test-other' });
    await Promise.all([redis.connect(), other.connect()]);
    cache = createRedisListCache({ redis, prefix, ttlSeconds: 30 });
    otherProcess = createRedisListCache({ redis: other, prefix, ttlSeconds: 30 });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    other.disconnect();
  });

  test('the lookups of one turn share one answer; the next turn asks Redis again and sees a create from another process', async () => {
    const first = await cache.lookup('production', 'limit=20');
    await cache.store('production', 'limit=20', first.generation, entry('[1]'));

    const a = cache.lookup('production', 'limit=20');
    const b = cache.lookup('production', 'limit=20');
    expect(a).toBeInstanceOf(Promise);
    expect(b).toBe(a); // one promise for the turn, not one per request
    expect((await a).entry?.body.toString()).toBe('[1]');

    await otherProcess.invalidate('production'); // a create acknowledged elsewhere
    await nextTurn();
    const c = cache.lookup('production', 'limit=20');
    expect(c).not.toBe(a);
    expect((await c).entry).toBeUndefined();
  });
});
