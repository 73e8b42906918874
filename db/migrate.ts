import { createHash } from 'node:crypto';
import { ident, type Database } from './database';

export interface Migration {
  id: string;
  /** SQL for the migration; `schema` is already quoted. */
  sql: (schema: string) => string;
}

/**
 * Applies pending migrations to one schema, once, even when several processes start together
 * on the same PostgreSQL (an advisory lock serialises them).
 */
export async function migrate(db: Database, schemaName: string, migrations: readonly Migration[]): Promise<void> {
  const schema = ident(schemaName);
  const lockKey = createHash('sha256').update(schemaName).digest().readInt32BE(0);
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ id: string }>(`SELECT id FROM ${schema}.schema_migrations`)).map((r) => r.id));
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      await tx.exec(migration.sql(schema));
      await tx.query(`INSERT INTO ${schema}.schema_migrations (id) VALUES ($1)`, [migration.id]);
    }
  });
}
