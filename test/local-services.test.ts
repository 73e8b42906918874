import Redis from 'ioredis';
import { Client } from 'pg';
import { postgresAdminUrl, redisTestUrl } from './support/databases';
import { ensureLocalServices } from './support/local-services';
import { freePort } from '../bench/support/processes';

async function redisPing(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await redis.ping();
  } catch (err) {
    return (err as Error).message;
  } finally {
    redis.disconnect();
  }
}

async function postgresSelect(url: string): Promise<unknown> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query('SELECT 1 AS one')).rows[0];
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** What `npm test` does first (the global setup), so the suite runs on a machine whose servers are installed but stopped. */
describe('the servers the suite needs', () => {
  test('when Redis and PostgreSQL answer, then they are used as they are and nothing is started', async () => {
    const services = await ensureLocalServices({ redisUrl: redisTestUrl(), databaseUrl: postgresAdminUrl() });
    expect(services).toMatchObject({ redisUrl: redisTestUrl(), databaseUrl: postgresAdminUrl(), started: [] });
    await services.stop();
    expect(await redisPing(redisTestUrl())).toBe('PONG');
  });

  test('when neither answers, then a private redis-server and PostgreSQL cluster are started on free ports, answer, and are gone after stop', async () => {
    const closedRedis = `redis://127.0.0.1:${await freePort()}/0`;
    const closedPostgres = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    const services = await ensureLocalServices({ redisUrl: closedRedis, databaseUrl: closedPostgres });
    try {
      expect(services.started).toHaveLength(2);
      expect(services.redisUrl).not.toBe(closedRedis);
      expect(services.databaseUrl).not.toBe(closedPostgres);
      expect(await redisPing(services.redisUrl)).toBe('PONG');
      expect(await postgresSelect(services.databaseUrl)).toEqual({ one: 1 });
    } finally {
      await services.stop();
    }
    expect(await redisPing(services.redisUrl)).not.toBe('PONG');
    expect(await postgresSelect(services.databaseUrl)).not.toEqual({ one: 1 });
  });
});
