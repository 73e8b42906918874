import { Writable } from 'node:stream';
import pino, { type Level, type Logger } from 'pino';

/**
 * A real pino logger at `level` whose JSON lines are parsed into `lines`, for tests that assert
 * what was logged. Pass the array when the test declared it before the logger.
 */
export function captureLogs<T = Record<string, unknown>>(level: Level, lines: T[] = []): { lines: T[]; logger: Logger } {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).trim().split('\n')) if (line) lines.push(JSON.parse(line) as T);
      done();
    },
  });
  return { lines, logger: pino({ level }, sink) };
}
