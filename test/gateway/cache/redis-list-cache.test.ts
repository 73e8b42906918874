import type Redis from 'ioredis';
import { createRedis } from '../../../gateway/wiring/redis';
import { deleteRedisKeys, redisTestUrl } from '../../support/databases';
import { createRedisListCache } from '../../../gateway/cache/redis-list-cache';
import type { CachedResponse, CacheLookup, ListCache } from '../../../gateway/cache/list-cache';

const REDIS_URL = redisTestUrl();
const entry = (body: string): CachedResponse => ({ storedAt: Date.now(), contentType: 'application/json', body: Buffer.from(body) });
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Leases long enough to observe; the gateway's is GENERATION_LEASE_MS. */
const LEASE_MS = 300;

describe('Redis list cache: the process copy, known current through a generation lease', () => {
  let redis: Redis;
  let other: Redis;
  let monitor: Redis;
  let cache: ListCache;
  const prefix = `asgtest:${process.pid}:${Date.now()}:`;
  /** Every command Redis ran on this test's keys, as MONITOR saw it. */
  const commands: string[][] = [];

  beforeAll(async () => {
    redis = createRedis(REDIS_URL, { connectionName: 'list-cache-test' });
    other = createRedis(REDIS_URL, { connectionName: 'list-cache-test-other' });
    await Promise.all([redis.connect(), other.connect()]);
    monitor = await redis.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.some((a) => a.startsWith(prefix))) commands.push(args);
    });
    cache = createRedisListCache({ redis, prefix, ttlSeconds: 30, generationLeaseMs: LEASE_MS });
  });

  afterAll(async () => {
    await deleteRedisKeys(prefix, redis);
    redis.disconnect();
    other.disconnect();
    monitor.disconnect();
  });

  const generationReads = () => commands.filter(([cmd, key]) => cmd!.toLowerCase() === 'get' && key === `${prefix}cache:production:gen`).length;

  test('while the lease holds, hits come from the process copy at once, with no command to Redis; a create acknowledged by another process is seen by the next lookup', async () => {
    // The reader's clock stands still through the hit loop, however long a loaded machine takes over it: no renewal is due.
    let clock = 0;
    const cache = createRedisListCache({ redis, prefix, ttlSeconds: 30, generationLeaseMs: LEASE_MS, now: () => clock });
    const otherProcess = createRedisListCache({ redis: other, prefix, ttlSeconds: 30, generationLeaseMs: LEASE_MS });
    const first = await cache.lookup('production', 'limit=20');
    await cache.store('production', 'limit=20', first.generation, entry('[1]'));
    await redis.ping(); // MONITOR has reported everything sent so far
    const before = commands.length;

    for (let turn = 0; turn < 20; turn++) {
      for (let i = 0; i < 25; i++) {
        const hit = cache.lookup('production', 'limit=20');
        expect(hit).not.toBeInstanceOf(Promise);
        expect((hit as CacheLookup).entry?.body.toString()).toBe('[1]');
      }
      await nextTurn();
    }
    await redis.ping();
    expect(commands.slice(before)).toEqual([]); // 500 hits over 20 turns: not one command

    // A create elsewhere: its 201 waits until no lease granted before its increment still holds.
    const started = performance.now();
    await otherProcess.invalidate('production');
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_MS);
    clock += LEASE_MS; // as much time as the create waited, on the reader's clock
    const after = await cache.lookup('production', 'limit=20');
    expect(after.entry).toBeUndefined();
    expect(after.generation).not.toBe(first.generation);
  });

  test('when the lease runs out under steady lookups, then it is renewed ahead by one read, not one per turn', async () => {
    const first = await cache.lookup('production', 'limit=50');
    await cache.store('production', 'limit=50', first.generation, entry('[2]'));
    const readsBefore = generationReads();
    const started = performance.now();
    let turns = 0;
    let waited = 0;
    // At least 100 turns and 2.5 leases, however slow a loaded machine makes the turns.
    while (turns < 100 || performance.now() - started < 2.5 * LEASE_MS) {
      const found = cache.lookup('production', 'limit=50');
      if (found instanceof Promise) waited++;
      expect((await found).entry?.body.toString()).toBe('[2]');
      await nextTurn();
      turns++;
    }
    const elapsed = performance.now() - started;
    await redis.ping();
    const reads = generationReads() - readsBefore;
    // One read per half lease at most, plus the one that may be in flight: far fewer than the turns.
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(Math.floor(elapsed / (LEASE_MS / 2)) + 1);
    expect(waited).toBeLessThanOrEqual(1);
  });

  test("when an entry is read from Redis, then the process's copy holds its body in an allocation of its own, not a view on the reply's buffer", async () => {
    const otherProcess = createRedisListCache({ redis: other, prefix, ttlSeconds: 30, generationLeaseMs: LEASE_MS });
    const { generation } = await otherProcess.lookup('production', 'limit=7');
    await otherProcess.store('production', 'limit=7', generation, entry('[7]'));
    const read = await cache.lookup('production', 'limit=7');
    expect(read.entry?.body.toString()).toBe('[7]');
    expect(read.entry?.body.buffer.byteLength).toBe(3);
  });

  test('when the increment fails (Redis away), then the create still waits out the leases before it reports the failure', async () => {
    const away = createRedis(REDIS_URL, { connectionName: 'list-cache-test-away' }); // never connected: commands fail at once
    const creating = createRedisListCache({ redis: away, prefix, ttlSeconds: 30, generationLeaseMs: LEASE_MS });
    const started = performance.now();
    await expect(creating.invalidate('production')).rejects.toThrow(/writeable/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(LEASE_MS);
    away.disconnect();
  });
});
