import type { Logger } from '../../lib/logger';
import type { StopReport } from './create-gateway';

export interface ProcessLifecycleOptions {
  /** The gateway's graceful stop. */
  stop: () => Promise<StopReport>;
  logger: Logger;
  /** After this long the process exits with 1 even if the stop has not finished: a stop must never hang. */
  hardDeadlineMs: number;
  exit?: (code: number) => never;
}

/**
 * Ties the process to the gateway: SIGTERM/SIGINT stop it gracefully and exit 0 (1 when a store
 * failed to close); an uncaught exception or unhandled rejection is logged as fatal, then the
 * gateway stops gracefully and the process exits 1, since its state can no longer be trusted.
 */
export function exitGracefully({ stop, logger, hardDeadlineMs, exit = (code) => process.exit(code) }: ProcessLifecycleOptions): void {
  let exitCode = 0;
  let stopping = false;

  const shutDown = (code: number, reason: object, message: string) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) {
      // A second signal does not cut the drain short: in-flight requests are bounded by SHUTDOWN_TIMEOUT_MS anyway.
      logger.warn(reason, `${message}; already shutting down, still waiting for in-flight requests`);
      return;
    }
    stopping = true;
    logger.info(reason, `${message}; shutting down`);
    setTimeout(() => {
      logger.error({ hardDeadlineMs }, 'shutdown did not finish in time; exiting');
      exit(1);
    }, hardDeadlineMs).unref();
    stop().then(
      (report) => exit(report.closeFailures ? 1 : exitCode),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => shutDown(0, { signal }, `${signal} received`));
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    shutDown(1, {}, 'uncaught exception');
  });
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection');
    shutDown(1, {}, 'unhandled promise rejection');
  });
}
