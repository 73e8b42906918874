import Redis from 'ioredis';
import { createRedisRequestLog } from '../../../gateway/request-log/redis-request-log';
import { ERASED_FOR_MS, MAX_RECORD_AGE_MS, newRecordColumns, type LoggedRequest, type RecordBatch, type RequestLogStore } from '../../../gateway/request-log/request-log';
import { deleteRedisKeys, redisTestPrefix, redisTestUrl } from '../../support/databases';
import { until } from '../../support/until';

const NOW = Date.parse('2026-11-26T12:00:00.000Z');

interface Sent {
  keyId: string;
  requestId: string;
  status?: number;
  time?: number;
}

/** A batch as the writer hands it over: the records' columns, times in epoch ms. */
function batchOf(records: Sent[]): RecordBatch {
  const columns = newRecordColumns(records.length);
  records.forEach((r, i) => {
    columns.keyIds[i] = r.keyId;
    columns.methods[i] = 'GET';
    columns.prefixes[i] = '/v1';
    columns.apiPaths[i] = '/pets';
    columns.searches[i] = '';
    columns.requestIds[i] = r.requestId;
    columns.statuses[i] = r.status ?? 200;
    columns.codes[i] = r.status === 404 ? 'not_found' : undefined;
    columns.latencyTenths[i] = 12;
    columns.times[i] = r.time ?? NOW - 1000;
  });
  return { ...columns, count: records.length };
}

/** `n` records of `keyId`, request ids `<tag>-<from>`…, with every third a 404. */
function records(keyId: string, tag: string, from: number, n: number): Sent[] {
  return Array.from({ length: n }, (_, i) => ({ keyId, requestId: `${tag}-${from + i}`, status: (from + i) % 3 === 0 ? 404 : 200 }));
}

/** Every page of a read, following `next`. */
async function readAll(store: RequestLogStore, keyId: string, query: { limit: number; status?: '4xx' | '2xx' }, nowMs = NOW): Promise<LoggedRequest[]> {
  const all: LoggedRequest[] = [];
  let after: string | undefined;
  for (let page = 0; page < 100; page++) {
    const { requests, next } = await store.read(keyId, { ...query, after }, nowMs);
    expect(requests.length).toBeLessThanOrEqual(query.limit);
    all.push(...requests);
    if (next === undefined) return all;
    expect(requests).toHaveLength(query.limit);
    after = next;
  }
  throw new Error('more than 100 pages');
}

