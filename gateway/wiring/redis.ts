import Redis from 'ioredis';

/**
 * A Redis connection that fails fast instead of queueing: commands time out within a bound,
 * so a Redis outage slows no request beyond it. Reconnection is automatic.
 */
export function createRedis(url: string, options: { commandTimeoutMs?: number; connectionName?: string; autoPipelining?: boolean } = {}): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    // Named, so an operator (or a test) can tell this process's connections apart in CLIENT LIST.
    connectionName: options.connectionName ?? `asg-gateway-${process.pid}`,
    connectTimeout: 2000,
    commandTimeout: options.commandTimeoutMs ?? 200,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false, // while disconnected, fail at once: callers bypass or fall back
    retryStrategy: (times) => Math.min(times * 100, 2000),
    // Commands issued in one turn of the event loop leave in one write: under load, many
    // requests' limiter and cache commands share a syscall, and one request's limiter and
    // cache read share one round trip.
    enableAutoPipelining: options.autoPipelining ?? false,
  });
  // Errors surface through the commands that fail; an unhandled 'error' event would crash the process.
  client.on('error', () => {});
  return client;
}
