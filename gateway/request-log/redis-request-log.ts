import type { ChainableCommander, Redis } from 'ioredis';
import { ApiError } from '../../lib/api-error';
import type { CacheStatus } from '../pipeline/pipeline';
import { matchesQuery, MAX_RECORD_AGE_MS, MAX_RECORDS_PER_KEY, recordedPath, type LoggedRequest, type RequestLogStore } from './request-log';

/** Entries read per round trip while a filter skips some. */
const FILTERED_CHUNK = 250;

/**
 * Appends one key's records to its stream, each as one field `r`: the JSON array
 * [time, method, path, status, code, latencyMs, cache, requestId]. They come as one argument,
 * a line per record, `<time ms> <json>`, so a batch costs the gateway one string per key, not
 * eight arguments per record. A record's id is its time, raised to the stream's last id when it
 * is lower (another process's clock, or its batch sent later), so ids never go back and an
 * append never fails; then the stream is cut to its last `perKey` entries and to ids of at least
 * `minMs`, and lives `ttlMs` past its last write.
 *   KEYS[1] the key's stream; ARGV: perKey, minMs, ttlMs, records
 */
const APPEND_SCRIPT = `
local stream = KEYS[1]
local lastMs, lastSeq = -1, 0
if redis.call('EXISTS', stream) == 1 then
  local info = redis.call('XINFO', 'STREAM', stream)
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      local ms, seq = string.match(info[i + 1], '^(%d+)-(%d+)$')
      lastMs, lastSeq = tonumber(ms), tonumber(seq)
    end
  end
end
local records, at = ARGV[4], 1
while true do
  local space = string.find(records, ' ', at, true)
  if not space then break end
  local eol = string.find(records, '\\n', space, true)
  local ms = tonumber(string.sub(records, at, space - 1))
  if ms <= lastMs then ms, lastSeq = lastMs, lastSeq + 1 else lastSeq = 0 end
  lastMs = ms
  redis.call('XADD', stream, string.format('%.0f-%d', ms, lastSeq), 'r', string.sub(records, space + 1, eol - 1))
  at = eol + 1
end
redis.call('XTRIM', stream, 'MAXLEN', ARGV[1])
redis.call('XTRIM', stream, 'MINID', '~', ARGV[2])
redis.call('PEXPIRE', stream, ARGV[3])
return 0
`;

const COMMAND = 'asgRequestLogAppend';

type AppendCommand = (stream: string, perKey: number, minMs: number, ttlMs: number, records: string) => ChainableCommander;

export interface RedisRequestLogOptions {
  redis: Redis;
  /** REDIS_KEY_PREFIX: streams are `<prefix>reqlog:<keyId>`. */
  prefix: string;
}

/**
 * The request log shared by every gateway process: one Redis stream per key. A batch is one
 * pipeline of one script call per key it has records of; a read walks the key's stream newest
 * first from the cursor, down to the oldest id that is less than MAX_RECORD_AGE_MS old.
 */
export function createRedisRequestLog(o: RedisRequestLogOptions): RequestLogStore {
  const { redis, prefix } = o;
  redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: APPEND_SCRIPT });
  const streamOf = (keyId: string) => `${prefix}reqlog:${keyId}`;

  return {
    append(batch, nowMs) {
      // Each key's records, newest last; only its last MAX_RECORDS_PER_KEY would survive the batch.
      const byKey = new Map<string, number[]>();
      for (let i = 0; i < batch.count; i++) {
        const keyId = batch.keyIds[i]!;
        let indexes = byKey.get(keyId);
        if (!indexes) byKey.set(keyId, (indexes = []));
        indexes.push(i);
      }
      const pipeline = redis.pipeline();
      const append = (pipeline as unknown as Record<typeof COMMAND, AppendCommand>)[COMMAND].bind(pipeline);
      const minMs = Math.max(0, Math.floor(nowMs - MAX_RECORD_AGE_MS));
      for (const [keyId, indexes] of byKey) {
        let lines = '';
        for (let n = Math.max(0, indexes.length - MAX_RECORDS_PER_KEY); n < indexes.length; n++) {
          const i = indexes[n]!;
          const time = Math.floor(batch.times[i]!);
          const path = recordedPath(batch.prefixes[i]!, batch.apiPaths[i]!, batch.searches[i]!);
          const fields = [time, batch.methods[i]!, path, batch.statuses[i]!, batch.codes[i] ?? null, batch.latencyTenths[i]! / 10, batch.caches[i] ?? null, batch.requestIds[i]!];
          lines += `${time} ${JSON.stringify(fields)}\n`;
        }
        append(streamOf(keyId), MAX_RECORDS_PER_KEY, minMs, MAX_RECORD_AGE_MS, lines);
      }
      return pipeline.exec().then((results) => {
        const failed = results?.find(([err]) => err);
        if (failed) throw failed[0];
      });
    },

    async read(keyId, query, nowMs) {
      const stream = streamOf(keyId);
      const oldest = String(Math.max(0, Math.floor(nowMs - MAX_RECORD_AGE_MS)));
      const filtered = query.status !== undefined || query.requestId !== undefined;
      const chunk = filtered ? Math.max(FILTERED_CHUNK, query.limit + 1) : query.limit + 1;
      const found: LoggedRequest[] = [];
      let end = query.after === undefined ? '+' : `(${query.after}`;
      for (;;) {
        let entries: Array<[string, string[]]>;
        try {
          entries = await redis.xrevrange(stream, end, oldest, 'COUNT', chunk);
        } catch (err) {
          throw new ApiError('service_unavailable', 'The request log is temporarily unavailable; retry shortly.', { cause: err, headers: { 'Retry-After': '1' } });
        }
        for (const [id, fields] of entries) {
          const request = loggedRequest(id, fields);
          if (!matchesQuery(request, query)) continue;
          found.push(request);
          if (found.length > query.limit) {
            found.pop();
            return { requests: found, next: found[found.length - 1]!.id };
          }
        }
        if (entries.length < chunk) return { requests: found };
        end = `(${entries[entries.length - 1]![0]}`;
      }
    },

    async forget(keyIds) {
      if (keyIds.length > 0) await redis.del(...keyIds.map(streamOf));
    },
  };
}

function loggedRequest(id: string, fields: string[]): LoggedRequest {
  const value = fields[0] === 'r' ? fields[1] : undefined;
  const [time, method, path, status, code, latencyMs, cache, requestId] = JSON.parse(value ?? '[]') as [number, string, string, number, string | null, number, CacheStatus | null, string];
  return { id, time, method, path, status, code, latencyMs, cache, requestId };
}
