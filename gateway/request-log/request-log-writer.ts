import type { RequestContext } from '../pipeline/pipeline';
import { lastPerKey } from './last-per-key';
import { RecordText } from './record-text';
import { clearRecordStrings, copyRecord, MAX_RECORDED_PATH, MAX_RECORDS_PER_KEY, newRecordColumns, recordedPath, type RecordColumns, type RequestLogStore } from './request-log';

/**
 * A record is seen within a quarter of a second, and a flooded key costs a Redis store at most
 * four appends of its last 1,000 records a second: ten, at 100 ms, slowed the cache hit path
 * measurably (docs/benchmarks.md).
 */
const DEFAULT_WRITE_INTERVAL_MS = 250;
/** Records waiting for a write at most: 65,000 a second at the default interval, more than a process serves. */
const DEFAULT_BUFFER_CAPACITY = 16_384;
/**
 * Records handed to the store in one turn of the event loop at most: each costs a few µs to turn
 * back into strings and store (a line of JSON for Redis), and a flooded key's 1,000 at once held
 * every request in flight for milliseconds (docs/benchmarks.md).
 */
const DEFAULT_CHUNK = 256;

export interface RequestLogWriterOptions {
  store: RequestLogStore;
  /** The gateway's clock: records are timed by it. */
  now: () => Date;
  intervalMs?: number;
  capacity?: number;
  /** Records handed to the store per turn at most. */
  chunk?: number;
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

/** Records as they end, until a write takes them: their columns and their text. */
interface RecordBuffer {
  readonly columns: RecordColumns;
  readonly text: RecordText;
  count: number;
}

function newRecordBuffer(capacity: number): RecordBuffer {
  return { columns: newRecordColumns(capacity), text: new RecordText(capacity), count: 0 };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The request log's write side. The hot path writes a record into a slot of a bounded buffer; a
 * timer hands the buffer to the store once per interval, one write at a time, so a busy key
 * costs the store one write per tick, not one per request. A write takes the buffer whole and
 * records go on into a second one meanwhile; it hands the store `chunk` records a turn, so
 * requests are served between its parts. A full buffer drops records and a failed append drops
 * its records: the log loses records, never requests.
 */
export function createRequestLogWriter(o: RequestLogWriterOptions): RequestLogWriter {
  const { store, now, outage } = o;
  const intervalMs = o.intervalMs ?? DEFAULT_WRITE_INTERVAL_MS;
  const capacity = o.capacity ?? DEFAULT_BUFFER_CAPACITY;
  const chunk = o.chunk ?? DEFAULT_CHUNK;
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error('The request log buffer capacity must be a positive integer');
  if (!Number.isInteger(chunk) || chunk < 1) throw new Error('The request log chunk must be a positive integer');
  let filling = newRecordBuffer(capacity);
  let spare = newRecordBuffer(capacity);
  // A store copies what it needs before append returns, so one set of columns serves every part.
  const part = newRecordColumns(chunk);
  let writing: Promise<void> | undefined;
  const stats: RequestLogWriterStats = { droppedBufferFull: 0, droppedStoreFailed: 0 };

  /** Copies record `i` of `taken` into slot `n` of `part`, timed by the clock (`shift`). */
  const copyToPart = (taken: RecordBuffer, i: number, n: number, shift: number): void => {
    copyRecord(taken.columns, i, part, n);
    taken.text.restoreInto(i, taken.columns, part, n);
    // A record ended (performance.now() - its end) ms before the clock's now.
    part.times[n] = shift + part.times[n]!;
  };

  /** The part to the store, which takes what it needs at once; resolves false (its records counted lost) if it fails. */
  const append = (count: number, nowMs: number): Promise<boolean> => {
    let appended: Promise<void> | void;
    try {
      appended = store.append({ ...part, count }, nowMs);
    } catch (err) {
      appended = Promise.reject(err);
    }
    clearRecordStrings(part, count);
    return Promise.resolve(appended).then(
      () => true,
      (err: unknown) => {
        stats.droppedStoreFailed += count;
        outage.failed(err);
        return false;
      },
    );
  };

  /**
   * Hands the buffered records to the store, a part a turn, and frees the buffer. Only each
   * key's last MAX_RECORDS_PER_KEY go, the most a store keeps: a key flooding one gateway at 60k
   * requests a second fills the buffer 15 times over that, and turning the rest back into
   * strings cost every request of it (docs/benchmarks.md). A key's records stay together: a part
   * ends early rather than split a key that would fit whole in the next.
   */
  const write = async (): Promise<void> => {
    const nowMs = now().getTime();
    const shift = nowMs - performance.now();
    const taken = filling;
    filling = spare;
    const appended: Array<Promise<boolean>> = [];
    let n = 0;
    const sendPart = () => {
      appended.push(append(n, nowMs));
      n = 0;
    };
    try {
      for (const slots of lastPerKey(taken.columns.keyIds, taken.count, MAX_RECORDS_PER_KEY)) {
        if (n > 0 && slots.length > chunk - n && slots.length <= chunk) {
          sendPart();
          await nextTurn();
        }
        for (const i of slots) {
          if (n === chunk) {
            sendPart();
            await nextTurn();
          }
          copyToPart(taken, i, n++, shift);
        }
      }
      if (n > 0) sendPart();
    } finally {
      clearRecordStrings(taken.columns, taken.count);
      taken.text.clear();
      taken.count = 0;
      spare = taken;
    }
    if ((await Promise.all(appended)).every(Boolean)) outage.ok();
  };

  const flush = (): Promise<void> => {
    if (writing) return writing.then(flush);
    if (filling.count === 0) return Promise.resolve();
    writing = write().finally(() => {
      writing = undefined;
    });
    return writing;
  };

  const timer = setInterval(() => {
    if (!writing && filling.count > 0) void flush();
  }, intervalMs);
  timer.unref();

  return {
    record(ctx, method, status, ms) {
      const buffer = filling;
      const i = buffer.count;
      if (i === capacity) {
        stats.droppedBufferFull++;
        return;
      }
      buffer.count = i + 1;
      const { columns } = buffer;
      const { prefix, apiPath, search } = ctx;
      columns.keyIds[i] = ctx.keyId;
      columns.methods[i] = method;
      columns.prefixes[i] = prefix;
      if (prefix.length + apiPath.length + search.length <= MAX_RECORDED_PATH) buffer.text.put(columns, i, ctx.requestId, apiPath, search);
      // A long path is cut and redacted now, by the request it came with, not by a write of hundreds like it.
      else buffer.text.keepStrings(columns, i, ctx.requestId, recordedPath(prefix, apiPath, search).slice(prefix.length), '');
      columns.codes[i] = ctx.errorCode;
      columns.caches[i] = ctx.cacheStatus;
      columns.statuses[i] = status;
      columns.latencyTenths[i] = ms * 10 + 0.5;
      columns.times[i] = ctx.startedAt + ms;
    },
    flush,
    stats: () => ({ ...stats }),
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
