import type { RequestContext } from '../pipeline/pipeline';
import { compactRecords, markLastPerKey } from './last-per-key';
import { RecordText } from './record-text';
import { MAX_RECORDS_PER_KEY, newRecordColumns, type RequestLogStore } from './request-log';

/**
 * A record is seen within a quarter of a second, and a flooded key costs a Redis store at most
 * four appends of its last 1,000 records a second: ten, at 100 ms, slowed the cache hit path
 * measurably (docs/benchmarks.md).
 */
const DEFAULT_WRITE_INTERVAL_MS = 250;
/** Records waiting for a write at most: 65,000 a second at the default interval, more than a process serves. */
const DEFAULT_BUFFER_CAPACITY = 16_384;

export interface RequestLogWriterOptions {
  store: RequestLogStore;
  /** The gateway's clock: records are timed by it. */
  now: () => Date;
  intervalMs?: number;
  capacity?: number;
  /** Told when a write fails (its batch is lost) and when one succeeds again: the outage is logged once. */
  outage: { failed(err: unknown): void; ok(): void };
}

export interface RequestLogWriterStats {
  /** Records lost because the buffer was full when their request ended. */
  droppedBufferFull: number;
  /** Records lost because the store failed to take their batch. */
  droppedStoreFailed: number;
}

export interface RequestLogWriter {
  /** Called once per finished request with a key: no await, no promise, no closure, no allocation. */
  record(ctx: RequestContext, method: string, status: number, ms: number): void;
  /** Writes what is buffered now (after a write under way); never rejects: a failed batch is counted and lost. */
  flush(): Promise<void>;
  stats(): RequestLogWriterStats;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
}

/**
 * The request log's write side. The hot path writes a record into a slot of a bounded buffer; a
 * timer hands the buffer to the store once per interval, one write at a time, so a busy key
 * costs the store one write per tick, not one per request. A full buffer drops records and a
 * failed write drops its batch: the log loses records, never requests.
 */
export function createRequestLogWriter(o: RequestLogWriterOptions): RequestLogWriter {
  const { store, now, outage } = o;
  const intervalMs = o.intervalMs ?? DEFAULT_WRITE_INTERVAL_MS;
  const capacity = o.capacity ?? DEFAULT_BUFFER_CAPACITY;
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error('The request log buffer capacity must be a positive integer');
  // One set of columns: a store copies what it needs before append returns, so it is free again at once.
  const columns = newRecordColumns(capacity);
  const { keyIds, methods, prefixes, apiPaths, searches, codes, caches, requestIds, statuses, latencyTenths, times } = columns;
  const text = new RecordText(capacity);
  const kept = new Uint8Array(capacity);
  let count = 0;
  let writing: Promise<void> | undefined;
  const stats: RequestLogWriterStats = { droppedBufferFull: 0, droppedStoreFailed: 0 };

  /**
   * Hands the buffered records to the store, timed by the clock, and empties the buffer. Only
   * each key's last MAX_RECORDS_PER_KEY go, the most a store keeps: a key flooding one gateway
   * at 60k requests a second fills the buffer 15 times over that, and turning the rest back into
   * strings cost every request of it (docs/benchmarks.md).
   */
  const take = (): { appended: Promise<void> | void; taken: number } => {
    const taken = count;
    markLastPerKey(keyIds, taken, MAX_RECORDS_PER_KEY, kept);
    text.restore(columns, taken, kept);
    const sent = compactRecords(columns, taken, kept);
    const nowMs = now().getTime();
    // A record ended (performance.now() - its end) ms before the clock's now.
    const shift = nowMs - performance.now();
    for (let i = 0; i < sent; i++) times[i] = shift + times[i]!;
    let appended: Promise<void> | void;
    try {
      appended = store.append({ ...columns, count: sent }, nowMs);
    } catch (err) {
      appended = Promise.reject(err);
    }
    // The store took what it needs: the strings may go.
    for (const column of [keyIds, methods, prefixes, apiPaths, searches, codes, caches, requestIds]) column.fill(undefined, 0, taken);
    count = 0;
    return { appended, taken };
  };

  const write = async (): Promise<void> => {
    const { appended, taken } = take();
    try {
      await appended;
      outage.ok();
    } catch (err) {
      stats.droppedStoreFailed += taken;
      outage.failed(err);
    }
  };

  const flush = (): Promise<void> => {
    if (writing) return writing.then(flush);
    if (count === 0) return Promise.resolve();
    writing = write().finally(() => {
      writing = undefined;
    });
    return writing;
  };

  const timer = setInterval(() => {
    if (!writing && count > 0) void flush();
  }, intervalMs);
  timer.unref();

  return {
    record(ctx, method, status, ms) {
      const i = count;
      if (i === capacity) {
        stats.droppedBufferFull++;
        return;
      }
      count = i + 1;
      keyIds[i] = ctx.keyId;
      methods[i] = method;
      prefixes[i] = ctx.prefix;
      text.put(columns, i, ctx.requestId, ctx.apiPath, ctx.search);
      codes[i] = ctx.errorCode;
      caches[i] = ctx.cacheStatus;
      statuses[i] = status;
      latencyTenths[i] = ms * 10 + 0.5;
      times[i] = ctx.startedAt + ms;
    },
    flush,
    stats: () => ({ ...stats }),
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
