import pino, { type Logger } from 'pino';

export type { Logger };

/** What LOG_LEVEL accepts, for every process's config. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** JSON logs. Secrets are redacted even if a careless call passes them. */
export function createLogger(options: { level: string }): Logger {
  return pino({
    level: options.level,
    base: undefined,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'password', 'key', '*.password', '*.key'],
      censor: '[redacted]',
    },
  });
}
