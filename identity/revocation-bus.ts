import { EventEmitter } from 'node:events';

/**
 * Carries "what you cached is stale" to every process's caches: a key's HMAC hash (never the
 * key) when it is revoked, `account:<id>` when an account is suspended, reinstated, erased or
 * moves to another plan (its keys' cached verdicts are stale), and `plans` when a plan changes.
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

/** Published when a plan's limits change: every process reloads its plans. */
export const PLANS_CHANGED = 'plans';
const ACCOUNT_MESSAGE = /^account:([1-9][0-9]{0,15})$/;

/** The message that makes every process forget the cached verdicts on an account's keys. */
export const accountChanged = (accountId: number): string => `account:${accountId}`;

/** The account an `accountChanged` message names, or null for any other message. */
export function changedAccount(message: string): number | null {
  const match = ACCOUNT_MESSAGE.exec(message);
  return match ? Number(match[1]) : null;
}

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