describe('Redis request log: an entry per batch', () => {
  const prefix = redisTestPrefix();
  let redis: Redis;
  let store: RequestLogStore;
  const stream = (keyId: string) => `${prefix}reqlog-v2:${keyId}`;

  beforeAll(() => {
    redis = new Redis(redisTestUrl());
    store = createRedisRequestLog({ redis, prefix });
  });
  afterAll(async () => {
    await deleteRedisKeys(prefix, redis);
    redis.disconnect();
  });

  test("when a key's batches pass 1,000 records, then a read pages through exactly its last 1,000, newest first, and older batches are cut", async () => {
    let sent = 0;
    for (const size of [700, 1000, 600, 450]) {
      await store.append(batchOf(records('key_flood', 'f', sent, size)), NOW);
      sent += size;
    }
    const seen = await readAll(store, 'key_flood', { limit: 100 });
    expect(seen.map((r) => r.requestId)).toEqual(Array.from({ length: 1000 }, (_, i) => `f-${sent - 1 - i}`));
    const ids = seen.map((r) => r.id);
    expect(new Set(ids).size).toBe(1000);
    // One entry a batch; of the four, the two holding none of the last 1,000 are gone.
    const entries = await redis.xrange(stream('key_flood'), '-', '+');
    expect(entries.map(([, fields]) => [fields[0], fields[1], fields[2], fields[3], fields[4]])).toEqual([
      ['n', '600', 't', String(NOW - 1000), 'r'],
      ['n', '450', 't', String(NOW - 1000), 'r'],
    ]);
    const ttl = await redis.pttl(stream('key_flood'));
    expect(ttl).toBeGreaterThan(MAX_RECORD_AGE_MS - 60_000);
  });

  test("when a key's batches are of one record each, then its stream keeps exactly its last 1,000", async () => {
    for (let sent = 0; sent < 1010; sent += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.append(batchOf(records('key_trickle', 't', sent + i, 1)), NOW)));
    }
    expect(await redis.xlen(stream('key_trickle'))).toBe(1000);
    const seen = await readAll(store, 'key_trickle', { limit: 100 });
    expect(seen).toHaveLength(1000);
    expect(new Set(seen.map((r) => r.requestId)).has('t-9')).toBe(false);
  }, 60_000);

  test('when a filter and a small page cross the batches, then each page continues after the last, and together they are the filtered log', async () => {
    let sent = 0;
    for (const size of [5, 1, 9, 4]) {
      await store.append(batchOf(records('key_pages', 'p', sent, size)), NOW);
      sent += size;
    }
    const all = await readAll(store, 'key_pages', { limit: 50 });
    expect(all.map((r) => r.requestId)).toEqual(Array.from({ length: sent }, (_, i) => `p-${sent - 1 - i}`));
    const notFound = await readAll(store, 'key_pages', { limit: 2, status: '4xx' });
    expect(notFound.map((r) => r.requestId)).toEqual(all.filter((r) => r.status === 404).map((r) => r.requestId));
    expect(notFound[0]).toEqual({ id: expect.stringMatching(/^\d+-\d+$/), time: NOW - 1000, method: 'GET', path: '/v1/pets', status: 404, code: 'not_found', latencyMs: 1.2, cache: null, requestId: 'p-18' });
  });

  test('when two processes append to one key in turn, then the ids rise in the order the batches were written and nothing is lost', async () => {
    const other = createRedisRequestLog({ redis, prefix });
    await Promise.all([store.append(batchOf(records('key_two', 'a', 0, 3)), NOW), other.append(batchOf(records('key_two', 'b', 0, 2)), NOW)]);
    await other.append(batchOf(records('key_two', 'b', 2, 2)), NOW);
    const seen = await readAll(store, 'key_two', { limit: 3 });
    expect(seen.map((r) => r.requestId).sort()).toEqual(['a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2', 'b-3']);
    expect(seen.slice(0, 2).map((r) => r.requestId)).toEqual(['b-3', 'b-2']);
    const ids = seen.map((r) => r.id);
    expect(ids).toEqual([...ids].sort(byId).reverse());
    expect(new Set(ids).size).toBe(7);
  });

  test('when a batch holds requests from either side of 24 hours ago, then only the newer ones are read', async () => {
    await store.append(batchOf([
      { keyId: 'key_age', requestId: 'old', time: NOW - MAX_RECORD_AGE_MS - 1000 },
      { keyId: 'key_age', requestId: 'new', time: NOW - MAX_RECORD_AGE_MS + 1000 },
    ]), NOW);
    expect((await readAll(store, 'key_age', { limit: 10 })).map((r) => r.requestId)).toEqual(['new']);
  });

  test('when a batch is written a day after the ones before it, then those are no longer kept, and a log older than a day goes whole', async () => {
    await store.append(batchOf(records('key_day', 'd', 0, 3)), NOW - MAX_RECORD_AGE_MS);
    await store.append(batchOf(records('key_day', 'd', 3, 2).map((r) => ({ ...r, time: NOW + MAX_RECORD_AGE_MS }))), NOW + MAX_RECORD_AGE_MS + 1000);
    const entries = await redis.xrange(stream('key_day'), '-', '+');
    expect(entries.map(([, fields]) => fields[1])).toEqual(['2']);
    expect((await readAll(store, 'key_day', { limit: 10 }, NOW + MAX_RECORD_AGE_MS + 1000)).map((r) => r.requestId)).toEqual(['d-4', 'd-3']);

    await store.append(batchOf(records('key_stale', 's', 0, 2)), NOW + MAX_RECORD_AGE_MS);
    expect(await redis.exists(stream('key_stale'))).toBe(0);
  });

  test('when keys are forgotten, then their streams are gone, those of the releases before too, and other keys keep theirs', async () => {
    await store.append(batchOf([...records('key_gone', 'g', 0, 2), ...records('key_kept', 'k', 0, 1)]), NOW);
    await redis.xadd(`${prefix}reqlog:key_gone`, '*', 'r', '[]');
    await redis.xadd(`${prefix}reqlog-batches:key_gone`, '1-0', 'n', '1', 't', String(NOW - 1000), 'r', '[]');
    await store.forget(['key_gone'], NOW);
    expect(await redis.exists(stream('key_gone'), `${prefix}reqlog:key_gone`, `${prefix}reqlog-batches:key_gone`)).toBe(0);
    expect(await readAll(store, 'key_gone', { limit: 10 })).toEqual([]);
    expect((await readAll(store, 'key_kept', { limit: 10 })).map((r) => r.requestId)).toEqual(['k-0']);
  });

  test('when a stream is deleted and made again in a later millisecond (Redis restarted empty, the stream expired), then its ids are above the old cursor, which reads none of its records', async () => {
    for (let sent = 0; sent < 30; sent += 10) await store.append(batchOf(records('key_again', 'old', sent, 10)), NOW);
    const { next: cursor } = await store.read('key_again', { limit: 10 }, NOW);
    expect(cursor).toMatch(/^\d{1,15}-\d{1,15}$/);
    // A stream made again within the millisecond it was made numbers as it did, unlike one remade after a restart or a day's expiry (1 to 45 of 200 runs without this wait).
    const made = Number(cursor!.split('-')[0]);
    await until("Redis's clock to pass the stream's making", async () => redisMs(await redis.time()) > made);
    await redis.del(stream('key_again'));
    await store.append(batchOf(records('key_again', 'new', 0, 3)), NOW);
    await store.append(batchOf(records('key_again', 'new', 3, 2)), NOW);
    const fresh = await readAll(store, 'key_again', { limit: 10 });
    expect(fresh.map((r) => r.requestId)).toEqual(['new-4', 'new-3', 'new-2', 'new-1', 'new-0']);
    expect(await store.read('key_again', { limit: 10, after: cursor }, NOW)).toEqual({ requests: [] });
    expect({ cursor, notAbove: fresh.map((r) => r.id).filter((id) => byId(id, cursor!) <= 0) }).toEqual({ cursor, notAbove: [] });
    // The new stream pages as the old one did: its cursors read its older records.
    const page = await store.read('key_again', { limit: 2 }, NOW);
    expect((await store.read('key_again', { limit: 10, after: page.next }, NOW)).requests.map((r) => r.requestId)).toEqual(['new-2', 'new-1', 'new-0']);
  });

  test('when a process of the release before appends to a key between this one\'s batches (a rolling deploy), then neither reads the other\'s stream, and this one keeps its records and their ids', async () => {
    await store.append(batchOf(records('key_rolling', 'new', 0, 2)), NOW);
    const before = await readAll(store, 'key_rolling', { limit: 10 });
    const line = JSON.stringify([NOW - 1000, 'GET', '/v1/pets', 200, null, 1.2, null, 'old-0']);
    await redis.eval(PREVIOUS_APPEND_SCRIPT, 1, `${prefix}reqlog-batches:key_rolling`, 1000, MAX_RECORD_AGE_MS, 1, NOW - 1000, NOW - MAX_RECORD_AGE_MS, line);
    await store.append(batchOf(records('key_rolling', 'new', 2, 1)), NOW);
    const seen = await readAll(store, 'key_rolling', { limit: 10 });
    expect(seen.map((r) => r.requestId)).toEqual(['new-2', 'new-1', 'new-0']);
    expect(seen.slice(1)).toEqual(before);
    // The release before reads its own stream, numbered as it numbers it: its one record, 1-0.
    expect((await redis.xrange(`${prefix}reqlog-batches:key_rolling`, '-', '+')).map(([id, fields]) => [id, fields[5]])).toEqual([['1-0', line]]);
  });

  test('when a forgotten key\'s batches arrive after its erasure, from any store, then nothing of them is kept, and other keys\' are', async () => {
    const other = createRedisRequestLog({ redis, prefix });
    await store.append(batchOf(records('key_erased', 'e', 0, 2)), NOW);
    await store.forget(['key_erased'], NOW);
    // Batches of requests that were in flight, written through the store that erased the key and through another.
    await other.append(batchOf([...records('key_erased', 'l', 0, 3), ...records('key_other', 'o', 0, 1)]), NOW + 30_000);
    await store.append(batchOf(records('key_erased', 'l', 3, 1)), NOW + 60_000);
    expect(await redis.exists(stream('key_erased'))).toBe(0);
    expect(await readAll(store, 'key_erased', { limit: 10 })).toEqual([]);
    expect((await readAll(store, 'key_other', { limit: 10 })).map((r) => r.requestId)).toEqual(['o-0']);
    // Refused for as long as a request of the key may still end, and as long as the log lives.
    expect(await redis.pttl(`${prefix}reqlog-erased:key_erased`)).toBeGreaterThan(ERASED_FOR_MS - 60_000);
    expect(ERASED_FOR_MS).toBeGreaterThanOrEqual(MAX_RECORD_AGE_MS);
  });
});

