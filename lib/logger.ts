import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** What LOG_LEVEL accepts, for every process's config. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * JSON logs. Secrets are redacted even if a careless call passes them. Written through pino's
 * default destination (stdout) unless given another: the gateway's and the pet store's mains
 * give the turn-batched one (turn-batched-destination.ts).
 */
export function createLogger(options: { level: string; destination?: DestinationStream }): Logger {
  const settings = {
    level: options.level,
    base: undefined,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'password', 'key', '*.password', '*.key'],
      censor: '[redacted]',
    },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
