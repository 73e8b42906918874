import type Redis from 'ioredis';
import type { CachedResponse, ListCache } from './list-cache';

const NEWLINE = 0x0a;
/** Long enough for one upstream list call; short enough that a crashed filler blocks nobody for long. */
const FILL_LOCK_MS = 2000;

interface EntryHeader {
  g: number;
  t: number;
  c: string;
  l?: string;
}

/**
 * Entries are one Redis string: a JSON header line, then the body bytes exactly as sent.
 *   {prefix}cache:{env}:gen       generation counter (INCR on every create)
 *   {prefix}cache:{env}:q:{query} header + body, PX = TTL
 *   {prefix}cache:{env}:fill:{query}  short NX lock (value: the generation) for cross-process single flight
 */
export function createRedisListCache(options: { redis: Redis; prefix: string; ttlSeconds: number }): ListCache {
  const { redis, prefix } = options;
  const ttlMs = options.ttlSeconds * 1000;
  const genKey = (env: string) => `${prefix}cache:${env}:gen`;
  const entryKey = (env: string, key: string) => `${prefix}cache:${env}:q:${key}`;
  const fillKey = (env: string, key: string) => `${prefix}cache:${env}:fill:${key}`;

  return {
    async lookup(environment, key) {
      const [gen, raw, fill] = await redis.mgetBuffer(genKey(environment), entryKey(environment, key), fillKey(environment, key));
      const generation = gen ? Number(gen.toString()) : 0;
      const filling = fill != null && Number(fill.toString()) === generation;
      if (!raw) return { generation, filling };
      const split = raw.indexOf(NEWLINE);
      const header = JSON.parse(raw.subarray(0, split).toString()) as EntryHeader;
      if (header.g !== generation) return { generation, filling };
      return { generation, filling, entry: { storedAt: header.t, contentType: header.c, link: header.l, body: raw.subarray(split + 1) } };
    },
    async store(environment, key, generation, entry: CachedResponse) {
      if (ttlMs <= 0) return;
      const header: EntryHeader = { g: generation, t: entry.storedAt, c: entry.contentType, ...(entry.link ? { l: entry.link } : {}) };
      const value = Buffer.concat([Buffer.from(JSON.stringify(header)), Buffer.from([NEWLINE]), entry.body]);
      await redis.set(entryKey(environment, key), value, 'PX', ttlMs);
    },
    async invalidate(environment) {
      await redis.incr(genKey(environment));
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
