import type Redis from 'ioredis';
import type { Config } from '../../../gateway/config';
import { createRedisRequestLog } from '../../../gateway/request-log/redis-request-log';
import { ERASED_FOR_MS, newRecordColumns, type RecordBatch } from '../../../gateway/request-log/request-log';
import { createDefer } from '../../../gateway/wiring/defer';
import { createRedis } from '../../../gateway/wiring/redis';
import { createRequestLog, FORGET_RETRY_DELAYS_MS } from '../../../gateway/wiring/request-log';
import type { Stores } from '../../../gateway/wiring/stores';
import { captureLogs } from '../../support/captured-logs';
import { redisTestPrefix } from '../../support/databases';
import { startPrivateRedis, type PrivateRedis } from '../../support/redis-server';
import { pollFor, until } from '../../support/until';

/** One record of `keyId`, as another process's late batch. */
function batchOf(keyId: string): RecordBatch {
  const columns = newRecordColumns(1);
  columns.keyIds[0] = keyId;
  columns.methods[0] = 'GET';
  columns.prefixes[0] = '/v1';
  columns.apiPaths[0] = '/pets';
  columns.searches[0] = '';
  columns.requestIds[0] = 'late';
  columns.statuses[0] = 200;
  columns.times[0] = Date.now();
  return { ...columns, count: 1 };
}

/** An account erased while its request log's Redis is unreachable: the gateway's own wiring and Redis client, a private redis-server killed and started again. */
describe('the request log with Redis, when an account is erased while Redis is unreachable', () => {
  const prefix = redisTestPrefix();
  let server: PrivateRedis;
  let client: Redis;
  const { lines, logger } = captureLogs<{ level: number; msg?: string; keyIds?: string[] }>('warn');
  const failedCleanups: unknown[] = [];
  const deferred = createDefer({ timeoutMs: 5000, onFailure: (err) => failedCleanups.push(err) });
  const wiring = { config: { redisKeyPrefix: prefix } as Config, logger, now: () => new Date(), defer: deferred.defer };

  beforeEach(async () => {
    server = await startPrivateRedis();
    client = createRedis(server.url, { connectionName: 'request-log-erasure-test' });
    await client.connect();
    lines.length = 0;
  });
  afterEach(async () => {
    await deferred.runAll();
    client.disconnect();
    await server.stop();
    expect(failedCleanups).toEqual([]);
  });

  test('when the first deletion fails, then a later try sets the mark and deletes the log, a late batch\'s stream with it, and nothing is logged', async () => {
    const log = createRequestLog(wiring, { redis: { publisher: client, subscriber: client } } as Stores);
    await server.stop();
    await until('the client to see Redis gone', () => client.status !== 'ready');
    await log.forget(['key_erased']);

    server = await startPrivateRedis(server.port);
    const other = createRedis(server.url, { connectionName: 'another-gateway' });
    try {
      await other.connect();
      // Another process writes what it had buffered of the key; without the mark, nothing refuses it.
      await createRedisRequestLog({ redis: other, prefix }).append(batchOf('key_erased'), Date.now());
      const markAndStream = async () => ({ mark: await other.exists(`${prefix}reqlog-erased:key_erased`), stream: await other.exists(`${prefix}reqlog-v2:key_erased`) });
      const { value } = await pollFor(markAndStream, ({ mark, stream }) => mark === 1 && stream === 0, { withinMs: FORGET_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) + 5000 });
      expect(value).toEqual({ mark: 1, stream: 0 });
      expect(await other.pttl(`${prefix}reqlog-erased:key_erased`)).toBeGreaterThan(ERASED_FOR_MS - 60_000);
    } finally {
      other.disconnect();
    }
    expect(lines).toEqual([]);
  }, 30_000);

  test('when the gateway stops while a try waits and Redis is still down, then the stop tries at once, does not wait out the backoff, and warns once', async () => {
    const log = createRequestLog(wiring, { redis: { publisher: client, subscriber: client } } as Stores);
    await server.stop();
    await until('the client to see Redis gone', () => client.status !== 'ready');
    await log.forget(['key_erased']);
    expect(lines).toEqual([]);
    const since = Date.now();
    await deferred.runAll();
    expect(Date.now() - since).toBeLessThan(FORGET_RETRY_DELAYS_MS[0]!);
    expect(lines.map((l) => [l.level, l.msg, l.keyIds])).toEqual([[40, 'could not delete the request logs of erased keys; they expire within 24 h', ['key_erased']]]);
  });
});
