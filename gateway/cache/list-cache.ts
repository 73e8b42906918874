/**
 * The list cache: whole `GET /pets` 200 responses, stored as ready bytes per environment and
 * normalised query, with a lifetime of CACHE_TTL_SECONDS.
 *
 * Invalidation rule: every environment has a generation counter; an entry is valid only for
 * the generation it was stored under. A 201 from `POST /pets` increments the counter (one
 * INCR, no scan), so the next list from any process misses and reads the new pet.
 */
export interface CachedResponse {
  /** Epoch ms when the upstream answered, for the `Age` header. */
  storedAt: number;
  contentType: string;
  link?: string;
  body: Buffer;
}

export interface CacheLookup {
  generation: number;
  entry?: CachedResponse;
  /** Another process holds the fill lock for this generation and is fetching the entry now. */
  filling: boolean;
}

export interface ListCache {
  /**
   * The environment's current generation and, when it belongs to it, the entry: at once from
   * process memory, or a promise when it takes a round trip.
   */
  lookup(environment: string, key: string): CacheLookup | Promise<CacheLookup>;
  store(environment: string, key: string, generation: number, entry: CachedResponse): Promise<void>;
  invalidate(environment: string): Promise<void>;
  /**
   * Cross-process single flight: true when this process should fetch the entry; false when
   * another process is already fetching it (then poll `lookup` briefly).
   */
  claimFill(environment: string, key: string, generation: number): Promise<boolean>;
  /** Gives the fill lock back (entry stored, or the fetch failed), so waiters stop waiting. */
  releaseFill(environment: string, key: string): Promise<void>;
}

/**
 * `limit` default applied and parameters sorted, so `?limit=20` and no query share one entry;
 * names and values percent-encoded, so no value can spell another parameter. It is also the query
 * a fill asks the upstream (list-cache step), so an entry holds the answer to what its key names.
 */
export function normalisedQueryKey(query: Readonly<Record<string, unknown>>): string {
  return Object.keys(query)
    .filter((k) => query[k] !== undefined)
    .sort()
    .map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(String(query[k]))}`)
    .join('&');
}

/** Names remembered per process at most; past this `entryNames` starts afresh. */
const MAX_ENTRY_NAMES = 10_000;

/**
 * The name an environment's entry is kept under in a process's memory, made once per query key.
 * The list-cache step usually hands a query's key as the same string (the operation remembers
 * the parse of a repeated query); a name joined on every lookup is a new string that the map
 * behind lru-cache flattens, hashes and compares in full, each a few hundred instructions a hit.
 */
export function entryNames(max = MAX_ENTRY_NAMES): (environment: string, key: string) => string {
  const byEnvironment = new Map<string, Map<string, string>>();
  let count = 0;
  return function entryName(environment, key) {
    let names = byEnvironment.get(environment);
    let name = names?.get(key);
    if (name !== undefined) return name;
    if (count === max) {
      byEnvironment.clear();
      names = undefined;
      count = 0;
    }
    if (names === undefined) byEnvironment.set(environment, (names = new Map()));
    names.set(key, (name = `${environment} ${key}`));
    count++;
    return name;
  };
}

/** Bytes of entries a process keeps (CACHE_MAX_BYTES's default). */
export const DEFAULT_CACHE_MAX_BYTES = 32 * 1024 * 1024;

/** Objects, strings and the cache's own bookkeeping around an entry's bytes, rounded up. */
const ENTRY_OVERHEAD_BYTES = 512;

/** What an entry costs a process's memory, as a byte-bounded cache counts it. */
export function entryBytes(key: string, entry: CachedResponse): number {
  // The whole allocation the body keeps alive, which a view on a larger buffer would hide.
  return entry.body.buffer.byteLength + 2 * (key.length + entry.contentType.length + (entry.link?.length ?? 0)) + ENTRY_OVERHEAD_BYTES;
}

/**
 * The entry with a body in an allocation of its own: a small body is often a view on Node's
 * shared 8 KiB pool or on a socket read, and kept for minutes it would keep all of that alive.
 */
export function ownedEntry(entry: CachedResponse): CachedResponse {
  const { body } = entry;
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return entry;
  const owned = Buffer.allocUnsafeSlow(body.length);
  body.copy(owned);
  return { ...entry, body: owned };
}
