import type Redis from 'ioredis';
import { createLocalRevocationBus, type RevocationBus } from './revocation-bus';

/**
 * Revocations shared by every gateway process through Redis pub/sub. Local listeners hear
 * a revocation at once (before `publish` resolves); other processes within a round trip.
 * `subscriber` must be a dedicated connection: a subscribed connection can run no other command.
 */
export async function createRedisRevocationBus(options: { publisher: Redis; subscriber: Redis; channel: string }): Promise<RevocationBus & { close(): void }> {
  const local = createLocalRevocationBus();
  const { publisher, subscriber, channel } = options;
  const onMessage = (from: string, keyHash: string) => {
    if (from === channel) void local.publish(keyHash).catch(() => {});
  };
  subscriber.on('message', onMessage);
  await subscriber.subscribe(channel);
  return {
    async publish(keyHash) {
      await local.publish(keyHash);
      await publisher.publish(channel, keyHash);
    },
    subscribe: (listener) => local.subscribe(listener),
    close() {
      subscriber.off('message', onMessage);
    },
  };
}
