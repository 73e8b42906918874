import { createLogger } from '../lib/logger';
import { createTurnBatchedDestination } from '../lib/turn-batched-destination';
import { ADMIN_BASE_PATH } from './admin/admin-app';
import { rootCause } from './wiring/root-cause';
import { ConfigError, parseConfig } from './config';
import { ADMIN_OFF, createGateway } from './wiring/create-gateway';
import { exitGracefully } from './wiring/process-lifecycle';
import { keepTickShapesAlive } from '../lib/tick-shapes';

/** Stores get this long after the drain to close before the process gives up on them. */
const CLOSE_ALLOWANCE_MS = 15_000;

/** `npm start`: gateway, portal and embedded stores in one process. */
async function main(): Promise<void> {
  keepTickShapesAlive();
  // Everything the gateway writes (the embedded database, development secrets) is for its own user only.
  process.umask(0o077);
  let config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // A turn's log lines in one write from the event loop (turn-batched-destination.ts).
  const stdout = createTurnBatchedDestination();
  const logger = createLogger({ level: config.logLevel, destination: stdout });
  const gateway = createGateway(config, { logger });
  // Before start: a signal or a crash while starting also stops what has been opened so far.
  exitGracefully({ stop: gateway.stop, logger, hardDeadlineMs: config.shutdownTimeoutMs + CLOSE_ALLOWANCE_MS });
  const { url, bound, adminUrl } = await gateway.start();
  // The address bound, then a URL a client on this machine can call (a wildcard address is none; tests parse it).
  // Through the log's destination: after the start's log lines, whatever the reader's pace.
  stdout.writeAtOnce(`Animal Store Gateway listening on ${bound}, ready at ${url}  (OpenAPI: ${url}/openapi.json)\n`);
  stdout.writeAtOnce(adminUrl ? `Admin API at ${adminUrl}${ADMIN_BASE_PATH}/  (OpenAPI: ${adminUrl}/openapi.json)\n` : `Admin API ${ADMIN_OFF}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error && err.message ? err.message : rootCause(err)}\n`);
  process.exit(1);
});