/** The append script of the releases before the streams were numbered `<ms>-<n>`, as a process still running one calls it: it took an entry id's first number for its first record's. */
const PREVIOUS_APPEND_SCRIPT = `
local stream, perKey, count, minMs = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[5])
local first = 1
local newest = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
if newest then first = tonumber(string.match(newest[1], '^(%d+)')) + tonumber(newest[2][2]) end
redis.call('XADD', stream, string.format('%.0f-0', first), 'n', count, 't', ARGV[4], 'r', ARGV[6])
redis.call('PEXPIRE', stream, ARGV[2])
local floor = first + count - perKey
local oldest = floor > 1 and redis.call('XREVRANGE', stream, string.format('%.0f-0', floor), '-', 'COUNT', 1)[1]
  or redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
while tonumber(oldest[2][4]) < minMs do
  oldest = redis.call('XRANGE', stream, '(' .. oldest[1], '+', 'COUNT', 1)[1]
  if not oldest then
    redis.call('DEL', stream)
    return 0
  end
end
redis.call('XTRIM', stream, 'MINID', oldest[1])
return 0
`;

/** Redis's `TIME` in epoch ms, as the append script reads it. */
function redisMs(time: ReadonlyArray<string | number>): number {
  return Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
}

/** Log ids `<n>-<m>` in their order. */
function byId(x: string, y: string): number {
  const [xm, xs] = x.split('-').map(Number) as [number, number];
  const [ym, ys] = y.split('-').map(Number) as [number, number];
  return xm - ym || xs - ys;
}
