import type { Database } from '../../db/database';
import { migrate } from '../../db/migrate';
import { petstoreMigrations } from '../../petstore/migrations';

/** The store the gateway serves under /v1 (see create-gateway.ts: `petstore_${environment}`). */
export const PRODUCTION_SCHEMA = 'petstore_production';

/**
 * Runs the store's real migrations, then fills `pets` with `rows` rows in one statement and
 * refreshes the planner's statistics. Ids are 1..rows; statuses repeat 60 % available,
 * 30 % pending, 10 % sold, so a status filter has work to skip. VACUUM too, so the table is in
 * the state it would reach in use, and autovacuum does not wake up in the middle of a measurement.
 */
export async function migrateAndFillPets(db: Database, rows: number): Promise<void> {
  await migrate(db, PRODUCTION_SCHEMA, petstoreMigrations);
  await db.exec(`
    INSERT INTO ${PRODUCTION_SCHEMA}.pets (name, category_id, status)
    SELECT 'Pet number ' || i, 1 + i % 5,
           CASE WHEN i % 10 < 6 THEN 'available' WHEN i % 10 < 9 THEN 'pending' ELSE 'sold' END
    FROM generate_series(1, ${Math.trunc(rows)}) AS i`);
  await db.exec(`VACUUM (ANALYZE) ${PRODUCTION_SCHEMA}.pets`); // alone: VACUUM refuses to run in a multi-statement string
}
