import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Where benchmarks create their databases: BENCH_POSTGRES_URL, else the local server's `postgres` database. */
export const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  /** What a gateway needs to use it: DATABASE_URL and the secrets every process on one database shares. */
  env: Record<string, string>;
  url: string;
  drop(): Promise<void>;
}

/** A fresh database `name` (dropped first if a killed run left it), or undefined when PostgreSQL does not answer. */
export async function createBenchDatabase(name: string): Promise<BenchDatabase | undefined> {
  const admin = new Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  // A gateway on a shared database takes its secrets from the environment, never from its DATA_DIR.
  const env = { DATABASE_URL: url.toString(), SESSION_SECRET: randomBytes(32).toString('base64url'), KEY_HASH_SECRET: randomBytes(32).toString('base64url') };
  return {
    env,
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
