import pino, { type Logger } from 'pino';

export type { Logger };

/** What LOG_LEVEL accepts, for every process's config. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A buffered logger writes once this many bytes wait (about 16 request lines)… */
export const LOG_BUFFER_BYTES = 4096;
/** …or every this many ms, whichever comes first. */
export const LOG_FLUSH_MS = 100;

export interface LoggerOptions {
  level: string;
  /**
   * For a process's entry point, which owns its stdout: lines are kept until 4 kB wait or 100 ms
   * pass, and pino writes what is left when the process exits (a SIGKILL loses it). pino's own
   * destination hands each line to a libuv thread as it comes, a thread wake-up per request at
   * low traffic. Measured with wrk on a 2-core VM at LOG_LEVEL=info, a one-connection cache hit
   * took 0.22 ms (p50) and 170 µs of CPU that way, 0.11 ms and 107 µs buffered (docs/operations.md).
   * Unbuffered loggers (tests, embedded gateways) keep no timer and can be dropped.
   */
  buffered?: boolean;
  /** Where the lines go: stdout unless given. */
  fd?: number;
}

/** JSON logs. Secrets are redacted even if a careless call passes them. */
export function createLogger({ level, buffered = false, fd = 1 }: LoggerOptions): Logger {
  const destination = buffered
    ? pino.destination({ dest: fd, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS })
    : pino.destination({ dest: fd, sync: false });
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'password', 'key', '*.password', '*.key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
