import {
  ERASED_FOR_MS,
  matchesQuery,
  MAX_RECORD_AGE_MS,
  MAX_RECORDS_PER_KEY,
  parseCursor,
  recordedPath,
  type LoggedRequest,
  type RecordBatch,
  type RequestLogStore,
} from './request-log';
import { lastPerKey } from './last-per-key';

/**
 * Records kept in all, across keys: 20 keys' full logs. Measured at about 0.7 KB a record (its
 * object, times, request id and path) and 1.3 KB with a path at its 512-character cap: 14 MB
 * typically, 26 MB at worst, the order of the list cache's 32 MiB. Without Redis the gateway is
 * one process for development or a small deployment, where 20 busy keys is plenty.
 */
const DEFAULT_MAX_RECORDS = 20_000;

/** A request as the memory log keeps it, with its place in its key's log (`idMs` never decreases, even across a log deleted and made again; `seq` counts within one ms). */
interface StoredRecord extends Omit<LoggedRequest, 'id'> {
  idMs: number;
  seq: number;
}

/** One key's last records, oldest first, in a ring that grows to `perKey` and then overwrites. */
interface KeyRing {
  records: Array<StoredRecord | undefined>;
  /** Index of the oldest record, and how many are held. */
  start: number;
  size: number;
  /** The id of the last record written to it, cut or not: the next one's is above it. */
  lastMs: number;
  lastSeq: number;
}

export interface MemoryRequestLogOptions {
  maxRecords?: number;
  perKey?: number;
}

/**
 * The request log in process memory, for a gateway without REDIS_URL. Bounded per key (the last
 * `perKey`, none older than MAX_RECORD_AGE_MS) and in all (`maxRecords`): past it, expired keys
 * go first, then the largest logs lose their oldest records down to a common level, so that one
 * account's flood cannot empty a quieter key's log.
 */
