import { createMemoryListCache } from './memory-list-cache';
import type { CachedResponse, CacheLookup, ListCache } from './list-cache';

const KIB = 1024;
const entry = (body: Buffer): CachedResponse => ({ storedAt: Date.now(), contentType: 'application/json', body });
const found = (cache: ListCache, key: string) => (cache.lookup('production', key) as CacheLookup).entry;

describe('in-memory list cache: bounded by bytes', () => {
  test('when many large entries are stored, then what it keeps stays within the byte budget, the least recently used leaving first', async () => {
    const budget = 1024 * KIB;
    const cache = createMemoryListCache({ ttlSeconds: 60, maxBytes: budget });
    const size = 100 * KIB; // a page of 100 pets with 200-character names, about
    for (let i = 0; i < 200; i++) await cache.store('production', `limit=100&after=${i}`, 0, entry(Buffer.alloc(size, i % 256)));

    const kept = Array.from({ length: 200 }, (_, i) => found(cache, `limit=100&after=${i}`));
    const keptBytes = kept.reduce((sum, e) => sum + (e?.body.length ?? 0), 0);
    expect(keptBytes).toBeLessThanOrEqual(budget);
    expect(keptBytes).toBeGreaterThanOrEqual(budget - 2 * size); // the budget is used, not a handful of entries
    expect(kept[0]).toBeUndefined();
    expect(kept[199]?.body.equals(Buffer.alloc(size, 199 % 256))).toBe(true);
  });

  test('when an entry is larger than the whole budget, then it is not kept and evicts nothing', async () => {
    const cache = createMemoryListCache({ ttlSeconds: 60, maxBytes: 256 * KIB });
    await cache.store('production', 'limit=1', 0, entry(Buffer.from('[]')));
    await cache.store('production', 'limit=2', 0, entry(Buffer.alloc(300 * KIB)));
    expect(found(cache, 'limit=2')).toBeUndefined();
    expect(found(cache, 'limit=1')?.body.toString()).toBe('[]');
  });

  test('when a small body is a view on a larger buffer, then the cache keeps a copy of its own bytes, not the whole buffer', async () => {
    const cache = createMemoryListCache({ ttlSeconds: 60, maxBytes: 256 * KIB });
    const socketRead = Buffer.alloc(64 * KIB, 'x');
    socketRead.write('[{"id":1}]', 1000);
    await cache.store('production', 'limit=3', 0, entry(socketRead.subarray(1000, 1010)));
    const kept = found(cache, 'limit=3')!;
    expect(kept.body.toString()).toBe('[{"id":1}]');
    expect(kept.body.buffer.byteLength).toBe(10);
  });
});

describe('in-memory list cache: entry names', () => {
  test('when both environments store the same query, then each finds its own entry, also after more queries than the names it remembers', async () => {
    const cache = createMemoryListCache({ ttlSeconds: 60, maxBytes: 64 * 1024 * KIB });
    await cache.store('production', 'limit=20', 0, entry(Buffer.from('production')));
    await cache.store('staging', 'limit=20', 0, entry(Buffer.from('staging')));
    for (let i = 0; i < 10_001; i++) found(cache, `limit=20&after=${i}`);

    expect(found(cache, 'limit=20')?.body.toString()).toBe('production');
    expect((cache.lookup('staging', 'limit=20') as CacheLookup).entry?.body.toString()).toBe('staging');
    expect(found(cache, 'limit=21')).toBeUndefined();
  });
});
