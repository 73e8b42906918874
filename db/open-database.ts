import type { Database } from './database';
import { openPglite } from './pglite-database';
import { openPostgres } from './postgres-database';

/** DATABASE_URL set → PostgreSQL server; otherwise embedded PGlite under DATA_DIR. */
export function openDatabase(options: { databaseUrl?: string; dataDir?: string }): Promise<Database> {
  return options.databaseUrl ? openPostgres({ connectionString: options.databaseUrl }) : openPglite(options.dataDir);
}
