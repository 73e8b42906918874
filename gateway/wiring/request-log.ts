import { setTimeout as sleep } from 'node:timers/promises';
import { createOutageLog } from '../cache/outage-log';
import { createMemoryRequestLog } from '../request-log/memory-request-log';
import { createRedisRequestLog } from '../request-log/redis-request-log';
import type { RequestLogPage, RequestLogQuery } from '../request-log/request-log';
import { createRequestLogWriter } from '../request-log/request-log-writer';
import type { Wiring } from './context';
import type { Stores } from './stores';

/**
 * An erasure whose logs could not be deleted (Redis past its command timeout, or reconnecting) is
 * tried again after each of these waits, about 10 s in all: the operator got 204 and cannot retry,
 * the account being gone.
 */
export const FORGET_RETRY_DELAYS_MS: readonly number[] = [1000, 3000, 6000];

/** Each key's recent requests: a Redis stream per key with REDIS_URL (every process writes to it), else this process's memory. */
export function createRequestLog({ config, logger, now, defer }: Wiring, { redis }: Stores) {
  const store = redis ? createRedisRequestLog({ redis: redis.publisher, prefix: config.redisKeyPrefix }) : createMemoryRequestLog();
  const writer = createRequestLogWriter({ store, now, outage: createOutageLog(logger, 'request log') });
  defer(() => writer.close());
  const stopping = new AbortController();
  const retries = new Set<Promise<void>>();
  // Run before the writer's close: a stop cuts each wait short for one last try, whose mark then refuses the records the close writes.
  defer(async () => {
    stopping.abort();
    await Promise.all(retries);
  });

  const forgetLater = async (keyIds: readonly string[], failure: unknown) => {
    for (const delay of FORGET_RETRY_DELAYS_MS) {
      if (stopping.signal.aborted) break;
      await sleep(delay, undefined, { signal: stopping.signal, ref: false }).catch(() => {});
      try {
        await store.forget(keyIds, now().getTime());
        return;
      } catch (err) {
        failure = err;
      }
    }
    logger.warn({ err: failure, keyIds }, 'could not delete the request logs of erased keys; they expire within 24 h');
  };

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
     * If that fails it is tried again in the background, FORGET_RETRY_DELAYS_MS apart.
     */
    async forget(keyIds: readonly string[]): Promise<void> {
      if (keyIds.length === 0) return;
      try {
        await store.forget(keyIds, now().getTime());
      } catch (err) {
        const retry = forgetLater(keyIds, err).finally(() => retries.delete(retry));
        retries.add(retry);
      }
    },
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
