import type { Database } from '../../db/database';
import { openPglite } from '../../db/pglite-database';
import { createLogger } from '../../lib/logger';
import { loadOpenApiDocument } from '../../openapi/document';
import { compileOperations } from '../../openapi/operations';
import { startPetStore } from '../../petstore/open-pet-store';
import { startCountingProxy } from './counting-proxy';

/** A real pet store (in-memory PGlite) behind a counting forwarder: the upstream for cache tests. */
export async function startCountedPetStore() {
  const db: Database = await openPglite();
  const store = await startPetStore({ db, schema: 'petstore_production', operations: compileOperations(loadOpenApiDocument()), logger: createLogger({ level: 'error' }) });
  const proxy = await startCountingProxy(store.url);
  return {
    url: proxy.url,
    count: proxy.count,
    close: async () => {
      await proxy.close();
      await store.close();
      await db.close();
    },
  };
}
