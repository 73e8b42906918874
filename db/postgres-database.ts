import { Pool, types as pgTypes } from 'pg';
import type { Database, Queryable } from './database';
import { asUnavailable } from './unavailable';

const INT8 = 20;

export interface PostgresOptions {
  connectionString: string;
  max?: number;
  /** Bounds every wait so an unreachable server yields a 503, never a hang. */
  connectTimeoutMs?: number;
  queryTimeoutMs?: number;
}

export async function openPostgres(options: PostgresOptions): Promise<Database> {
  const pool = new Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    query_timeout: options.queryTimeoutMs ?? 5000,
    idleTimeoutMillis: 30_000,
    // Per-pool parsers: no global mutation of the pg module. Ids stay far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? (v: string) => Number(v) : pgTypes.getTypeParser(oid, format as 'text')) as typeof pgTypes.getTypeParser,
    },
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});

  const wrap =
    (run: (sql: string, params: unknown[]) => Promise<{ rows: unknown[] }>) =>
    async <R>(sql: string, params: readonly unknown[] = []): Promise<R[]> => {
      try {
        return (await run(sql, params as unknown[])).rows as R[];
      } catch (err) {
        throw asUnavailable(err);
      }
    };

  const db: Database = {
    kind: 'postgres',
    query: wrap((sql, params) => pool.query(sql, params)),
    exec: async (sql) => {
      await wrap((text) => pool.query(text))(sql);
    },
    transaction: async <T>(fn: (tx: Queryable) => Promise<T>) => {
      let client;
      try {
        client = await pool.connect();
      } catch (err) {
        throw asUnavailable(err);
      }
      try {
        await client.query('BEGIN');
        const query = wrap((sql, params) => client.query(sql, params));
        const result = await fn({ query, exec: async (sql) => void (await query(sql)) });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw asUnavailable(err);
      } finally {
        client.release();
      }
    },
    ping: async () => {
      await db.query('SELECT 1');
    },
    close: () => pool.end(),
  };
  await db.ping();
  return db;
}
