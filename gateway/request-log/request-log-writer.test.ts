import { captureLogs } from '../../test/support/captured-logs';
import { createOutageLog } from '../cache/outage-log';
import { ResponseHeaders } from '../http/response-headers';
import type { RequestContext } from '../pipeline/pipeline';
import { createMemoryRequestLog } from './memory-request-log';
import { MAX_RECORDED_PATH, MAX_RECORDS_PER_KEY, recordedPath, type RecordBatch, type RequestLogStore } from './request-log';
import { createRequestLogWriter, type RequestLogWriterOptions } from './request-log-writer';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');

/** A finished request's context, as the pipeline leaves it, that took `ms`. */
function finished(ms: number, fields: Partial<RequestContext> = {}): RequestContext {
  return {
    requestId: 'req-1',
    environment: 'production',
    prefix: '/v1',
    apiPath: '/pets',
    search: '',
    startedAt: performance.now() - ms,
    headers: new ResponseHeaders(),
    sharedFill: false,
    keyId: 'key_a',
    ...fields,
  };
}

/** A store that keeps each batch as plain copies, and answers each append with what `answer` says. */
function recordingStore(answer: (batch: RecordBatch) => Promise<void> | void = () => {}) {
  const batches: Array<Array<{ requestId: string; keyId: string; path: string; status: number; time: number }>> = [];
  const store: RequestLogStore = {
    append(batch: RecordBatch) {
      const { requestIds, keyIds, apiPaths, searches, statuses, times, count } = batch;
      const copy = (i: number) => ({ requestId: requestIds[i]!, keyId: keyIds[i]!, path: apiPaths[i]! + searches[i]!, status: statuses[i]!, time: times[i]! });
      batches.push(Array.from({ length: count }, (_, i) => copy(i)));
      return answer(batch);
    },
    read: () => Promise.resolve({ requests: [] }),
    forget: () => {},
  };
  return { store, batches };
}

const quiet = { failed: () => {}, ok: () => {} };
const fixedClock = () => new Date(T0);
const writers: Array<{ close(): Promise<void> }> = [];
function writer(options: Partial<RequestLogWriterOptions> & Pick<RequestLogWriterOptions, 'store'>) {
  const w = createRequestLogWriter({ now: fixedClock, outage: quiet, intervalMs: 60_000, ...options });
  writers.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(writers.splice(0).map((w) => w.close()));
});

