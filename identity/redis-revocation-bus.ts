import type Redis from 'ioredis';
import { createLocalRevocationBus, type RevocationBus } from './revocation-bus';

export interface RedisRevocationBusOptions {
  publisher: Redis;
  subscriber: Redis;
  channel: string;
  /** How often revocations that could not be published are retried while Redis is away. */
  retryMs?: number;
}

/**
 * Revocations shared by every gateway process through Redis pub/sub. Local listeners hear
 * a revocation at once (before `publish` resolves); other processes within a round trip.
 * `subscriber` must be a dedicated connection: a subscribed connection can run no other command.
 *
 * Through a Redis outage: the revocation is already in the database, so `publish` does not fail;
 * what could not be sent is re-sent once Redis answers. A process whose subscription dropped may
 * have missed messages while it was away, so when it is back its listeners are told to resync.
 */
export async function createRedisRevocationBus(options: RedisRevocationBusOptions): Promise<RevocationBus & { close(): void }> {
  const local = createLocalRevocationBus();
  const { publisher, subscriber, channel } = options;
  const retryMs = options.retryMs ?? 1000;
  const resyncListeners = new Set<() => void>();
  const unsent = new Set<string>();
  let retryTimer: NodeJS.Timeout | undefined;

  const onMessage = (from: string, keyHash: string) => {
    if (from === channel) void local.publish(keyHash).catch(() => {});
  };
  let subscriptionLost = false;
  const onSubscriberLost = () => {
    subscriptionLost = true;
  };
  const onSubscriberReady = () => {
    if (!subscriptionLost) return;
    subscriptionLost = false;
    for (const listener of resyncListeners) listener();
  };

  const sendUnsent = async () => {
    for (const keyHash of [...unsent]) {
      try {
        await publisher.publish(channel, keyHash);
        unsent.delete(keyHash);
      } catch {
        return scheduleRetry();
      }
    }
  };
  function scheduleRetry() {
    if (retryTimer || unsent.size === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void sendUnsent();
    }, retryMs);
    retryTimer.unref();
  }
  const onPublisherReady = () => void sendUnsent();

  subscriber.on('message', onMessage);
  subscriber.on('close', onSubscriberLost);
  subscriber.on('ready', onSubscriberReady);
  publisher.on('ready', onPublisherReady);
  await subscriber.subscribe(channel);
  return {
    async publish(keyHash) {
      await local.publish(keyHash);
      try {
        await publisher.publish(channel, keyHash);
      } catch {
        unsent.add(keyHash);
        scheduleRetry();
      }
    },
    subscribe: (listener) => local.subscribe(listener),
    onResync(listener) {
      resyncListeners.add(listener);
      return () => resyncListeners.delete(listener);
    },
    close() {
      clearTimeout(retryTimer);
      subscriber.off('message', onMessage);
      subscriber.off('close', onSubscriberLost);
      subscriber.off('ready', onSubscriberReady);
      publisher.off('ready', onPublisherReady);
    },
  };
}
