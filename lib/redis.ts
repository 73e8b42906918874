import Redis from 'ioredis';

/**
 * A Redis connection that fails fast instead of queueing: commands time out within a bound,
 * so a Redis outage slows no request beyond it. Reconnection is automatic.
 */
export function createRedis(url: string, options: { commandTimeoutMs?: number } = {}): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    commandTimeout: options.commandTimeoutMs ?? 200,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false, // while disconnected, fail at once: callers bypass or fall back
    retryStrategy: (times) => Math.min(times * 100, 2000),
  });
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  client.on('error', () => {});
  return client;
}
