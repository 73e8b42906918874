import type Redis from 'ioredis';
import { createBudgetLeases } from '../../gateway/rate-limit/budget-leases';
import { createMonthCounter } from '../../gateway/rate-limit/month-counter';
import { createRedis } from '../../gateway/wiring/redis';
import { deleteRedisKeys, redisTestUrl } from '../support/databases';

const NOVEMBER_END = Date.UTC(2026, 11, 1);
const DAY_MS = 86_400_000;

/** Seeds from a table the test fills, with every read recorded. */
function seedTable(rows: Record<string, number> = {}) {
  const reads: string[] = [];
  return {
    reads,
    seed: async (accountId: string, month: string) => {
      reads.push(`${accountId}@${month}`);
      return rows[`${accountId}@${month}`] ?? 0;
    },
  };
}

describe('month counter in Redis', () => {
  let redis: Redis;
  const prefix = `asgtest:${process.pid}:${Date.now()}:quota:`;
  const now = Date.UTC(2026, 10, 20, 12);

  beforeAll(async () => {
    redis = createRedis(redisTestUrl(), { connectionName: 'month-counter-test' });
    await redis.connect();
  });
  afterAll(async () => {
    await deleteRedisKeys(prefix, redis);
    redis.disconnect();
  });

  test('when Redis has no count for the account this month, then one process seeds it from the database and every other process finds it there', async () => {
    const table = seedTable({ '11@2026-11-01': 500 });
    const first = createMonthCounter({ redis, keyPrefix: prefix, seed: table.seed, clock: () => now });
    const second = createMonthCounter({ redis, keyPrefix: prefix, seed: table.seed, clock: () => now });
    expect(await first.take('11', 3)).toEqual({ consumed: 503, resetAt: NOVEMBER_END });
    expect(await second.take('11', 2)).toEqual({ consumed: 505, resetAt: NOVEMBER_END });
    expect(await first.take('11', 1)).toEqual({ consumed: 506, resetAt: NOVEMBER_END });
    expect(table.reads).toEqual(['11@2026-11-01']);
    expect(await redis.get(`${prefix}11:2026-11`)).toBe('506');
    // The key outlives the month by a day, then goes.
    const ttl = await redis.pttl(`${prefix}11:2026-11`);
    expect(ttl).toBeGreaterThan(NOVEMBER_END - now + DAY_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(NOVEMBER_END - now + DAY_MS);
  });

  test('when Redis loses a count this process has seeded, then it starts again from that seed without reading the database again', async () => {
    const table = seedTable({ '12@2026-11-01': 40 });
    const counter = createMonthCounter({ redis, keyPrefix: prefix, seed: table.seed, clock: () => now });
    expect((await counter.take('12', 1)).consumed).toBe(41);
    await redis.del(`${prefix}12:2026-11`);
    expect((await counter.take('12', 1)).consumed).toBe(41);
    expect(table.reads).toEqual(['12@2026-11-01']);
    // A process that has not read it yet reads the database once.
    const fresh = createMonthCounter({ redis, keyPrefix: prefix, seed: table.seed, clock: () => now });
    await redis.del(`${prefix}12:2026-11`);
    expect((await fresh.take('12', 1)).consumed).toBe(41);
    expect(table.reads).toEqual(['12@2026-11-01', '12@2026-11-01']);
  });

  test('when Redis is unreachable, then the process counts on its own from the database count', async () => {
    const table = seedTable({ '13@2026-11-01': 7 });
    const away = createRedis('redis://127.0.0.1:1/0', { connectionName: 'month-counter-away' }); // never connected: every command fails at once
    try {
      const counter = createMonthCounter({ redis: away, keyPrefix: prefix, seed: table.seed, clock: () => now });
      expect(await counter.take('13', 2)).toEqual({ consumed: 9, resetAt: NOVEMBER_END });
      expect(await counter.take('13', 1)).toEqual({ consumed: 10, resetAt: NOVEMBER_END });
      expect(table.reads).toEqual(['13@2026-11-01']);
    } finally {
      away.disconnect();
    }
  });

  test('when two processes spend one monthly quota through leases, then together they admit exactly the quota', async () => {
    const table = seedTable({ '14@2026-11-01': 100 });
    const quota = 1100;
    const processes = [0, 1].map(() =>
      createBudgetLeases({ counter: createMonthCounter({ redis, keyPrefix: prefix, seed: table.seed, clock: () => now }), windowMs: 28 * DAY_MS, clock: () => now }),
    );
    let admitted = 0;
    for (let i = 0; i < 1500; i++) if ((await Promise.resolve(processes[i % 2]!.consume('14', quota))).allowed) admitted++;
    // Taken before spent: never more than the quota; and with requests enough to spend every token both took, not fewer.
    expect(admitted).toBe(quota - 100);
  });
});
