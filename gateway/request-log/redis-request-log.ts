import type { ChainableCommander, Redis } from 'ioredis';
import { ApiError } from '../../lib/api-error';
import type { CacheStatus } from '../pipeline/pipeline';
import { ERASED_FOR_MS, matchesQuery, MAX_RECORD_AGE_MS, MAX_RECORDS_PER_KEY, parseCursor, recordedPath, type LoggedRequest, type RequestLogStore } from './request-log';

/** Batch entries read per round trip beyond what an unfiltered page needs, while a filter skips records. */
const FILTERED_CHUNK = 250;

/**
 * Appends one key's records of one batch to its stream as one entry, `n` <count> `t` <the newest
 * record's time> `r` <records>, the records a JSON array each, a line apiece: [time, method,
 * path, status, code, latencyMs, cache, requestId]. The stream counts its records: an entry's id
 * is `<ms>-<first>`, where `ms` is Redis's clock when the stream was made and `first` its first
 * record's number, one past the last record of the entry before it (1 in a new stream), and a
 * record's id in the log is `<ms>-<its number>`. A stream made again (Redis restarted empty, the
 * stream expired or was emptied) in a later millisecond of Redis's clock numbers above the
 * earlier one, and an old cursor reads none of its records; a clock stepped back (a failover to a
 * host whose clock is behind) would break that. Entries before the one holding the key's
 * `perKey`-th newest record are cut (a read leaves out the rest of that one), so are entries
 * whose newest record is older than `minMs`, and the stream lives `ttlMs` past its last write.
 *
 * Nothing is appended while the key's erasure mark exists, checked in the script so that a batch
 * racing the erasure cannot slip in between.
 *
 * One entry a batch, not one a record: a flooded key's 1,000 records every 250 ms, added one by
 * one, held Redis for milliseconds, and every process's commands behind it (docs/benchmarks.md).
 *   KEYS[1] the key's stream, KEYS[2] its erasure mark; ARGV: perKey, ttlMs, count, newestMs, minMs, records
 */
const APPEND_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local stream, perKey, count, minMs = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[5])
local made, first
local newest = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
if newest then
  local last
  made, last = string.match(newest[1], '^(%d+)-(%d+)$')
  first = tonumber(last) + tonumber(newest[2][2])
else
  local now = redis.call('TIME')
  made, first = string.format('%.0f', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)), 1
end
local function id(number)
  return made .. '-' .. string.format('%.0f', number)
end
redis.call('XADD', stream, id(first), 'n', count, 't', ARGV[4], 'r', ARGV[6])
redis.call('PEXPIRE', stream, ARGV[2])
local floor = first + count - perKey
local oldest = floor > 1 and redis.call('XREVRANGE', stream, id(floor), '-', 'COUNT', 1)[1]
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

const COMMAND = 'asgRequestLogAppend';

type AppendCommand = (stream: string, erased: string, perKey: number, ttlMs: number, count: number, newestMs: number, minMs: number, records: Buffer) => ChainableCommander;

/** A stream entry as XRANGE gives it: its id and its fields as a flat list. */
type StreamEntry = [id: string, fields: string[]];

export interface RedisRequestLogOptions {
  redis: Redis;
  /** REDIS_KEY_PREFIX: streams are `<prefix>reqlog-v2:<keyId>`, erasure marks `<prefix>reqlog-erased:<keyId>`. */
  prefix: string;
}

/**
 * The request log shared by every gateway process: one Redis stream per key, an entry per batch.
 * A batch is one pipeline of one script call per key it has records of; a read walks the key's
 * entries newest first from the cursor, down to its last MAX_RECORDS_PER_KEY records.
 */
