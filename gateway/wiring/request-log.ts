import { createOutageLog } from '../cache/outage-log';
import { createMemoryRequestLog } from '../request-log/memory-request-log';
import { createRedisRequestLog } from '../request-log/redis-request-log';
import type { RequestLogPage, RequestLogQuery } from '../request-log/request-log';
import { createRequestLogWriter } from '../request-log/request-log-writer';
import type { Wiring } from './context';
import type { Stores } from './stores';

/** Each key's recent requests: a Redis stream per key with REDIS_URL (every process writes to it), else this process's memory. */
export function createRequestLog({ config, logger, now, defer }: Wiring, { redis }: Stores) {
  const store = redis ? createRedisRequestLog({ redis: redis.publisher, prefix: config.redisKeyPrefix }) : createMemoryRequestLog();
  const writer = createRequestLogWriter({ store, now, outage: createOutageLog(logger, 'request log') });
  defer(() => writer.close());
  return {
    writer,
    /** A key's log, after this process's buffer is written: a request it has just answered is in it. */
    async read(keyId: string, query: RequestLogQuery): Promise<RequestLogPage> {
      await writer.flush();
      return store.read(keyId, query, now().getTime());
    },
    /**
     * Deletes the logs of an erased account's keys, and has the store refuse their records for
     * ERASED_FOR_MS: those of requests still in flight, or buffered by any process, are never kept.
     */
    async forget(keyIds: readonly string[]): Promise<void> {
      if (keyIds.length === 0) return;
      try {
        await store.forget(keyIds, now().getTime());
      } catch (err) {
        logger.warn({ err, keyIds }, 'could not delete the request logs of erased keys; they expire within 24 h');
      }
    },
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
