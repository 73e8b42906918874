import type { Logger } from '../../lib/logger';

/** Logs a dependency's outage once when it starts and once when it ends, never per request. */
export function createOutageLog(logger: Logger, dependency: string) {
  let down = false;
  return {
    failed(err: unknown): void {
      if (down) return;
      down = true;
      logger.warn({ err, dependency }, `${dependency} unavailable; bypassing it until it recovers`);
    },
    ok(): void {
      if (!down) return;
      down = false;
      logger.info({ dependency }, `${dependency} recovered`);
    },
    get down() {
      return down;
    },
  };
}
