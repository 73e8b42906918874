import { postgresAdminUrl, redisTestUrl } from './databases';
import { ensureLocalServices, type LocalServices } from './local-services';

/**
 * Once before the suite: a Redis and a PostgreSQL the tests can reach (local-services.ts). The
 * URLs go to the test workers through TEST_REDIS_URL and TEST_DATABASE_URL, which they inherit.
 */
export default async function globalSetup(): Promise<void> {
  const services = await ensureLocalServices({ redisUrl: redisTestUrl(), databaseUrl: postgresAdminUrl() });
  process.env.TEST_REDIS_URL = services.redisUrl;
  process.env.TEST_DATABASE_URL = services.databaseUrl;
  for (const line of services.started) console.error(`\ntest setup: ${line}`);
  (globalThis as { localServices?: LocalServices }).localServices = services;
}
