import { randomInt } from 'node:crypto';
import { Command, type Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { DEFAULT_CACHE_MAX_BYTES, entryBytes, entryNames, ownedEntry, type CacheLookup, type CachedResponse, type ListCache } from './list-cache';
import { createGenerationLeases, waitOutLeases } from './generation-lease';

const NEWLINE = 0x0a;
/** Long enough for one upstream list call; short enough that a crashed filler blocks nobody for long. */
const FILL_LOCK_MS = 2000;
/**
 * How long a generation read is trusted, and so how long a create waits before its 201 (see
 * generation-lease.ts): a few ms on a create that takes tens, against a round trip per turn of hits.
 */
export const GENERATION_LEASE_MS = 10;

interface EntryHeader {
  g: number;
  t: number;
  c: string;
  l?: string;
}

/** An entry as stored in Redis, copied into process memory with the generation it belongs to. */
interface LocalCopy {
  generation: number;
  expiresAt: number;
  entry: CachedResponse;
  /** The lookup answered while a generation lease holds: one object, not one per hit. */
  hit: CacheLookup;
  /** The generation read in flight this copy was last checked against, and the lookup built on it. */
  checkedAgainst?: Promise<number>;
  checked?: Promise<CacheLookup>;
}

/**
 * Entries are one Redis string: a JSON header line, then the body bytes exactly as sent.
 *   {prefix}cache:{env}:gen       generation counter (INCR on every create; starts at a random value)
 *   {prefix}cache:{env}:q:{query} header + body, PX = TTL
 *   {prefix}cache:{env}:fill:{query}  short NX lock (value: the generation) for cross-process single flight
 *
 * Each process also keeps a copy of the entries it has read or stored, tagged with their
 * generation, and knows the current generation through a short lease (generation-lease.ts): a hit
 * on a copy usually costs no round trip, and at most one small read of the counter shared by a
 * turn's requests, instead of moving the body out of Redis per request. A create in any process
 * bumps the counter and waits out the lease before its 201, so every lookup after it, anywhere,
 * reads the entry afresh.
 */
export function createRedisListCache(options: {
  redis: Redis;
  prefix: string;
  ttlSeconds: number;
  /** Where the turn's generation read is sent from: before the turn's writes (turn-end.ts). */
  atTurnEnd?: (task: () => void) => void;
  /** GENERATION_LEASE_MS unless a test needs a lease long enough to observe. */
  generationLeaseMs?: number;
  /** Bytes of entries this process keeps a copy of (CACHE_MAX_BYTES). */
  localCopyBytes?: number;
  /** The monotonic clock leases are measured by (`performance.now`); a test's own, to hold a lease as long as it needs. */
  now?: () => number;
}): ListCache {
  const { redis, prefix } = options;
  const ttlMs = options.ttlSeconds * 1000;
  const leaseMs = options.generationLeaseMs ?? GENERATION_LEASE_MS;
  const now = options.now ?? (() => performance.now());
  const genKey = (env: string) => `${prefix}cache:${env}:gen`;
  const entryKey = (env: string, key: string) => `${prefix}cache:${env}:q:${key}`;
  const fillKey = (env: string, key: string) => `${prefix}cache:${env}:fill:${key}`;
  const nameOf = entryNames();
  const copies = new LRUCache<string, LocalCopy>({
    maxSize: options.localCopyBytes ?? DEFAULT_CACHE_MAX_BYTES,
    sizeCalculation: (copy, key) => entryBytes(key, copy.entry),
  });
  const generations = createGenerationLeases({
    leaseMs,
    atTurnEnd: options.atTurnEnd,
    now,
    // Sent at once (no auto-pipelining queue, which would hold it for one more turn).
    read(env) {
      const command = new Command('get', [genKey(env)], { replyEncoding: 'utf8' });
      redis.sendCommand(command);
      return (command.promise as Promise<string | null>).then((gen) => Number(gen ?? 0));
    },
  });

  const keep = (environment: string, key: string, generation: number, read: CachedResponse) => {
    // A body read from Redis is a view on the reply's socket buffer; a copy kept for minutes gets its own.
    const entry = ownedEntry(read);
    copies.set(nameOf(environment, key), {
      generation,
      expiresAt: entry.storedAt + ttlMs,
      entry,
      hit: Object.freeze({ generation, filling: false, entry }),
    });
    return entry;
  };

  async function readEntry(environment: string, key: string): Promise<CacheLookup> {
    const sentAt = now();
    const [gen, raw, fill] = await redis.mgetBuffer(genKey(environment), entryKey(environment, key), fillKey(environment, key));
    const generation = gen ? Number(gen.toString()) : 0;
    // The entry's read is a generation read too: without it, the copy it makes would not match an older lease's generation.
    generations.observe(environment, generation, sentAt);
    const filling = fill != null && Number(fill.toString()) === generation;
    if (!raw) return { generation, filling };
    const split = raw.indexOf(NEWLINE);
    const header = JSON.parse(raw.subarray(0, split).toString()) as EntryHeader;
    if (header.g !== generation) return { generation, filling };
    const entry: CachedResponse = { storedAt: header.t, contentType: header.c, link: header.l, body: raw.subarray(split + 1) };
    return { generation, filling, entry: keep(environment, key, generation, entry) };
  }

  return {
    lookup(environment, key) {
      const copy = copies.get(nameOf(environment, key));
      if (!copy || Date.now() >= copy.expiresAt) return readEntry(environment, key);
      const generation = generations.current(environment);
      if (typeof generation === 'number') return generation === copy.generation ? copy.hit : readEntry(environment, key);
      // The requests waiting for one generation read share the lookup built on it: no promise per request.
      if (copy.checkedAgainst !== generation) {
        copy.checkedAgainst = generation;
        copy.checked = generation.then((current) => (current === copy.generation ? copy.hit : readEntry(environment, key)));
      }
      return copy.checked!;
    },
    async store(environment, key, generation, entry: CachedResponse) {
      if (ttlMs <= 0) return;
      keep(environment, key, generation, entry);
      const header: EntryHeader = { g: generation, t: entry.storedAt, c: entry.contentType, ...(entry.link ? { l: entry.link } : {}) };
      const value = Buffer.concat([Buffer.from(JSON.stringify(header)), Buffer.from([NEWLINE]), entry.body]);
      await redis.set(entryKey(environment, key), value, 'PX', ttlMs);
    },
    async invalidate(environment) {
      // A counter Redis has lost (restart, flush, eviction) starts again at a random value, never at
      // 0: a copy tagged with a generation from before cannot match a later one by coincidence.
      try {
        await Promise.all([redis.set(genKey(environment), randomInt(2 ** 40), 'NX'), redis.incr(genKey(environment))]);
      } finally {
        // Until the leases granted before the increment have run out, other processes may still serve the old
        // generation. A failed increment waits too: leases granted before Redis went away hold their few ms.
        await waitOutLeases(leaseMs);
      }
    },
    async claimFill(environment, key, generation) {
      const claimed = await redis.set(fillKey(environment, key), String(generation), 'PX', FILL_LOCK_MS, 'NX');
      return claimed === 'OK';
    },
    async releaseFill(environment, key) {
      await redis.del(fillKey(environment, key));
    },
  };
}
