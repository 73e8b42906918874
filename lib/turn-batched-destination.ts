import pino from 'pino';
import { createStdoutSink, type LineSink } from './stdout-sink';

/** Linux's PIPE_BUF: a write of at most this many bytes to a pipe lands whole, never interleaved with another process's. */
const ATOMIC_WRITE_BYTES = 4096;
/** pino's number for `warn`: a line this severe or worse is written at once, not at the turn's end. */
const WARN = 40;

/** A pino destination, with a way for the process to write its own lines in order with the logs. */
export interface TurnBatchedDestination {
  write(line: string): void;
  // pino sets lastLevel before each write when the destination asks for it with this symbol.
  [pino.symbols.needsMetadataGsym]: true;
  lastLevel: number;
  flush(cb?: (err?: Error) => void): void;
  /** Writes `text` (whole lines: a ready line) after the lines logged before it, at once. */
  writeAtOnce(text: string): void;
}

/**
 * A log destination that writes a turn's lines together at its end, from the event loop. pino's
 * default destination hands each line, or what gathered while its last write was out, to libuv's
 * thread pool: at `info`, a cache hit cost 1.46× the CPU it costs at `warn` on a 2-core VM, and
 * 1.27× through this destination (docs/benchmarks.md). Lines are written whole, in writes no
 * larger than a pipe takes atomically, so processes sharing a log pipe never cut each other's
 * lines. A line at `warn` or worse goes out at once with whatever waits before it, and what
 * waits is written before the process exits (`process.exit` and a crash included), so a crash's
 * last words are not lost; only SIGKILL loses the turn's lines.
 */
export function createTurnBatchedDestination(sink: LineSink = createStdoutSink()): TurnBatchedDestination {
  let waiting: string[] = [];
  let scheduled = false;

  const writeWaiting = (urgent = false) => {
    scheduled = false;
    if (waiting.length === 0) return;
    const lines = waiting;
    waiting = [];
    let chunk = '';
    let chunkBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (chunkBytes > 0 && chunkBytes + bytes > ATOMIC_WRITE_BYTES) {
        sink.write(chunk, urgent);
        chunk = '';
        chunkBytes = 0;
      }
      chunk += line;
      chunkBytes += bytes;
    }
    sink.write(chunk, urgent);
  };
  process.on('exit', () => {
    writeWaiting();
    sink.drainBeforeExit();
  });

  return {
    [pino.symbols.needsMetadataGsym]: true,
    lastLevel: 0,
    write(line: string) {
      waiting.push(line);
      if (this.lastLevel >= WARN) writeWaiting(true);
      else if (!scheduled) {
        scheduled = true;
        setImmediate(writeWaiting); // called with no argument: not urgent
      }
    },
    flush(cb) {
      writeWaiting();
      cb?.();
    },
    writeAtOnce(text) {
      waiting.push(text);
      writeWaiting(true);
    },
  };
}
