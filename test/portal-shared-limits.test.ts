import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import Redis from 'ioredis';
import { createTestDatabase, redisTestPrefix, redisTestUrl, tempDir, type TestDatabase } from './support/databases';
import { startTestGateway, type TestGateway } from './support/gateway-harness';
import { spawnGateway, type GatewayProcess } from './support/gateway-process';
import { jsonOf } from './support/http';
import { startPrivateRedis } from './support/redis-server';

const PASSWORD = 'correct horse battery staple';

const post = (baseUrl: string, path: string, body: unknown) =>
  fetch(`${baseUrl}/portal/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/**
 * Two real gateway processes sharing one PostgreSQL and one Redis, as behind a load balancer:
 * the sign-in lockout and the sign-up allowance are one count for both, and outlive a restart.
 */
describe('portal limits shared by two gateway processes through Redis', () => {
  let db: TestDatabase;
  const dataDirs: string[] = [];
  const running: GatewayProcess[] = [];
  let env: Record<string, string>;
  let a: GatewayProcess;
  let b: GatewayProcess;

  const spawn = async () => {
    const dataDir = tempDir('asg-shared-limits-');
    dataDirs.push(dataDir);
    const gateway = await spawnGateway({ ...env, DATA_DIR: dataDir });
    running.push(gateway);
    return gateway;
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    env = {
      NODE_ENV: 'test',
      DATABASE_URL: db.settings.databaseUrl!,
      REDIS_URL: redisTestUrl(),
      REDIS_KEY_PREFIX: redisTestPrefix(),
      SESSION_SECRET: 'shared-limits-session-secret-0123456789',
      KEY_HASH_SECRET: 'shared-limits-key-hash-secret-0123456789',
    };
    [a, b] = await Promise.all([spawn(), spawn()]);
    expect((await post(a.url, 'signup', { email: 'shared@example.com', password: PASSWORD })).status).toBe(201); // the first sign-up counted
  }, 90_000);

  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    await db?.destroy();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('when an email fails 3 times through one process and 2 through the other, then both lock it out, and so does the first after a restart', async () => {
    for (const [gateway, i] of [[a, 0], [b, 1], [a, 2], [b, 3], [a, 4]] as const) {
      expect((await post(gateway.url, 'login', { email: 'shared@example.com', password: `wrong guess ${i}` })).status).toBe(401);
    }
    for (const gateway of [a, b]) {
      const res = await post(gateway.url, 'login', { email: 'shared@example.com', password: PASSWORD });
      expect(res.status).toBe(429);
      expect(await jsonOf(res)).toEqual({ code: 'rate_limited', message: 'Too many failed sign-in attempts for this account. Try again in 15 minutes.', status: 429 });
    }

    // The lockout is one Redis key under the deployment's prefix, expiring with the lockout, and its name spells out no email.
    const redis = new Redis(redisTestUrl());
    try {
      const pairKeys = await redis.keys(`${env.REDIS_KEY_PREFIX}login_fail_email_ip:*`);
      expect(pairKeys).toEqual([`${env.REDIS_KEY_PREFIX}login_fail_email_ip:${createHash('sha256').update('shared@example.com|127.0.0.1').digest('base64url')}`]);
      const ttl = await redis.pttl(pairKeys[0]!);
      expect(ttl).toBeGreaterThan(14 * 60_000);
      expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    } finally {
      redis.disconnect();
    }

    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    a = await spawn();
    const afterRestart = await post(a.url, 'login', { email: 'shared@example.com', password: PASSWORD });
    expect(afterRestart.status).toBe(429);
    expect(Number(afterRestart.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
  }, 90_000);

  test('when one address spends its sign-up allowance across both processes, then both refuse the next sign-up', async () => {
    // 1 sign-up so far; a weak password is refused after it is counted, so 19 more spend the allowance of 20 without hashing.
    for (let i = 0; i < 19; i++) {
      const gateway = i % 2 === 0 ? a : b;
      expect((await post(gateway.url, 'signup', { email: `weak${i}@example.com`, password: 'short' })).status).toBe(400);
    }
    for (const gateway of [a, b]) {
      const res = await post(gateway.url, 'signup', { email: 'one-too-many@example.com', password: PASSWORD });
      expect(res.status).toBe(429);
      expect(await jsonOf(res)).toEqual({ code: 'rate_limited', message: 'Too many sign-ups from your network. Try again in 60 minutes.', status: 429 });
    }
  });
});

describe('portal limits while Redis is away', () => {
  test('when Redis stops, then sign-up and sign-in still work and the lockout still holds (the in-memory insurance limiter)', async () => {
    const redis = await startPrivateRedis();
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway({ env: { REDIS_URL: redis.url } });
      expect((await post(gw.url, 'signup', { email: 'before@example.com', password: PASSWORD })).status).toBe(201);
      await redis.stop();

      expect((await post(gw.url, 'signup', { email: 'during@example.com', password: PASSWORD })).status).toBe(201);
      expect((await post(gw.url, 'login', { email: 'before@example.com', password: PASSWORD })).status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await post(gw.url, 'login', { email: 'during@example.com', password: `wrong guess ${i}` })).status).toBe(401);
      const locked = await post(gw.url, 'login', { email: 'during@example.com', password: PASSWORD });
      expect(locked.status).toBe(429);
      expect((await jsonOf(locked)).code).toBe('rate_limited');
    } finally {
      await gw?.stop();
      await redis.stop();
    }
  }, 60_000);
});
