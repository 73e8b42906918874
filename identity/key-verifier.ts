import { LRUCache } from 'lru-cache';
import type { Environment } from '../openapi/environments';
import { evaluateKey, parseApiKey, type ApiKeyService, type KeyRecord, type VerifyResult } from './api-key-service';
import { changedAccount, PLANS_CHANGED, type RevocationBus } from './revocation-bus';

/**
 * Key caches, both keyed by the key's HMAC hash (never the key itself):
 * - `found`: what the store said about existing keys, for `ttlMs`.
 * - `missing`: hashes the store does not know, briefly (`negativeTtlMs`) and in a separate,
 *   bounded cache, so a flood of guessed keys neither reaches the store per request nor
 *   evicts real keys.
 * Invalidation: a revocation message evicts the hash from both at once (every process
 * subscribes), so revocation takes effect well within a second. Expiry and environment are
 * re-evaluated on every hit, so an expired key is refused the instant it expires.
 */
export interface KeyVerifier {
  verify(secret: string, environment: Environment): Promise<VerifyResult>;
  /** The keyed hash of a well-formed key, or null (counted as malformed) without hashing anything else. */
  hashOf(secret: string): string | null;
  /**
   * The verdict on a key by its hash: at once when the cache knows the hash (the hot path, no
   * promise), a promise when the store must be asked.
   */
  check(keyHash: string, environment: Environment): VerifyResult | Promise<VerifyResult>;
  stats(): KeyVerifierStats;
  /** Stops listening for revocations. */
  close(): void;
}

export interface KeyVerifierStats {
  hits: number;
  misses: number;
  /** Keys refused by the shape check, before any cache or store access. */
  malformed: number;
  evictions: number;
  size: number;
}

export interface KeyVerifierOptions {
  keys: Pick<ApiKeyService, 'hash' | 'findByHash'>;
  revocations: RevocationBus;
  /** Lifetime of a cached lookup of an existing key. */
  ttlMs: number;
  /** Most existing keys held. */
  max: number;
  /** Lifetime of a "no such key" entry. Default 5000 ms. */
  negativeTtlMs?: number;
  /** Most "no such key" entries held. Default `max`. */
  negativeMax?: number;
  now?: () => Date;
}

export const DEFAULT_NEGATIVE_TTL_MS = 5000;

/** A key the store knows, with the verdicts already given on it (used only while it cannot expire). */
interface CachedKey {
  record: KeyRecord;
  verdicts: Partial<Record<Environment, VerifyResult>>;
}

export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const { keys, revocations, ttlMs, max } = options;
  const negativeTtlMs = options.negativeTtlMs ?? DEFAULT_NEGATIVE_TTL_MS;
  const negativeMax = options.negativeMax ?? max;
  const now = options.now ?? (() => new Date());
  for (const [name, value] of Object.entries({ ttlMs, max, negativeTtlMs, negativeMax })) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`createKeyVerifier: ${name} must be a positive integer`);
  }
  // With an injected clock, cache ages follow it too (tests move time instead of sleeping);
  // otherwise lru-cache keeps its monotonic clock, immune to wall-clock jumps. Read at every
  // lookup (ttlResolution 0): its default keeps a reading for 1 ms behind a timer, a timer a millisecond under load.
  const timing = { ttlResolution: 0, ...(options.now && { perf: { now: () => now().getTime() } }) };
  const found = new LRUCache<string, CachedKey>({ max, ttl: ttlMs, ...timing });
  const missing = new LRUCache<string, true>({ max: negativeMax, ttl: negativeTtlMs, ...timing });
  // One store lookup per hash at a time, however many requests carry that key.
  const inFlight = new Map<string, Promise<KeyRecord | null>>();
  const counters = { hits: 0, misses: 0, malformed: 0, evictions: 0 };
  // Bumped by every revocation; a lookup that overlapped one is used once but not cached.
  let revocationEpoch = 0;

  const unsubscribe = revocations.subscribe(function evictStaleKeys(message) {
    if (message === PLANS_CHANGED) return; // a plan's limits are read from the plan book, not cached here
    revocationEpoch++;
    counters.evictions++;
    const accountId = changedAccount(message);
    if (accountId === null) {
      found.delete(message);
      missing.delete(message);
      inFlight.delete(message);
      return;
    }
    // Suspended, reinstated, erased or moved to another plan: every cached verdict on its keys is stale.
    const stale: string[] = [];
    for (const [keyHash, cached] of found.entries()) if (cached.record.accountId === accountId) stale.push(keyHash);
    for (const keyHash of stale) found.delete(keyHash);
    inFlight.clear();
  });
  // Revocations may have been missed while the shared bus was away: forget everything cached.
  const stopResync = revocations.onResync(function forgetAllKeys() {
    revocationEpoch++;
    found.clear();
    missing.clear();
    inFlight.clear();
  });

  function lookup(keyHash: string): Promise<KeyRecord | null> {
    const pending = inFlight.get(keyHash);
    if (pending) return pending;
    const epoch = revocationEpoch;
    const promise = keys.findByHash(keyHash).then(
      (record) => {
        if (inFlight.get(keyHash) === promise) inFlight.delete(keyHash);
        if (epoch === revocationEpoch) {
          if (record) found.set(keyHash, { record, verdicts: {} });
          else missing.set(keyHash, true);
        }
        return record;
      },
      (err: unknown) => {
        if (inFlight.get(keyHash) === promise) inFlight.delete(keyHash);
        throw err;
      },
    );
    inFlight.set(keyHash, promise);
    return promise;
  }

  function hashOf(secret: string): string | null {
    if (!parseApiKey(secret)) {
      counters.malformed++;
      return null;
    }
    return keys.hash(secret);
  }

  function check(keyHash: string, environment: Environment): VerifyResult | Promise<VerifyResult> {
    const cached = found.get(keyHash);
    if (cached) {
      counters.hits++;
      // Without an expiry, a key's verdict in an environment never changes while it is cached
      // (a revocation evicts it): made once, not per request.
      if (cached.record.expiresAt === null) return (cached.verdicts[environment] ??= evaluateKey(cached.record, environment, now()));
      return evaluateKey(cached.record, environment, now());
    }
    if (missing.get(keyHash)) {
      counters.hits++;
      return { valid: false, code: 'NOT_FOUND' };
    }
    counters.misses++;
    // Usage is recorded by the gateway's authenticate step, which knows the operation called.
    return lookup(keyHash).then((record) => evaluateKey(record, environment, now()));
  }

  return {
    async verify(secret, environment) {
      const keyHash = hashOf(secret);
      return keyHash === null ? { valid: false, code: 'MALFORMED' } : check(keyHash, environment);
    },

    hashOf,
    check,

    stats() {
      return { ...counters, size: found.size + missing.size };
    },

    close() {
      unsubscribe();
      stopResync();
    },
  };
}
