import { fstatSync, writeSync } from 'node:fs';
import pino from 'pino';

export interface FdSinkOptions {
  /** Where the lines go (stdout). */
  fd?: number;
  /** Bytes kept while the reader is behind (8 MiB); lines beyond them are dropped, and counted in a line once it catches up. */
  maxBacklogBytes?: number;
  /** How long the exit waits for a reader that is behind before it gives up on what is left (1 s). */
  exitPatienceMs?: number;
}

/** Where a destination's chunks of whole lines go. */
export interface LineSink {
  /** `urgent`: a line at `warn` or worse is in it, which is kept even beyond the bound. */
  write(chunk: string, urgent?: boolean): void;
  /** Writes what the reader has not taken yet, waiting a bounded time for it: on the way out. */
  drainBeforeExit(): void;
}

const RETRY_MS = 20;

/**
 * Stdout for the logs: the pipe sink below when stdout is a pipe or a socket, as under a process
 * manager, Docker or `npm start | …`; otherwise (a terminal, which Node leaves blocking, or a
 * file) pino's asynchronous destination, whose writes from libuv's thread pool never hold up the
 * event loop on a stopped terminal or a slow disk.
 */
export function createStdoutSink(options: Omit<FdSinkOptions, 'fd'> = {}): LineSink {
  if (isPipeOrSocket(1)) return createPipeSink({ ...options, fd: 1 });
  const sonic = pino.destination({ dest: 1, sync: false, minLength: 0 });
  return {
    write: (chunk) => void sonic.write(chunk),
    drainBeforeExit: () => {
      try {
        sonic.flushSync();
      } catch {
        // A closed or failing stdout: nothing more can be said on it.
      }
    },
  };
}

function isPipeOrSocket(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Writes each chunk with one system call, at once, from the event loop; a reader that falls
 * behind (a full pipe: EAGAIN) never stops the loop: the chunks wait in memory, up to a bound, and
 * are written on a timer once it reads again. pino's asynchronous destination keeps the loop
 * going too, but writes from libuv's thread pool: with a turn's lines handed to it in one write,
 * a cache hit logged at `info` on a 2-core VM cost 0.90× the CPU it costs through pino's default
 * destination; written from the event loop, 0.76–0.85× (docs/benchmarks.md), hence this
 * hand-written sink. A reader that has gone (EPIPE) or another error ends the logging, never the process.
 */
export function createPipeSink({ fd = 1, maxBacklogBytes = 8 * 1024 * 1024, exitPatienceMs = 1000 }: FdSinkOptions = {}): LineSink {
  // Chunks the reader has not taken yet, in order, and their sizes in bytes; the first may be the rest of a partial write.
  const backlog: Array<string | Buffer> = [];
  const sizes: number[] = [];
  let backlogBytes = 0;
  let dropped = 0;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  // Node sets a piped stdout non-blocking when it opens it: a write to a blocking pipe would wait for the reader.
  if (fd === 1) void process.stdout;

  const push = (chunk: string, bytes: number) => {
    backlog.push(chunk);
    sizes.push(bytes);
    backlogBytes += bytes;
  };

  /** Once half the bound is free again, or on the way out: the count of what was lost goes in, beyond the bound if need be. */
  const reportDropped = (now: boolean) => {
    if (dropped === 0 || (!now && backlogBytes > maxBacklogBytes / 2)) return;
    const notice = `${JSON.stringify({ level: 40, time: Date.now(), dropped, msg: 'log lines dropped: the reader of stdout fell behind' })}\n`;
    push(notice, Buffer.byteLength(notice));
    dropped = 0;
  };

  /** Writes the first chunk of the backlog; false when the reader has taken all it will for now. */
  const writeFirst = (): boolean => {
    const chunk = backlog[0]!;
    const bytes = sizes[0]!;
    let written: number;
    try {
      written = writeSync(fd, chunk as string); // a string or the Buffer left of one: writeSync takes both
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false;
      stop(err as Error);
      return false;
    }
    backlogBytes -= written;
    if (written === bytes) {
      backlog.shift();
      sizes.shift();
    } else {
      // A pipe takes a write of up to 4096 bytes whole or not at all; a longer line may go in part.
      backlog[0] = (typeof chunk === 'string' ? Buffer.from(chunk) : chunk).subarray(written);
      sizes[0] = bytes - written;
    }
    reportDropped(false);
    return true;
  };

  /** EPIPE (the reader has gone), EBADF…: no more logging, and no crash over it; said once on stderr. */
  const stop = (err: Error) => {
    closed = true;
    backlog.length = 0;
    sizes.length = 0;
    backlogBytes = 0;
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return;
    try {
      process.stderr.write(`logging stopped: stdout failed (${err.message})\n`);
    } catch {
      // stderr is gone too: nothing to tell anyone.
    }
  };

  const drain = () => {
    retry = undefined;
    while (backlog.length > 0 && !closed) {
      if (!writeFirst()) {
        if (!closed) retry = setTimeout(drain, RETRY_MS).unref();
        return;
      }
    }
  };

  return {
    write(chunk, urgent = false) {
      if (closed) return;
      const bytes = Buffer.byteLength(chunk);
      if (!urgent && backlog.length > 0 && backlogBytes + bytes > maxBacklogBytes) {
        dropped += countLines(chunk);
        return;
      }
      push(chunk, bytes);
      if (retry === undefined) drain();
    },
    drainBeforeExit() {
      clearTimeout(retry);
      retry = undefined;
      reportDropped(true);
      const giveUpAt = Date.now() + exitPatienceMs;
      while (backlog.length > 0 && !closed && Date.now() < giveUpAt) {
        if (!writeFirst()) sleepSync(RETRY_MS);
      }
    },
  };
}

function countLines(chunk: string): number {
  let lines = 0;
  for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) lines++;
  return lines;
}

/** Blocks the thread: only on the way out, when no timer will run again. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