describe('request log writer', () => {
  test('when a request is recorded, then nothing is written until the tick, and then the whole buffer goes in one write', async () => {
    const { store, batches } = recordingStore();
    const w = writer({ store, intervalMs: 30 });
    w.record(finished(3, { requestId: 'a' }), 'GET', 200, 3);
    w.record(finished(1, { requestId: 'b' }), 'GET', 404, 1);
    expect(batches).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['a', 'b']]);
  });

  test("when a batch is written, then each record carries the gateway clock's time of its end, its fields and its latency in tenths of a ms", async () => {
    const log = createMemoryRequestLog();
    const w = writer({ store: log });
    const ctx = finished(12.34, { requestId: 'r', search: '?limit=2', errorCode: 'not_found', cacheStatus: 'MISS', apiPath: '/pets/9' });
    w.record(ctx, 'GET', 404, 12.34);
    await w.flush();
    const { requests } = await log.read('key_a', { limit: 10 }, T0);
    expect(requests).toEqual([{ id: expect.stringMatching(/^\d+-0$/), time: expect.any(Number), method: 'GET', path: '/v1/pets/9?limit=2', status: 404, code: 'not_found', latencyMs: 12.3, cache: 'MISS', requestId: 'r' }]);
    // Written at once, so it ended within a few ms of the clock's now.
    expect(T0 - requests[0]!.time).toBeGreaterThanOrEqual(0);
    expect(T0 - requests[0]!.time).toBeLessThan(50);
  });

  test('when requests end while a write is under way, then they wait for the next write, and flush resolves after both', async () => {
    let release!: () => void;
    const { store, batches } = recordingStore(() => (batches.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined));
    const w = writer({ store });
    w.record(finished(1, { requestId: 'first' }), 'GET', 200, 1);
    const firstWrite = w.flush();
    w.record(finished(1, { requestId: 'second' }), 'GET', 200, 1);
    let flushed = false;
    const secondFlush = w.flush().then(() => (flushed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['first']]);
    expect(flushed).toBe(false);
    release();
    await firstWrite;
    await secondFlush;
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['first'], ['second']]);
  });

  test('when the buffer is full, then further records are dropped and counted, and the next write has room again', async () => {
    const { store, batches } = recordingStore();
    const w = writer({ store, capacity: 3 });
    for (let i = 0; i < 5; i++) w.record(finished(1, { requestId: `r${i}` }), 'GET', 200, 1);
    expect(w.stats()).toEqual({ droppedBufferFull: 2, droppedStoreFailed: 0 });
    await w.flush();
    w.record(finished(1, { requestId: 'after' }), 'GET', 200, 1);
    await w.flush();
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['r0', 'r1', 'r2'], ['after']]);
  });

  test('when a key ends more requests in one interval than a store keeps of it, then only its last MAX_RECORDS_PER_KEY are written, in order, each key\'s records together', async () => {
    const { store, batches } = recordingStore();
    const w = writer({ store, capacity: MAX_RECORDS_PER_KEY + 10 });
    const flooding = MAX_RECORDS_PER_KEY + 5;
    for (let i = 0; i < flooding; i++) {
      w.record(finished(1, { requestId: `a${i}`, search: `?after=${i}` }), 'GET', 200 + (i % 2), 1);
      if (i === 2 || i === flooding - 2) w.record(finished(1, { requestId: `b${i}`, keyId: 'key_b', apiPath: '/pets/1' }), 'GET', 404, 1);
    }
    await w.flush();
    const written = batches.flat();
    const a = (i: number) => expect.objectContaining({ requestId: `a${i}`, keyId: 'key_a', path: `/pets?after=${i}`, status: 200 + (i % 2) });
    const b = (i: number) => expect.objectContaining({ requestId: `b${i}`, keyId: 'key_b', path: '/pets/1', status: 404 });
    const lastOfA = Array.from({ length: MAX_RECORDS_PER_KEY }, (_, n) => a(flooding - MAX_RECORDS_PER_KEY + n));
    expect(written).toEqual([...lastOfA, b(2), b(flooding - 2)]);
    expect(written.every((r) => T0 - r.time >= 0 && T0 - r.time < 50)).toBe(true);
  });

  test('when a write holds more records than a part, then the store gets them in order a part a turn, and requests ending meanwhile wait for the next write', async () => {
    const events: string[] = [];
    const { store, batches } = recordingStore(() => {
      events.push(`part of ${batches.at(-1)!.length}`);
    });
    const w = writer({ store, chunk: 3 });
    for (let i = 0; i < 8; i++) w.record(finished(1, { requestId: `r${i}` }), 'GET', 200, 1);
    // Other work of the event loop, a callback a turn.
    let turns = 0;
    const turn = () => {
      events.push('turn');
      if (++turns < 4) setImmediate(turn);
    };
    setImmediate(turn);
    const flushed = w.flush();
    w.record(finished(1, { requestId: 'late' }), 'GET', 200, 1);
    await flushed;
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['r0', 'r1', 'r2'], ['r3', 'r4', 'r5'], ['r6', 'r7']]);
    expect(events.slice(0, 5)).toEqual(['part of 3', 'turn', 'part of 3', 'turn', 'part of 2']);
    await w.flush();
    expect(batches.at(-1)!.map((r) => r.requestId)).toEqual(['late']);
  });

  test('when keys interleave, then each key goes whole in one part while it fits one, and a part ends early rather than split it', async () => {
    const { store, batches } = recordingStore();
    const w = writer({ store, chunk: 4 });
    for (let n = 0; n < 3; n++) for (const key of ['a', 'b', 'c']) w.record(finished(1, { keyId: `key_${key}`, requestId: `${key}${n}` }), 'GET', 200, 1);
    w.record(finished(1, { keyId: 'key_d', requestId: 'd0' }), 'GET', 200, 1);
    await w.flush();
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['a0', 'a1', 'a2'], ['b0', 'b1', 'b2'], ['c0', 'c1', 'c2', 'd0']]);
  });

  test('when a path and query are longer than a log records, then the record keeps them cut and redacted from the start, as a store records them', async () => {
    const log = createMemoryRequestLog();
    const { store, batches } = recordingStore((batch) => log.append(batch, T0));
    const w = writer({ store });
    const search = `?api_key=asg_prod_${'A1b2-_'.repeat(7)}x&name=${'\u00e9x'.repeat(400)}`;
    w.record(finished(1, { requestId: 'long', search }), 'GET', 200, 1);
    await w.flush();
    const recorded = recordedPath('/v1', '/pets', search);
    expect(recorded).toHaveLength(MAX_RECORDED_PATH);
    expect(batches[0]![0]!.path).toBe(recorded.slice('/v1'.length));
    expect((await log.read('key_a', { limit: 1 }, T0)).requests[0]!.path).toBe(recorded);
  });

  test('when the clock fails a write, then no record is lost or sent twice, and the next write takes them all', async () => {
    const { store, batches } = recordingStore();
    let fail = true;
    const w = writer({
      store,
      now: () => {
        if (fail) throw new Error('no clock');
        return new Date(T0);
      },
    });
    w.record(finished(1, { requestId: 'before' }), 'GET', 200, 1);
    await expect(w.flush()).rejects.toThrow('no clock');
    fail = false;
    w.record(finished(1, { requestId: 'after' }), 'GET', 200, 1);
    await w.flush();
    await w.flush();
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['before', 'after']]);
  });

  test('when one part of a write fails, then only its records are counted lost, and the others are written', async () => {
    const { store, batches } = recordingStore(() => (batches.length === 2 ? Promise.reject(new Error('busy')) : undefined));
    const w = writer({ store, chunk: 2 });
    for (let i = 0; i < 5; i++) w.record(finished(1, { requestId: `r${i}` }), 'GET', 200, 1);
    await w.flush();
    expect(batches.map((b) => b.map((r) => r.requestId))).toEqual([['r0', 'r1'], ['r2', 'r3'], ['r4']]);
    expect(w.stats()).toEqual({ droppedBufferFull: 0, droppedStoreFailed: 2 });
  });

  test('when a key floods the buffer, then the records dropped for it before the write are not counted lost when the write fails', async () => {
    const { store } = recordingStore(() => Promise.reject(new Error('down')));
    const w = writer({ store, capacity: MAX_RECORDS_PER_KEY + 50 });
    for (let i = 0; i < MAX_RECORDS_PER_KEY + 50; i++) w.record(finished(1), 'GET', 200, 1);
    await w.flush();
    expect(w.stats()).toEqual({ droppedBufferFull: 0, droppedStoreFailed: MAX_RECORDS_PER_KEY });
  });

  test('when the store fails, then the batch is lost and counted, the outage is logged once, and writing resumes when the store is back', async () => {
    const { lines, logger } = captureLogs<{ level: number; msg: string }>('info');
    let down = true;
    const { store, batches } = recordingStore(() => (down ? Promise.reject(new Error('connection is closed')) : undefined));
    const w = writer({ store, outage: createOutageLog(logger, 'request log') });
    for (let batch = 0; batch < 3; batch++) {
      w.record(finished(1), 'GET', 200, 1);
      w.record(finished(1), 'GET', 200, 1);
      await expect(w.flush()).resolves.toBeUndefined();
    }
    expect(w.stats()).toEqual({ droppedBufferFull: 0, droppedStoreFailed: 6 });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([[40, 'request log unavailable; bypassing it until it recovers']]);
    down = false;
    w.record(finished(1, { requestId: 'back' }), 'GET', 201, 1);
    await w.flush();
    expect(batches.at(-1)!.map((r) => r.requestId)).toEqual(['back']);
    expect(lines.map((l) => l.msg)).toEqual(['request log unavailable; bypassing it until it recovers', 'request log recovered']);
  });

  test('when a store throws instead of rejecting, then it is a failed write like any other', async () => {
    const store: RequestLogStore = {
      append: () => {
        throw new Error('boom');
      },
      read: () => Promise.resolve({ requests: [] }),
      forget: () => {},
    };
    const w = writer({ store });
    w.record(finished(1), 'GET', 200, 1);
    await w.flush();
    expect(w.stats().droppedStoreFailed).toBe(1);
  });

  test('when the writer closes, then what is left is written and the timer writes no more', async () => {
    const { store, batches } = recordingStore();
    const w = createRequestLogWriter({ store, now: fixedClock, outage: quiet, intervalMs: 10 });
    w.record(finished(1, { requestId: 'last' }), 'GET', 200, 1);
    await w.close();
    expect(batches).toEqual([[expect.objectContaining({ requestId: 'last' })]]);
    w.record(finished(1), 'GET', 200, 1);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(batches).toHaveLength(1);
  });
});
