import Redis from 'ioredis';

/** Deletes the keys under `prefix` a bench's gateways left in a shared Redis; resolves with how many. */
export async function deleteRedisKeys(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  await redis.connect();
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
  return deleted;
}
