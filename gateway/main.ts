import { ConfigError, parseConfig } from './config';
import { createGateway } from './create-gateway';

/** `npm start`: gateway, portal and embedded stores in one process. */
async function main(): Promise<void> {
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
  const gateway = createGateway(config);
  const { url } = await gateway.start();
  process.stdout.write(`Animal Store Gateway ready at ${url}  (OpenAPI: ${url}/openapi.json)\n`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal} received, shutting down\n`);
    gateway.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: Error) => {
  process.stderr.write(`Failed to start: ${err.message}\n`);
  process.exit(1);
});
