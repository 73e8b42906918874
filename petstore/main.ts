import { openDatabase } from '../db/open-database';
import { createLogger } from '../lib/logger';
import { createTurnBatchedDestination } from '../lib/turn-batched-destination';
import { loadOpenApiDocument } from '../openapi/document';
import { compileOperations } from '../openapi/operations';
import { parsePetStoreConfig } from './config';
import { startPetStore } from './open-pet-store';

/** `npm run start:petstore`: the embedded pet store on its own, as a remote upstream of a gateway. */
async function main(): Promise<void> {
  const config = parsePetStoreConfig(process.env);
  const stdout = createTurnBatchedDestination();
  const logger = createLogger({ level: config.logLevel, destination: stdout });
  const db = await openDatabase(config);
  const { gatewayToken } = config;
  const store = await startPetStore({
    db,
    schema: config.schema,
    operations: compileOperations(loadOpenApiDocument()),
    host: config.host,
    port: config.port,
    gatewayToken,
    logger,
  });
  // Whether it is open to any caller, never the token itself; after the start's log lines.
  stdout.writeAtOnce(`${JSON.stringify({ msg: 'pet store listening', url: store.url, schema: config.schema, gatewayOnly: gatewayToken !== undefined })}\n`);
  const stop = async () => {
    await store.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
