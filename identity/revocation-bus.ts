import { EventEmitter } from 'node:events';

/**
 * Carries "this key was revoked" (by its HMAC hash, never the key) to every key cache.
 * In-process here; a Redis pub/sub implementation shares it between gateway processes.
 */
export interface RevocationBus {
  publish(keyHash: string): Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(listener: (keyHash: string) => void): () => void;
  /**
   * Told when revocations may have been missed (a shared bus lost its connection and has it
   * back): caches should drop everything and ask the store again. Returns the unsubscribe function.
   */
  onResync(listener: () => void): () => void;
}

const EVENT = 'revoked';

/**
 * Single-process bus. Delivery is synchronous, so when `publish` resolves every local
 * cache has already dropped the key. A failing listener does not stop the others.
 */
export function createLocalRevocationBus(): RevocationBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(keyHash) {
      const errors: unknown[] = [];
      for (const listener of emitter.listeners(EVENT) as Array<(keyHash: string) => void>) {
        try {
          listener(keyHash);
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length > 0) throw new AggregateError(errors, 'A revocation listener failed');
    },
    subscribe(listener) {
      emitter.on(EVENT, listener);
      return () => {
        emitter.off(EVENT, listener);
      };
    },
    // Nothing is ever missed in one process.
    onResync: () => () => {},
  };
}
