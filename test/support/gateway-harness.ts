import { rmSync } from 'node:fs';
import type { Database } from '../../db/database';
import { openDatabase } from '../../db/open-database';
import { parseConfig } from '../../gateway/config';
import { createGateway } from '../../gateway/wiring/create-gateway';
import type { Logger } from '../../lib/logger';
import type { OpenApiDocument } from '../../openapi/document';
import { createTestDatabase, deleteRedisKeys, redisTestPrefix, redisTestUrl, tempDir, type TestDatabase } from './databases';
import { jsonOf } from './http';

export interface TestClock {
  now: () => Date;
  set(date: Date | string): void;
  reset(): void;
}

/** A clock tests can move; real time until `set` is called, unless it starts at `startAt`. */
export function createTestClock(startAt?: Date | string): TestClock {
  let fixed = startAt === undefined ? undefined : new Date(startAt);
  return {
    now: () => fixed ?? new Date(),
    set: (date) => {
      fixed = new Date(date);
    },
    reset: () => {
      fixed = undefined;
    },
  };
}

export interface TestGateway {
  url: string;
  /** The admin listener's base URL, when ADMIN_TOKEN is set. */
  adminUrl?: string;
  clock: TestClock;
  /** The gateway's own database, when `exposeDatabase` was asked for: to check what it wrote. */
  db?: Database;
  stop(): Promise<void>;
}

/**
 * The real gateway (embedded stores, real HTTP on 127.0.0.1 port 0) on its own fresh
 * database: PGlite in a temp DATA_DIR, or its own PostgreSQL database when `database` says so.
 */
export async function startTestGateway(
  options: {
    env?: Record<string, string>;
    database?: 'pglite' | 'postgres';
    /** Open the database here and hand it to the gateway, so the test can query it (PGlite has one owner). */
    exposeDatabase?: boolean;
    logger?: Logger;
    sessionPurgeIntervalMs?: number;
    apiDocument?: OpenApiDocument;
    /** The clock's time from the start, so that what the gateway does as it starts (a session purge) sees it too. */
    startAt?: Date | string;
  } = {},
): Promise<TestGateway> {
  const dataDir = tempDir('asg-gw-');
  let testDb: TestDatabase | undefined;
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SESSION_SECRET: 'test-session-secret-0123456789abcdef',
    KEY_HASH_SECRET: 'test-key-hash-secret-0123456789abcdef',
  };
  if (options.database === 'postgres') {
    testDb = await createTestDatabase('postgres');
    env.DATABASE_URL = testDb.settings.databaseUrl!;
  }
  const clock = createTestClock(options.startAt);
  const config = parseConfig({ ...env, ...options.env });
  const db = options.exposeDatabase ? await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }) : undefined;
  const gateway = createGateway(config, {
    now: clock.now,
    logger: options.logger,
    sessionPurgeIntervalMs: options.sessionPurgeIntervalMs,
    apiDocument: options.apiDocument,
    database: db,
  });
  let started;
  try {
    started = await gateway.start();
  } catch (err) {
    await db?.close();
    throw err;
  }
  const { url, adminUrl } = started;
  return {
    url,
    adminUrl,
    clock,
    db,
    stop: async () => {
      await gateway.stop();
      await db?.close();
      await testDb?.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface GatewayPair {
  a: TestGateway;
  b: TestGateway;
  /** The PostgreSQL database both run on. */
  db: TestDatabase;
  /** Their REDIS_KEY_PREFIX on the test Redis. */
  prefix: string;
  /** Stops B, then A, drops the database and deletes the prefix's keys. */
  stop(): Promise<void>;
}

/**
 * Two gateways sharing one fresh PostgreSQL database and the test Redis under a fresh key prefix,
 * as behind a load balancer. `env` adds to the shared settings; `prepare` runs on the database
 * before either starts (e.g. prepareStore to set plans).
 */
export async function startGatewayPair(options: { env?: Record<string, string>; prepare?: (db: TestDatabase) => Promise<void> } = {}): Promise<GatewayPair> {
  const db = await createTestDatabase('postgres');
  const prefix = redisTestPrefix();
  const started: TestGateway[] = [];
  const stop = async () => {
    for (const gw of [...started].reverse()) await gw.stop();
    await db.destroy();
    await deleteRedisKeys(prefix);
  };
  try {
    await options.prepare?.(db);
    const env = { ...options.env, DATABASE_URL: db.settings.databaseUrl!, REDIS_URL: redisTestUrl(), REDIS_KEY_PREFIX: prefix };
    // One after the other, never at once: a starting gateway can hold this process's event loop long enough to time out the other's Redis commands (see admin-api-auth.test.ts).
    started.push(await startTestGateway({ env }));
    started.push(await startTestGateway({ env }));
  } catch (err) {
    await stop();
    throw err;
  }
  return { a: started[0]!, b: started[1]!, db, prefix, stop };
}

export interface Developer {
  /** The account's id, as the portal API answered the sign-up. */
  accountId: number;
  /** The account's email address, as the portal API answered the sign-up (lower-cased). */
  email: string;
  cookie: string;
  /** Full secrets of freshly issued keys. */
  productionKey: string;
  stagingKey: string;
  issueKey(body: Record<string, unknown>): Promise<{ id: string; key: string }>;
  revoke(id: string): Promise<void>;
}

let counter = 0;

/** Signs a developer up through the portal API and issues one key per environment, as a user would. */
export async function signUpDeveloper(baseUrl: string): Promise<Developer> {
  const email = `dev${process.pid}-${Date.now()}-${counter++}@example.com`;
  const signup = await fetch(`${baseUrl}/portal/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl },
    body: JSON.stringify({ email, password: 'correct horse battery staple' }),
  });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${await signup.text()}`);
  const cookie = signup.headers.get('set-cookie')!.split(';')[0]!;
  const account = (await jsonOf(signup)) as { id: number; email: string };
  const issueKey = async (body: Record<string, unknown>) => {
    const res = await fetch(`${baseUrl}/portal/api/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: baseUrl, cookie },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`key issue failed: ${res.status} ${await res.text()}`);
    return jsonOf(res);
  };
  const revoke = async (id: string) => {
    const res = await fetch(`${baseUrl}/portal/api/keys/${id}`, { method: 'DELETE', headers: { origin: baseUrl, cookie } });
    if (res.status !== 204) throw new Error(`revoke failed: ${res.status} ${await res.text()}`);
  };
  const productionKey = (await issueKey({ name: 'production key' })).key;
  const stagingKey = (await issueKey({ name: 'staging key', environment: 'staging' })).key;
  return { accountId: account.id, email: account.email, cookie, productionKey, stagingKey, issueKey, revoke };
}