export function createRedisRequestLog(o: RedisRequestLogOptions): RequestLogStore {
  const { redis, prefix } = o;
  redis.defineCommand(COMMAND, { numberOfKeys: 2, lua: APPEND_SCRIPT });
  const streamOf = (keyId: string) => `${prefix}reqlog-v2:${keyId}`;
  const erasedOf = (keyId: string) => `${prefix}reqlog-erased:${keyId}`;
  // Where releases before kept the log, an entry a record, then an entry a batch numbered `<n>-0`: no longer read, as a process still running the last would take a `<ms>-<n>` id's `<ms>` for a record number; each expires within 24 h of its last write.
  const formerStreamsOf = (keyId: string) => [`${prefix}reqlog:${keyId}`, `${prefix}reqlog-batches:${keyId}`];

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
      const minMs = Math.floor(nowMs - MAX_RECORD_AGE_MS);
      for (const [keyId, indexes] of byKey) {
        const from = Math.max(0, indexes.length - MAX_RECORDS_PER_KEY);
        const lines: string[] = [];
        let bytes = 0;
        let newestMs = 0;
        for (let n = from; n < indexes.length; n++) {
          const i = indexes[n]!;
          const time = Math.floor(batch.times[i]!);
          if (time > newestMs) newestMs = time;
          const path = recordedPath(batch.prefixes[i]!, batch.apiPaths[i]!, batch.searches[i]!);
          const line = JSON.stringify([time, batch.methods[i]!, path, batch.statuses[i]!, batch.codes[i] ?? null, batch.latencyTenths[i]! / 10, batch.caches[i] ?? null, batch.requestIds[i]!]);
          lines.push(line);
          bytes += Buffer.byteLength(line) + 1;
        }
        append(streamOf(keyId), erasedOf(keyId), MAX_RECORDS_PER_KEY, MAX_RECORD_AGE_MS, lines.length, newestMs, minMs, joinedLines(lines, bytes - 1));
      }
      return pipeline.exec().then((results) => {
        const failed = results?.find(([err]) => err);
        if (failed) throw failed[0];
      });
    },

    async read(keyId, query, nowMs) {
      const stream = streamOf(keyId);
      const oldestMs = nowMs - MAX_RECORD_AGE_MS;
      // The portal checked the cursor's shape.
      const after = query.after === undefined ? undefined : parseCursor(query.after)!;
      const filtered = query.status !== undefined || query.requestId !== undefined;
      // Entries, each of a record at least.
      const chunk = filtered ? Math.max(FILTERED_CHUNK, query.limit + 1) : query.limit + 1;
      const page = (end: string) => redis.xrevrange(stream, end, '-', 'COUNT', chunk) as Promise<StreamEntry[]>;
      // From the entry holding the cursor's record, whose id is at most the cursor's (none, for a cursor of a stream since made again).
      let end = after === undefined ? '+' : `${after.ms}-${after.seq}`;
      // The newest entry tells how many records the key has had: its log is the last MAX_RECORDS_PER_KEY. A first page starts with it.
      const [newest, firstPage] = await fromRedis(async () => {
        if (after === undefined) {
          const entries = await page(end);
          return [entries[0], entries] as const;
        }
        const replies = await redis.multi().xrevrange(stream, '+', '-', 'COUNT', 1).xrevrange(stream, end, '-', 'COUNT', chunk).exec();
        const [[newestReply], entries] = replies!.map(([err, reply]) => {
          if (err) throw err;
          return reply as StreamEntry[];
        }) as [StreamEntry[], StreamEntry[]];
        return [newestReply, entries] as const;
      });
      const found: LoggedRequest[] = [];
      if (newest === undefined) return { requests: found };
      const [, newestFirst, newestCount] = entryNumbers(newest);
      const oldestKept = newestFirst + newestCount - MAX_RECORDS_PER_KEY;
      for (let entries = firstPage; ; entries = await fromRedis(() => page(end))) {
        for (const entry of entries) {
          const [made, first, count, lines] = entryNumbers(entry);
          for (let number = first + count - 1; number >= first; number--) {
            if (number < oldestKept) return { requests: found };
            if (after !== undefined && (made > after.ms || (made === after.ms && number >= after.seq))) continue;
            const request = loggedRequest(`${made}-${number}`, lines[number - first]!);
            // Records follow the order they were written in, which their times follow but for clocks a few ms apart.
            if (request.time < oldestMs) return { requests: found };
            if (!matchesQuery(request, query)) continue;
            found.push(request);
            if (found.length > query.limit) {
              found.pop();
              return { requests: found, next: found[found.length - 1]!.id };
            }
          }
        }
        if (entries.length < chunk) return { requests: found };
        end = `(${entries[entries.length - 1]![0]}`;
      }
    },

    async forget(keyIds) {
      if (keyIds.length === 0) return;
      // One transaction: an append before it is deleted with the stream, one after it finds the mark.
      const erase = redis.multi();
      for (const keyId of keyIds) erase.set(erasedOf(keyId), '1', 'PX', ERASED_FOR_MS);
      const results = await erase.del(...keyIds.flatMap((keyId) => [streamOf(keyId), ...formerStreamsOf(keyId)])).exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
    },
  };
}

const NEWLINE = 0x0a;

/**
 * The lines, a newline between each, as bytes outside the JS heap. As one string, a flooded key's
 * batch (130 KB and more) and ioredis's copy of the command around it were large objects that
 * outlived a scavenge now and then, and grew the old generation towards a mark-compact every few
 * seconds under load (docs/benchmarks.md); given a Buffer, ioredis copies it into its own.
 */
function joinedLines(lines: readonly string[], bytes: number): Buffer {
  const joined = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const line of lines) {
    if (at > 0) joined[at++] = NEWLINE;
    at += joined.write(line, at);
  }
  return joined;
}

/** A read's round trip; Redis failing it is a 503 the client may retry. */
async function fromRedis<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new ApiError('service_unavailable', 'The request log is temporarily unavailable; retry shortly.', { cause: err, headers: { 'Retry-After': '1' } });
  }
}

/** An entry's stream's making time, its first record number, its record count, and its records' lines (oldest first). */
function entryNumbers([id, fields]: StreamEntry): [made: number, first: number, count: number, lines: string[]] {
  const dash = id.indexOf('-');
  const lines = fields[5] === undefined ? [] : fields[5].split('\n');
  return [Number(id.slice(0, dash)), Number(id.slice(dash + 1)), Number(fields[1]), lines];
}

function loggedRequest(id: string, line: string): LoggedRequest {
  const [time, method, path, status, code, latencyMs, cache, requestId] = JSON.parse(line) as [number, string, string, number, string | null, number, CacheStatus | null, string];
  return { id, time, method, path, status, code, latencyMs, cache, requestId };
}
