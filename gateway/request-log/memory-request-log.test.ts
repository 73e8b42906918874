import { createMemoryRequestLog } from './memory-request-log';
import type { CacheStatus } from '../pipeline/pipeline';
import type { RecordBatch, RequestLogQuery } from './request-log';
import type { ErrorCode } from '../../lib/api-error';

const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const DAY = 24 * 60 * 60 * 1000;

interface Pending {
  keyId: string;
  method: string;
  prefix: string;
  apiPath: string;
  search: string;
  status: number;
  code?: ErrorCode;
  latencyTenths: number;
  cache?: CacheStatus;
  requestId: string;
}

let serial = 0;
/** A request as the writer records it, for `keyId`, with the fields a test names. */
function pending(keyId: string, fields: Partial<Pending> = {}): Pending {
  return { keyId, method: 'GET', prefix: '/v1', apiPath: '/pets', search: '', status: 200, latencyTenths: 12, requestId: `req-${serial++}`, ...fields };
}

/** The writer's batch of these requests, ended at `times` (by default 1 ms apart from T0). */
function batch(records: Pending[], times = records.map((_, i) => T0 + i)): RecordBatch {
  return {
    keyIds: records.map((r) => r.keyId),
    methods: records.map((r) => r.method),
    prefixes: records.map((r) => r.prefix),
    apiPaths: records.map((r) => r.apiPath),
    searches: records.map((r) => r.search),
    codes: records.map((r) => r.code),
    caches: records.map((r) => r.cache),
    requestIds: records.map((r) => r.requestId),
    statuses: Uint16Array.from(records.map((r) => r.status)),
    latencyTenths: Uint32Array.from(records.map((r) => r.latencyTenths)),
    times: Float64Array.from(times),
    count: records.length,
  };
}

const all = (limit = 100): RequestLogQuery => ({ limit });

