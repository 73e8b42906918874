import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import type { Database } from '../../db/database';
import { openPglite } from '../../db/pglite-database';
import { openPostgres } from '../../db/postgres-database';

/**
 * A fresh, isolated store for one test file: PGlite, and a throw-away database on the test
 * PostgreSQL server (TEST_DATABASE_URL; the global setup makes sure one answers).
 */
export interface TestDatabase {
  name: 'pglite' | 'postgres';
  /** Connection settings for starting a whole gateway on this store. */
  settings: { dataDir?: string; databaseUrl?: string };
  open(): Promise<Database>;
  destroy(): Promise<void>;
}

/** Every database kind the product runs on: tests that touch the store run once on each. */
export function testDatabaseKinds(): Array<'pglite' | 'postgres'> {
  return ['pglite', 'postgres'];
}

/** An account row with a unique email, for tests of what belongs to an account (sessions, keys); resolves with its id. */
export async function insertAccount(db: Database): Promise<number> {
  const [row] = await db.query<{ id: number }>(`INSERT INTO accounts.accounts (email, password_hash) VALUES ($1, 'not-used') RETURNING id`, [
    `${randomUUID()}@example.com`,
  ]);
  return row!.id;
}

/** API key rows of `accountId` with the given ids (hashes of the ids, never looked up), for tests of what locks or counts keys. */
export async function insertKeys(db: Database, accountId: number, ids: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO accounts.api_keys (id, account_id, name, environment, prefix, hash)
     SELECT id, $2, 'k', 'production', 'p', encode(sha256(convert_to(id, 'UTF8')), 'hex') FROM unnest($1::text[]) AS id`,
    [ids, accountId],
  );
}

/** The real database, with every statement sent to it recorded, refusing INSERTs while `down` is set (an outage during a flush). */
export function watchedDatabase(db: Database): Database & { statements: string[]; down: boolean } {
  const watched = {
    ...db,
    statements: [] as string[],
    down: false,
    query: <R,>(sql: string, params?: readonly unknown[]) => {
      watched.statements.push(sql);
      if (watched.down && sql.trimStart().startsWith('INSERT')) return Promise.reject(new Error('connection terminated unexpectedly'));
      return db.query<R>(sql, params);
    },
  };
  return watched;
}

/** The PostgreSQL server tests create their throw-away databases on (CI and this machine run one locally). */
export function postgresAdminUrl(): string {
  return process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
}

/** The Redis server for tests; each test isolates itself with its own key prefix. */
export function redisTestUrl(): string {
  return process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379/0';
}

/** A fresh key prefix (REDIS_KEY_PREFIX) for one test's keys on the shared test Redis. */
export function redisTestPrefix(): string {
  return `asgtest:${randomBytes(4).toString('hex')}:`;
}

/**
 * Deletes every key under `prefix` on the test Redis: through `client` when given (left
 * connected), or through a client of its own, disconnected after.
 */
export async function deleteRedisKeys(prefix: string, client?: Redis): Promise<void> {
  const redis = client ?? new Redis(redisTestUrl());
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    if (!client) redis.disconnect();
  }
}

export function tempDir(prefix = 'asg-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * `icuLocale` creates the PostgreSQL database with that ICU collation (an en-US one orders text as
 * most hosted servers do, unlike the test servers' C); PGlite ignores it.
 */
export async function createTestDatabase(kind: 'pglite' | 'postgres', options: { icuLocale?: string } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const dataDir = tempDir();
    return {
      name: 'pglite',
      settings: { dataDir },
      open: () => openPglite(dataDir),
      destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const adminUrl = postgresAdminUrl();
  const dbName = `asg_test_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  const locale = options.icuLocale ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale}'` : '';
  await admin.query(`CREATE DATABASE ${dbName}${locale}`).catch(async (err: Error) => {
    const [{ server_version: version }] = (await admin.query('SHOW server_version')).rows;
    await admin.end();
    throw options.icuLocale ? new Error(`An ICU database needs PostgreSQL 15 or later built with ICU; ${adminUrl} runs ${version}: ${err.message}`) : err;
  });
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  return {
    name: 'postgres',
    settings: { databaseUrl },
    open: () => openPostgres({ connectionString: databaseUrl }),
    destroy: async () => {
      const c = new Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.end();
    },
  };
}
