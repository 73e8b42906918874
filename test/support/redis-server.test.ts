import Redis from 'ioredis';
import { startPrivateRedis } from './redis-server';

describe('a private redis-server for a test', () => {
  test('when its port is already served by another Redis, then starting fails with redis-server\'s reason instead of handing back the other server', async () => {
    const first = await startPrivateRedis();
    try {
      await expect(startPrivateRedis(first.port)).rejects.toThrow(new RegExp(`redis-server on port ${first.port} exited \\(1\\) before it answered:[\\s\\S]*already in use`, 'i'));
      const client = new Redis(first.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        expect(await client.ping()).toBe('PONG'); // the first is untouched
      } finally {
        client.disconnect();
      }
    } finally {
      await first.stop();
    }
  });

  test('when it is stopped and started again on its port, then the new server answers there', async () => {
    const first = await startPrivateRedis();
    await first.stop();
    const again = await startPrivateRedis(first.port);
    try {
      const client = new Redis(again.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      try {
        await client.connect();
        expect(await client.set('k', 'v')).toBe('OK');
      } finally {
        client.disconnect();
      }
    } finally {
      await again.stop();
    }
  });
});