describe('memory request log', () => {
  test('when requests are appended, then a read gives them newest first with every field, and ids that order them', async () => {
    const log = createMemoryRequestLog();
    log.append(
      batch([
        pending('key_a', { requestId: 'first', search: '?limit=5', cache: 'MISS', latencyTenths: 123 }),
        pending('key_a', { requestId: 'second', method: 'POST', status: 400, code: 'invalid_request', latencyTenths: 4 }),
        pending('key_b', { requestId: 'other key' }),
      ]),
      T0 + 10,
    );
    const page = await log.read('key_a', all(), T0 + 10);
    expect(page).toEqual({
      requests: [
        { id: `${T0 + 1}-0`, time: T0 + 1, method: 'POST', path: '/v1/pets', status: 400, code: 'invalid_request', latencyMs: 0.4, cache: null, requestId: 'second' },
        { id: `${T0}-0`, time: T0, method: 'GET', path: '/v1/pets?limit=5', status: 200, code: null, latencyMs: 12.3, cache: 'MISS', requestId: 'first' },
      ],
    });
    expect((await log.read('key_none', all(), T0)).requests).toEqual([]);
  });

  test('when requests end in the same millisecond or the clock goes back, then ids still rise in the order they were written', async () => {
    const log = createMemoryRequestLog();
    log.append(batch([pending('key_a'), pending('key_a'), pending('key_a')], [T0 + 5.2, T0 + 5.7, T0 + 3]), T0 + 10);
    const { requests } = await log.read('key_a', all(), T0 + 10);
    expect(requests.map((r) => r.id)).toEqual([`${T0 + 5}-2`, `${T0 + 5}-1`, `${T0 + 5}-0`]);
    expect(requests.map((r) => r.time)).toEqual([T0 + 3, T0 + 5.7, T0 + 5.2]);
  });

  test('when a key has more than 1,000 requests, then only its last 1,000 are kept, across batches and within one', async () => {
    const log = createMemoryRequestLog();
    log.append(batch(Array.from({ length: 600 }, (_, i) => pending('key_a', { requestId: `a${i}` }))), T0 + 600);
    log.append(batch(Array.from({ length: 600 }, (_, i) => pending('key_a', { requestId: `a${600 + i}` })), Array.from({ length: 600 }, (_, i) => T0 + 600 + i)), T0 + 1200);
    log.append(batch(Array.from({ length: 1500 }, (_, i) => pending('key_b', { requestId: `b${i}` }))), T0 + 1500);
    expect(log.size()).toBe(2000);
    const ids = async (keyId: string) => {
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const page = await log.read(keyId, { limit: 100, after }, T0 + 1500);
        seen.push(...page.requests.map((r) => r.requestId));
        after = page.next;
      } while (after);
      return seen;
    };
    const a = await ids('key_a');
    expect(a).toHaveLength(1000);
    expect([a[0], a[999]]).toEqual(['a1199', 'a200']);
    const b = await ids('key_b');
    expect(b).toHaveLength(1000);
    expect([b[0], b[999]]).toEqual(['b1499', 'b500']);
  });

  test('when the records in all pass the bound and every log is as large, then each is cut, the keys written least recently by one more', async () => {
    const log = createMemoryRequestLog({ maxRecords: 30, perKey: 10 });
    const fill = (keyId: string, at: number) => log.append(batch(Array.from({ length: 10 }, () => pending(keyId)), Array(10).fill(at)), at);
    fill('key_a', T0);
    fill('key_b', T0 + 1);
    fill('key_c', T0 + 2);
    // key_a is written again: key_b is now the least recently written.
    log.append(batch([pending('key_a')], [T0 + 3]), T0 + 3);
    expect(log.size()).toBe(30);
    fill('key_d', T0 + 4);
    expect(log.size()).toBe(30);
    const count = async (keyId: string) => (await log.read(keyId, all(), T0 + 4)).requests.length;
    expect([await count('key_a'), await count('key_b'), await count('key_c'), await count('key_d')]).toEqual([8, 7, 7, 8]);
  });

  test('when several keys are written in one batch, then the one whose last record came last counts as written last', async () => {
    const log = createMemoryRequestLog({ maxRecords: 4, perKey: 2 });
    // key_a first appears before key_b, but its last record comes after key_b's.
    log.append(batch([pending('key_a'), pending('key_b'), pending('key_b'), pending('key_a')]), T0 + 4);
    expect(log.size()).toBe(4);
    log.append(batch([pending('key_c')], [T0 + 5]), T0 + 5);
    const count = async (keyId: string) => (await log.read(keyId, all(), T0 + 5)).requests.length;
    expect([await count('key_a'), await count('key_b'), await count('key_c')]).toEqual([2, 1, 1]);
  });

  test('when other keys flood far past the bound, then a quiet key keeps its few records and the flooding keys are cut to one size', async () => {
    const log = createMemoryRequestLog({ maxRecords: 30, perKey: 10 });
    log.append(batch([pending('key_quiet', { requestId: 'q0' }), pending('key_quiet', { requestId: 'q1' })], [T0, T0 + 1]), T0 + 1);
    const flooders = ['key_f0', 'key_f1', 'key_f2', 'key_f3'];
    for (let round = 0; round < 5; round++) {
      const at = T0 + 10 + round * 100;
      log.append(batch(Array.from({ length: 40 }, (_, i) => pending(flooders[i % 4]!)), Array.from({ length: 40 }, (_, i) => at + i)), at + 40);
      expect(log.size()).toBe(30);
    }
    const nowMs = T0 + 1000;
    expect((await log.read('key_quiet', all(), nowMs)).requests.map((r) => r.requestId)).toEqual(['q1', 'q0']);
    expect(await Promise.all(flooders.map(async (keyId) => (await log.read(keyId, all(), nowMs)).requests.length))).toEqual([7, 7, 7, 7]);
    // A forgotten key's records leave room: the next write is not cut.
    log.forget(['key_f0'], nowMs);
    log.append(batch([pending('key_f1')], [nowMs]), nowMs);
    expect(log.size()).toBe(24);
    expect((await log.read('key_f1', all(), nowMs)).requests).toHaveLength(8);
  });

  test('when every log is down to one record, then the keys written least recently give theirs, and no more keys are kept than records', async () => {
    const log = createMemoryRequestLog({ maxRecords: 4, perKey: 2 });
    ['key_a', 'key_b', 'key_c', 'key_d'].forEach((keyId, i) => log.append(batch([pending(keyId)], [T0 + i]), T0 + i));
    log.append(batch([pending('key_e'), pending('key_e')], [T0 + 4, T0 + 5]), T0 + 5);
    expect(log.size()).toBe(4);
    const count = async (keyId: string) => (await log.read(keyId, all(), T0 + 5)).requests.length;
    expect([await count('key_a'), await count('key_b'), await count('key_c'), await count('key_d'), await count('key_e')]).toEqual([0, 1, 1, 1, 1]);
  });

  test('when logs are cut, then they lose their oldest records, and the rest still reads page by page in order', async () => {
    const log = createMemoryRequestLog({ maxRecords: 8, perKey: 4 });
    const run = (keyId: string, from: number, to: number, at: number) =>
      batch(Array.from({ length: to - from }, (_, i) => pending(keyId, { requestId: `${keyId}-${from + i}` })), Array.from({ length: to - from }, (_, i) => at + i));
    // key_a's ring has wrapped (it holds records 2 to 5) before it is cut.
    log.append(run('key_a', 0, 3, T0), T0 + 3);
    log.append(run('key_a', 3, 6, T0 + 3), T0 + 6);
    log.append(run('key_b', 0, 4, T0 + 10), T0 + 14);
    log.append(run('key_c', 0, 4, T0 + 20), T0 + 24);
    expect(log.size()).toBe(8);
    const pages = async (keyId: string, limit: number) => {
      const seen: string[][] = [];
      let after: string | undefined;
      do {
        const page = await log.read(keyId, { limit, after }, T0 + 24);
        seen.push(page.requests.map((r) => r.requestId));
        after = page.next;
      } while (after);
      return seen;
    };
    expect(await pages('key_a', 1)).toEqual([['key_a-5'], ['key_a-4']]);
    expect(await pages('key_b', 2)).toEqual([['key_b-3', 'key_b-2'], ['key_b-1']]);
    expect(await pages('key_c', 3)).toEqual([['key_c-3', 'key_c-2', 'key_c-1']]);
    // A cut log goes on from where it was: its next record is its newest, with a higher id.
    log.append(run('key_a', 6, 7, T0 + 30), T0 + 30);
    const { requests } = await log.read('key_a', all(), T0 + 30);
    expect(requests.map((r) => r.requestId)).toEqual(['key_a-6', 'key_a-5', 'key_a-4']);
    expect(requests[0]!.id).toBe(`${T0 + 30}-0`);
  });

  test('when a key\'s log is cut away whole and written again in the same millisecond, then its new ids are above its old cursor, which reads none of them', async () => {
    const log = createMemoryRequestLog({ maxRecords: 2, perKey: 2 });
    log.append(batch([pending('key_a', { requestId: 'old-0' }), pending('key_a', { requestId: 'old-1' })], [T0, T0]), T0);
    const { next: cursor } = await log.read('key_a', { limit: 1 }, T0);
    expect(cursor).toBe(`${T0}-1`);
    // Two other keys take the room: key_a, written least recently, loses its whole log.
    log.append(batch([pending('key_b'), pending('key_c')], [T0, T0]), T0);
    expect((await log.read('key_a', all(), T0)).requests).toEqual([]);
    log.append(batch([pending('key_a', { requestId: 'new' })], [T0]), T0);
    expect(await log.read('key_a', { limit: 10, after: cursor }, T0)).toEqual({ requests: [] });
    expect((await log.read('key_a', all(), T0)).requests.map((r) => [r.requestId, r.id])).toEqual([['new', `${T0}-2`]]);
  });

  test('when the records in all pass the bound and a key has expired, then it goes first, before any live log is cut', async () => {
    const log = createMemoryRequestLog({ maxRecords: 10, perKey: 8 });
    log.append(batch([pending('key_old'), pending('key_old'), pending('key_old')]), T0 + 2);
    const nowMs = T0 + DAY + 10;
    log.append(batch([pending('key_quiet'), pending('key_quiet'), ...Array.from({ length: 8 }, () => pending('key_flood'))], Array.from({ length: 10 }, (_, i) => T0 + DAY + i)), nowMs);
    expect(log.size()).toBe(10);
    const count = async (keyId: string) => (await log.read(keyId, all(), nowMs)).requests.length;
    expect([await count('key_old'), await count('key_quiet'), await count('key_flood')]).toEqual([0, 2, 8]);
  });

  test('when records are older than 24 hours, then they are not returned, and a key with none left is forgotten', async () => {
    const log = createMemoryRequestLog();
    log.append(batch([pending('key_old'), pending('key_mixed', { requestId: 'old' })], [T0, T0]), T0);
    log.append(batch([pending('key_mixed', { requestId: 'new' })], [T0 + DAY]), T0 + DAY);
    expect((await log.read('key_old', all(), T0 + DAY - 1)).requests).toHaveLength(1);
    expect((await log.read('key_old', all(), T0 + DAY + 1)).requests).toEqual([]);
    expect((await log.read('key_mixed', all(), T0 + DAY + 1)).requests.map((r) => r.requestId)).toEqual(['new']);
    // The next write forgets key_old, whose newest record has expired (key_mixed keeps its old one until it is written to).
    log.append(batch([pending('key_new')], [T0 + DAY + 2]), T0 + DAY + 2);
    expect(log.size()).toBe(3);
    log.append(batch([pending('key_mixed')], [T0 + DAY + 3]), T0 + DAY + 3);
    expect(log.size()).toBe(3);
  });

  test('when keys are forgotten (their account was erased), then their records are gone and no longer count against the bound', async () => {
    const log = createMemoryRequestLog({ maxRecords: 30, perKey: 10 });
    log.append(batch([pending('key_a'), pending('key_a'), pending('key_b'), pending('key_c')]), T0 + 10);
    log.forget(['key_a', 'key_b', 'key_unknown'], T0 + 10);
    expect(log.size()).toBe(1);
    expect([(await log.read('key_a', all(), T0 + 10)).requests, (await log.read('key_b', all(), T0 + 10)).requests]).toEqual([[], []]);
    expect((await log.read('key_c', all(), T0 + 10)).requests).toHaveLength(1);
  });

  test('when a forgotten key\'s records arrive after its erasure (a request in flight), then they are refused for a day, other keys\' kept', async () => {
    const log = createMemoryRequestLog();
    log.append(batch([pending('key_a', { requestId: 'before' })], [T0]), T0);
    log.forget(['key_a'], T0 + 10);
    log.append(batch([pending('key_a', { requestId: 'in flight' }), pending('key_b', { requestId: 'other' })], [T0 + 5000, T0 + 5000]), T0 + 5250);
    log.append(batch([pending('key_a', { requestId: 'late' })], [T0 + DAY]), T0 + DAY);
    expect((await log.read('key_a', all(), T0 + DAY)).requests).toEqual([]);
    expect((await log.read('key_b', all(), T0 + DAY)).requests.map((r) => r.requestId)).toEqual(['other']);
    expect(log.size()).toBe(1);
    // After a day, the log's own lifetime, the key is no longer refused.
    log.append(batch([pending('key_a', { requestId: 'a day on' })], [T0 + DAY + 20]), T0 + DAY + 20);
    expect((await log.read('key_a', all(), T0 + DAY + 20)).requests.map((r) => r.requestId)).toEqual(['a day on']);
  });

  test('when a status filter is given, then 3xx counts as 2xx and 429 only as itself', async () => {
    const log = createMemoryRequestLog();
    const statuses = [200, 304, 400, 404, 429, 500, 503];
    log.append(batch(statuses.map((status) => pending('key_a', { status }))), T0 + 10);
    const statusesOf = async (status: RequestLogQuery['status']) => (await log.read('key_a', { limit: 100, status }, T0 + 10)).requests.map((r) => r.status);
    expect(await statusesOf('2xx')).toEqual([304, 200]);
    expect(await statusesOf('4xx')).toEqual([404, 400]);
    expect(await statusesOf('429')).toEqual([429]);
    expect(await statusesOf('5xx')).toEqual([503, 500]);
    expect(await statusesOf(undefined)).toEqual([...statuses].reverse());
  });

  test('when a request id is asked for, then only requests with it are returned, with the status filter on top', async () => {
    const log = createMemoryRequestLog();
    log.append(batch([pending('key_a', { requestId: 'dup' }), pending('key_a', { requestId: 'x' }), pending('key_a', { requestId: 'dup', status: 500 })]), T0 + 10);
    expect((await log.read('key_a', { limit: 10, requestId: 'dup' }, T0 + 10)).requests.map((r) => r.status)).toEqual([500, 200]);
    expect((await log.read('key_a', { limit: 10, requestId: 'dup', status: '2xx' }, T0 + 10)).requests.map((r) => r.status)).toEqual([200]);
    expect((await log.read('key_a', { limit: 10, requestId: 'nope' }, T0 + 10)).requests).toEqual([]);
  });

  test('when read a page at a time, then each page continues after the last one, filters included, and the last has no next', async () => {
    const log = createMemoryRequestLog();
    log.append(batch(Array.from({ length: 7 }, (_, i) => pending('key_a', { requestId: `r${i}`, status: i % 2 ? 404 : 200 }))), T0 + 10);
    const first = await log.read('key_a', { limit: 3 }, T0 + 10);
    expect(first.requests.map((r) => r.requestId)).toEqual(['r6', 'r5', 'r4']);
    expect(first.next).toBe(first.requests[2]!.id);
    const second = await log.read('key_a', { limit: 3, after: first.next }, T0 + 10);
    expect(second.requests.map((r) => r.requestId)).toEqual(['r3', 'r2', 'r1']);
    const last = await log.read('key_a', { limit: 3, after: second.next }, T0 + 10);
    expect(last).toEqual({ requests: [expect.objectContaining({ requestId: 'r0' })] });
    const errors = await log.read('key_a', { limit: 2, status: '4xx' }, T0 + 10);
    expect(errors.requests.map((r) => r.requestId)).toEqual(['r5', 'r3']);
    expect((await log.read('key_a', { limit: 2, status: '4xx', after: errors.next }, T0 + 10)).requests.map((r) => r.requestId)).toEqual(['r1']);
  });

  test('when exactly a page is left, then that page says there is no next', async () => {
    const log = createMemoryRequestLog();
    log.append(batch([pending('key_a'), pending('key_a')]), T0 + 10);
    expect((await log.read('key_a', { limit: 2 }, T0 + 10)).next).toBeUndefined();
  });
});
