import { LRUCache } from 'lru-cache';
import { DEFAULT_CACHE_MAX_BYTES, entryBytes, entryNames, ownedEntry, type CachedResponse, type ListCache } from './list-cache';

interface Stored {
  generation: number;
  entry: CachedResponse;
}

/** Single-process stand-in for the Redis cache, with the same generation rule, bounded by bytes (least recently used leave first). */
export function createMemoryListCache(options: { ttlSeconds: number; maxBytes?: number }): ListCache {
  const generations = new Map<string, number>();
  const nameOf = entryNames();
  const entries = new LRUCache<string, Stored>({
    maxSize: options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES,
    sizeCalculation: (stored, key) => entryBytes(key, stored.entry),
    ttl: Math.max(1, options.ttlSeconds) * 1000,
    // The clock read at every lookup: lru-cache's default keeps a reading for 1 ms behind a timer, a timer a millisecond under load.
    ttlResolution: 0,
  });
  return {
    lookup(environment, key) {
      const generation = generations.get(environment) ?? 0;
      const hit = entries.get(nameOf(environment, key));
      return hit && hit.generation === generation ? { generation, entry: hit.entry, filling: false } : { generation, filling: false };
    },
    async store(environment, key, generation, entry) {
      if (options.ttlSeconds > 0) entries.set(nameOf(environment, key), { generation, entry: ownedEntry(entry) });
    },
    async invalidate(environment) {
      generations.set(environment, (generations.get(environment) ?? 0) + 1);
    },
    async claimFill() {
      return true; // one process: the in-process single flight is all there is
    },
    async releaseFill() {},
  };
}
