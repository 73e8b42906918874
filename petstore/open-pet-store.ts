import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Database } from '../db/database';
import type { Logger } from '../lib/logger';
import { migrate } from '../db/migrate';
import type { OperationTable } from '../openapi/operations';
import { createPetStoreApp } from './app';
import { petstoreMigrations } from './migrations';
import { createPetRepository } from './pet-repository';

export interface RunningPetStore {
  /** Base URL the gateway proxies to, e.g. http://127.0.0.1:41234 */
  url: string;
  close(): Promise<void>;
}

/** Migrates the store's schema and serves it on loopback (port 0 = any free port). */
export async function startPetStore(options: {
  db: Database;
  schema: string;
  operations: OperationTable;
  host?: string;
  port?: number;
  /** The embedding gateway's token, required on every request (see gateway-token.ts). */
  gatewayToken?: string;
  /** Where a request that fails with a 5xx is logged. */
  logger: Pick<Logger, 'error'>;
}): Promise<RunningPetStore> {
  await migrate(options.db, options.schema, petstoreMigrations);
  const app = createPetStoreApp({
    pets: createPetRepository(options.db, options.schema),
    operations: options.operations,
    gatewayToken: options.gatewayToken,
    logger: options.logger,
  });
  const host = options.host ?? '127.0.0.1';
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(options.port ?? 0, host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.keepAliveTimeout = 65_000; // longer than the gateway agent's idle timeout, so reused sockets are not closed under it
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
