import pino, { type Logger } from 'pino';

export type { Logger };

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