export function createMemoryRequestLog(options: MemoryRequestLogOptions = {}): RequestLogStore & { size(): number } {
  const maxRecords = options.maxRecords ?? DEFAULT_MAX_RECORDS;
  const perKey = options.perKey ?? MAX_RECORDS_PER_KEY;
  if (!(perKey >= 1 && maxRecords >= perKey)) throw new Error('The memory request log needs 1 ≤ perKey ≤ maxRecords');
  // In the order the keys were last written to: the first is the first to go among equals.
  const rings = new Map<string, KeyRing>();
  let total = 0;
  // The highest id of any log deleted so far: a log made again for its key numbers on from it, so an old cursor never reads newer records as older.
  let goneMs = -1;
  let goneSeq = -1;
  // Erased keys, in the order they were erased, and until when (epoch ms) their records are refused.
  const erased = new Map<string, number>();

  const at = (ring: KeyRing, i: number) => (ring.start + i) % perKey;
  const newest = (ring: KeyRing) => (ring.size > 0 ? ring.records[at(ring, ring.size - 1)] : undefined);

  const remove = (keyId: string, ring: KeyRing) => {
    rings.delete(keyId);
    total -= ring.size;
    if (ring.lastMs > goneMs || (ring.lastMs === goneMs && ring.lastSeq > goneSeq)) [goneMs, goneSeq] = [ring.lastMs, ring.lastSeq];
  };

  const dropOldest = (ring: KeyRing, n: number) => {
    for (let i = 0; i < n; i++) ring.records[at(ring, i)] = undefined;
    ring.start = at(ring, n);
    ring.size -= n;
    total -= n;
  };

  const push = (ring: KeyRing, batch: RecordBatch, i: number) => {
    const time = batch.times[i]!;
    const idMs = Math.max(Math.floor(time), ring.lastMs);
    const seq = ring.lastMs === idMs ? ring.lastSeq + 1 : 0;
    ring.lastMs = idMs;
    ring.lastSeq = seq;
    const record: StoredRecord = {
      idMs,
      seq,
      time,
      method: batch.methods[i]!,
      path: recordedPath(batch.prefixes[i]!, batch.apiPaths[i]!, batch.searches[i]!),
      status: batch.statuses[i]!,
      code: batch.codes[i] ?? null,
      latencyMs: batch.latencyTenths[i]! / 10,
      cache: batch.caches[i] ?? null,
      requestId: batch.requestIds[i]!,
    };
    if (ring.size === perKey) dropOldest(ring, 1);
    ring.records[at(ring, ring.size)] = record;
    ring.size++;
    total++;
  };

  const dropExpired = (ring: KeyRing, minMs: number) => {
    let n = 0;
    while (n < ring.size && ring.records[at(ring, n)]!.idMs < minMs) n++;
    if (n > 0) dropOldest(ring, n);
  };

  /** Cuts the records past `maxRecords` from the largest logs, oldest first, so that a flood cannot empty a small log. */
  const trim = () => {
    // Logs counted by size, not sorted: the level is found in perKey steps, whatever the number of keys.
    const logsOfSize = new Uint32Array(perKey + 1);
    for (const ring of rings.values()) logsOfSize[ring.size]!++;
    // The highest level that frees the excess when every log is cut to it: `above` records lie over it, on `larger` logs.
    const excess = total - maxRecords;
    let level = perKey;
    let above = 0;
    let larger = 0;
    while (above < excess) {
      larger += logsOfSize[level]!;
      level--;
      above += larger;
    }
    // Cutting to level + 1 frees all but `extra`, which the logs written least recently give, one record each, so the cut is exact.
    let extra = excess - (above - larger);
    for (const [keyId, ring] of rings) {
      if (ring.size <= level) continue;
      const keep = extra > 0 ? level : level + 1;
      if (extra > 0) extra--;
      dropOldest(ring, ring.size - keep);
      if (ring.size === 0) remove(keyId, ring);
    }
  };

  return {
    append(batch, nowMs) {
      const minMs = nowMs - MAX_RECORD_AGE_MS;
      for (const [keyId, until] of erased) {
        if (until > nowMs) break;
        erased.delete(keyId);
      }
      // Each key's last `perKey` records, the keys in the order of their last record in the batch:
      // the order they move to the end of the tie-break order in (once per key and batch, not per request).
      const groups = lastPerKey(batch.keyIds, batch.count, perKey).sort((a, b) => a[a.length - 1]! - b[b.length - 1]!);
      for (const slots of groups) {
        const keyId = batch.keyIds[slots[0]!]!;
        if (erased.has(keyId)) continue;
        let ring = rings.get(keyId);
        if (ring) rings.delete(keyId);
        else ring = { records: [], start: 0, size: 0, lastMs: goneMs, lastSeq: goneSeq };
        rings.set(keyId, ring);
        for (const i of slots) push(ring, batch, i);
        dropExpired(ring, minMs);
      }
      // Keys whose newest record has expired go first; then, if still over the bound, the largest logs are cut.
      for (const [keyId, ring] of rings) {
        if ((newest(ring)?.idMs ?? -Infinity) >= minMs) break;
        remove(keyId, ring);
      }
      if (total > maxRecords) trim();
    },

    async read(keyId, query, nowMs) {
      const ring = rings.get(keyId);
      const requests: LoggedRequest[] = [];
      if (!ring) return { requests };
      const minMs = nowMs - MAX_RECORD_AGE_MS;
      const after = query.after === undefined ? undefined : parseCursor(query.after);
      for (let n = ring.size - 1; n >= 0; n--) {
        const record = ring.records[at(ring, n)]!;
        if (record.idMs < minMs) break;
        if (after && (record.idMs > after.ms || (record.idMs === after.ms && record.seq >= after.seq))) continue;
        if (!matchesQuery(record, query)) continue;
        if (requests.length === query.limit) return { requests, next: requests[requests.length - 1]!.id };
        requests.push(loggedRequest(record));
      }
      return { requests };
    },

    forget(keyIds, nowMs) {
      for (const keyId of keyIds) {
        erased.delete(keyId);
        erased.set(keyId, nowMs + ERASED_FOR_MS);
        const ring = rings.get(keyId);
        if (ring) remove(keyId, ring);
      }
    },

    size: () => total,
  };
}

function loggedRequest(r: StoredRecord): LoggedRequest {
  return { id: `${r.idMs}-${r.seq}`, time: r.time, method: r.method, path: r.path, status: r.status, code: r.code, latencyMs: r.latencyMs, cache: r.cache, requestId: r.requestId };
}
