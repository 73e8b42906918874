import { createOutageLog } from '../cache/outage-log';
import { createMemoryRequestLog } from '../request-log/memory-request-log';
import { createRedisRequestLog } from '../request-log/redis-request-log';
import type { RequestLogPage, RequestLogQuery } from '../request-log/request-log';
import { createRequestLogWriter } from '../request-log/request-log-writer';
import type { Wiring } from './context';
import type { Stores } from './stores';

/**
 * An erasure deletes the logs twice: at once, and this long after, when every process has
 * refused the keys (within 1 s) and written what it had buffered (every 250 ms).
 */
export const LATE_RECORDS_MS = 2000;

/** Each key's recent requests: a Redis stream per key with REDIS_URL (every process writes to it), else this process's memory. */
export function createRequestLog({ config, logger, now, defer }: Wiring, { redis }: Stores) {
  const store = redis ? createRedisRequestLog({ redis: redis.publisher, prefix: config.redisKeyPrefix }) : createMemoryRequestLog();
  const writer = createRequestLogWriter({ store, now, outage: createOutageLog(logger, 'request log') });
  defer(() => writer.close());
  const lateForgets = new Set<NodeJS.Timeout>();
  defer(() => lateForgets.forEach(clearTimeout));
  const forgetNow = async (keyIds: readonly string[]) => {
    try {
      await store.forget(keyIds);
    } catch (err) {
      logger.warn({ err, keyIds }, 'could not delete the request logs of erased keys; they expire within 24 h');
    }
  };
  return {
    writer,
    /** A key's log, after this process's buffer is written: a request it has just answered is in it. */
    async read(keyId: string, query: RequestLogQuery): Promise<RequestLogPage> {
      await writer.flush();
      return store.read(keyId, query, now().getTime());
    },
    /** Deletes the logs of an erased account's keys, with the records this and other processes had not yet written. */
    async forget(keyIds: readonly string[]): Promise<void> {
      if (keyIds.length === 0) return;
      await writer.flush();
      await forgetNow(keyIds);
      const late = setTimeout(() => {
        lateForgets.delete(late);
        void forgetNow(keyIds);
      }, LATE_RECORDS_MS).unref();
      lateForgets.add(late);
    },
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
